// The lock guard as HomeKit shows it: a "Left Open" and a "Left Unlocked" contact sensor (Home can
// notify when they trip), and AutoSecurityTimeout on LockManagement, which shows the auto-lock
// delay and lets Eve and other apps change it. The guard itself runs in the lock device.
import type { API, PlatformAccessory } from 'homebridge';

import type { GuardAlerts } from '../model/device-changes.js';
import type { LockDevice } from '../model/lock-device.js';
import { ensureService, findService } from './services.js';

export const LEFT_OPEN_SUBTYPE = 'left-open';
export const LEFT_UNLOCKED_SUBTYPE = 'left-unlocked';

export class GuardView {
  private name = '';

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly device: LockDevice,
  ) {}

  /** Services follow the entry. */
  converge(name: string): void {
    this.name = name;
    const { entry } = this.device;
    const { Service: S, Characteristic: C } = this.api.hap;
    ensureService(this.accessory, S.ContactSensor, (entry.leftOpenSeconds ?? 0) > 0, `${name} Left Open`, LEFT_OPEN_SUBTYPE);
    ensureService(this.accessory, S.ContactSensor, (entry.leftUnlockedSeconds ?? 0) > 0, `${name} Left Unlocked`, LEFT_UNLOCKED_SUBTYPE);
    const management = findService(this.accessory, S.LockManagement);
    if (management) {
      const timeout = management.getCharacteristic(C.LockManagementAutoSecurityTimeout);
      timeout.onSet((value) => {
        this.device.setAutoLockSeconds(Number(value), 'HomeKit');
      });
      timeout.updateValue(this.device.autoLockSeconds());
    }
    this.render(this.device.alerts);
  }

  render(alerts: GuardAlerts): void {
    const { Service: S, Characteristic: C } = this.api.hap;
    const show = (subtype: string, on: boolean, label: string) => {
      const service = findService(this.accessory, S.ContactSensor, subtype);
      if (!service) return;
      service.updateCharacteristic(C.Name, label);
      service.updateCharacteristic(C.ContactSensorState, on ? C.ContactSensorState.CONTACT_NOT_DETECTED : C.ContactSensorState.CONTACT_DETECTED);
    };
    show(LEFT_OPEN_SUBTYPE, alerts.leftOpen, `${this.name} Left Open`);
    show(LEFT_UNLOCKED_SUBTYPE, alerts.leftUnlocked, `${this.name} Left Unlocked`);
  }
}
