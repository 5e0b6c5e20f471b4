// The lock guard as HomeKit shows it: a "Left Open" and a "Left Unlocked" contact sensor (Home can
// notify when they trip), and AutoSecurityTimeout on LockManagement, which shows the auto-lock
// delay and lets Eve and other apps change it. The guard itself runs in the lock device.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { GuardAlerts } from '../model/device-changes.js';
import type { LockDevice } from '../model/lock-device.js';
import { acquireService } from './services.js';

export const LEFT_OPEN_SUBTYPE = 'left-open';
export const LEFT_UNLOCKED_SUBTYPE = 'left-unlocked';

const ALERT_OF = { [LEFT_OPEN_SUBTYPE]: 'leftOpen', [LEFT_UNLOCKED_SUBTYPE]: 'leftUnlocked' } as const;
type AlertSubtype = keyof typeof ALERT_OF;

export class GuardView {
  /** The alert sensors bound by the last pass. */
  private readonly sensors = new Map<AlertSubtype, Service>();

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly device: LockDevice,
  ) {}

  /** A new pass of the lock's parts begins: sensors it does not bind again are gone. */
  startPass(): void {
    this.sensors.clear();
  }

  /** A "left open" or "left unlocked" part. */
  bindAlert(subtype: AlertSubtype, name: string): Service {
    const { Characteristic: C } = this.api.hap;
    const service = acquireService(this.accessory, this.api.hap.Service.ContactSensor, name, subtype);
    service.updateCharacteristic(C.Name, name);
    this.sensors.set(subtype, service);
    this.render(this.device.alerts);
    return service;
  }

  /** The auto-lock delay on the management part. */
  bindTimeout(management: Service): void {
    const timeout = management.getCharacteristic(this.api.hap.Characteristic.LockManagementAutoSecurityTimeout);
    timeout.onSet((value) => {
      this.device.setAutoLockSeconds(Number(value), 'HomeKit');
    });
    timeout.updateValue(this.device.autoLockSeconds());
  }

  render(alerts: GuardAlerts): void {
    const C = this.api.hap.Characteristic;
    for (const [subtype, service] of this.sensors) {
      const on = alerts[ALERT_OF[subtype]];
      service.updateCharacteristic(C.ContactSensorState, on ? C.ContactSensorState.CONTACT_NOT_DETECTED : C.ContactSensorState.CONTACT_DETECTED);
    }
  }
}
