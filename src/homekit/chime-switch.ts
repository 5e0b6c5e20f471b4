// The doorbell's chime switch: "<doorbell> Chime", a view of the doorbell device's chime. Home
// automations can turn it off at night; what Off means (recorded, never rung) is the device's rule.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { DoorbellDevice } from '../model/doorbell-device.js';
import { acquireService, findService } from './services.js';

export const CHIME_SUBTYPE = 'chime';

/** The chime's switch named `label`, bound to the device's chime. */
export function convergeChimeSwitch(api: API, accessory: PlatformAccessory, device: DoorbellDevice, label: string): Service {
  const { Service: S, Characteristic: C } = api.hap;
  const service = acquireService(accessory, S.Switch, label, CHIME_SUBTYPE);
  service.updateCharacteristic(C.Name, label);
  service.updateCharacteristic(C.On, device.chimeOn);
  service.getCharacteristic(C.On).onSet((value) => {
    device.setChime(value === true || value === 1);
  });
  return service;
}

export function renderChimeSwitch(api: API, accessory: PlatformAccessory, on: boolean): void {
  findService(accessory, api.hap.Service.Switch, CHIME_SUBTYPE)?.updateCharacteristic(api.hap.Characteristic.On, on);
}
