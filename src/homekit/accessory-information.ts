// AccessoryInformation for every device: manufacturer, model, serial (device id), firmware (plugin version).
import type { API, PlatformAccessory } from 'homebridge';

import { MANUFACTURER } from '../settings.js';
import { pluginVersion } from '../util/plugin-version.js';

export { pluginVersion } from '../util/plugin-version.js';

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
