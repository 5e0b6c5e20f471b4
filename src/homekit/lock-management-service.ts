// LockManagement on a lock accessory: Version "1.0", a LockControlPoint that accepts and ignores
// commands (the service has no lock logs or settings to offer), and LockLastKnownAction.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { LastActionValue } from '../model/last-action.js';
import { ensureService, findService } from './services.js';

export const LOCK_MANAGEMENT_VERSION = '1.0';

/** Acquires (wanted) or prunes the service. */
export function convergeLockManagement(api: API, accessory: PlatformAccessory, wanted: boolean, name: string): Service | undefined {
  const { Service: S, Characteristic: C } = api.hap;
  const service = ensureService(accessory, S.LockManagement, wanted, `${name} Management`);
  if (!service) return undefined;
  service.updateCharacteristic(C.Version, LOCK_MANAGEMENT_VERSION);
  // A write must succeed, or Home reports an error; there is nothing for it to do.
  service.getCharacteristic(C.LockControlPoint).onSet(() => undefined);
  // Part of the service from its first publication (also added to a cached accessory of an earlier
  // version): HomeKit controllers cache the accessory database and never see a characteristic that
  // is added later. Until the first operation it reads HAP's starting value, 0 ("secured
  // physically, interior"), which HomeKit has no "unknown" for.
  service.getCharacteristic(C.LockLastKnownAction);
  return service;
}

/** Sets LockLastKnownAction to the last applied lock operation. */
export function showLastAction(api: API, accessory: PlatformAccessory, value: LastActionValue): void {
  const { Service: S, Characteristic: C } = api.hap;
  findService(accessory, S.LockManagement)?.getCharacteristic(C.LockLastKnownAction).updateValue(value);
}
