// AccessoryInformation for every device: manufacturer, model, serial (device id), firmware (plugin version).
import { readFileSync } from 'node:fs';

import type { API, PlatformAccessory } from 'homebridge';

import { MANUFACTURER } from '../settings.js';

let cachedVersion: string | undefined;

/** The plugin's version from package.json, reduced to the x.y.z HomeKit accepts as a firmware revision. */
export function pluginVersion(): string {
  if (cachedVersion === undefined) {
    // src/homekit/ and dist/homekit/ both sit two levels below the package root.
    const raw: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version = typeof raw === 'object' && raw !== null && 'version' in raw && typeof raw.version === 'string' ? raw.version : '0.0.0';
    cachedVersion = /^\d+\.\d+\.\d+/.exec(version)?.[0] ?? '0.0.0';
  }
  return cachedVersion;
}

export function setAccessoryInformation(api: API, accessory: PlatformAccessory, info: { model: string; serial: string; name: string }): void {
  const { Characteristic, Service } = api.hap;
  const service = accessory.getService(Service.AccessoryInformation) ?? accessory.addService(Service.AccessoryInformation);
  service
    .setCharacteristic(Characteristic.Manufacturer, MANUFACTURER)
    .setCharacteristic(Characteristic.Model, info.model)
    .setCharacteristic(Characteristic.SerialNumber, info.serial)
    .setCharacteristic(Characteristic.FirmwareRevision, pluginVersion())
    .setCharacteristic(Characteristic.Name, info.name);
}
