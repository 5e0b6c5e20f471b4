// LockManagement on a lock accessory: Version "1.0", a LockControlPoint that accepts and ignores
// commands (the service has no lock logs or settings to offer), and LockLastKnownAction.
import type { API, Characteristic, PlatformAccessory, Service } from 'homebridge';

import type { LastAction } from '../model/last-action.js';
import { acquireService, showValue } from './services.js';

export const LOCK_MANAGEMENT_VERSION = '1.0';

/** Binds the service (created when the cached accessory lacks it). */
export function bindLockManagement(api: API, accessory: PlatformAccessory, name: string): Service {
  const { Service: S, Characteristic: C } = api.hap;
  const service = acquireService(accessory, S.LockManagement, name);
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

/** The model's word for the last operation, by the name of HomeKit's LockLastKnownAction value. */
const HAP_LAST_ACTION = {
  securedByKeypad: 'SECURED_BY_KEYPAD',
  unsecuredByKeypad: 'UNSECURED_BY_KEYPAD',
  securedRemotely: 'SECURED_REMOTELY',
  unsecuredRemotely: 'UNSECURED_REMOTELY',
  securedPhysically: 'SECURED_PHYSICALLY',
  unsecuredPhysically: 'UNSECURED_PHYSICALLY',
  securedByAutoLock: 'SECURED_BY_AUTO_SECURE_TIMEOUT',
} as const satisfies Record<LastAction, string>;

/** The model's word for the last operation as HomeKit's LockLastKnownAction value. */
export function lastKnownAction(api: API, action: LastAction): number {
  return api.hap.Characteristic.LockLastKnownAction[HAP_LAST_ACTION[action]];
}

/** Sets LockLastKnownAction to the lock's last operation (left alone before the first one). */
export function showLastAction(api: API, characteristic: Characteristic, action: LastAction | undefined): void {
  if (action !== undefined) showValue(characteristic, lastKnownAction(api, action));
}
