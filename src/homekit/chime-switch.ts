// The doorbell's chime switch: "<doorbell> Chime", a view of the doorbell device's chime. Home
// automations can turn it off at night; what Off means (recorded, never rung) is the device's rule.
import type { API, PlatformAccessory } from 'homebridge';

import type { DoorbellDevice } from '../model/doorbell-device.js';
import { acquireService, findService } from './services.js';

export const CHIME_SUBTYPE = 'chime';

export function convergeChimeSwitch(api: API, accessory: PlatformAccessory, device: DoorbellDevice, name: string): void {
  const { Service: S, Characteristic: C } = api.hap;
  const service = acquireService(accessory, S.Switch, `${name} Chime`, CHIME_SUBTYPE);
  service.updateCharacteristic(C.Name, `${name} Chime`);
  service.updateCharacteristic(C.On, device.chimeOn);
  service.getCharacteristic(C.On).onSet((value) => {
    device.setChime(value === true || value === 1);
  });
}

export function renderChimeSwitch(api: API, accessory: PlatformAccessory, on: boolean): void {
  findService(accessory, api.hap.Service.Switch, CHIME_SUBTYPE)?.updateCharacteristic(api.hap.Characteristic.On, on);
}
