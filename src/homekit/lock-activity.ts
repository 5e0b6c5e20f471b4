// A lock's activity on its accessory (who operated it and how, and when its door opened):
// LockManagement with the last action, a switch per person that the lock device's triggers press,
// and the door's history for the Eve app. Everything shown is the lock's state; the lock accessory
// binds these parts and hands over each change.
import type { API, Characteristic, PlatformAccessory, Service } from 'homebridge';

import { EveDoorHistory } from './eve-door-service.js';
import type { LockChange } from '../model/device-changes.js';
import type { LockDevice } from '../model/lock-device.js';
import { bindLockManagement, showLastAction } from './lock-management-service.js';
import { bindPersonSwitch, pressPersonSwitch } from './person-switches.js';

export class LockActivity {
  private readonly eve: EveDoorHistory;
  /** LockLastKnownAction of the management part bound in this pass; none without one. */
  private lastAction: Characteristic | undefined;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly device: LockDevice,
  ) {
    this.eve = new EveDoorHistory(api, accessory, device);
  }

  /** A binding pass starts: only what it binds is shown. */
  startPass(): void {
    this.lastAction = undefined;
  }

  /** The management part: LockManagement showing the last action. */
  bindManagement(name: string): Service {
    const service = bindLockManagement(this.api, this.accessory, name);
    this.lastAction = service.getCharacteristic(this.api.hap.Characteristic.LockLastKnownAction);
    this.showLastAction();
    return service;
  }

  /** The door part's history, beside its contact sensor. */
  bindDoorHistory(contact: Service): Service {
    return this.eve.bind(contact, this.device.name);
  }

  /** A person part: their switch and the label that orders the switches. */
  bindPerson(person: { userId: string; name: string; index: number }): Service[] {
    return bindPersonSwitch(this.api, this.accessory, person);
  }

  /** An applied event of this lock: the last action, a person's trigger, the door's history. */
  apply(change: Extract<LockChange, { cause: 'event' }>): void {
    const { event, trigger } = change;
    if (event.kind === 'lockState') this.showLastAction();
    if (event.kind === 'doorState') this.eve.render();
    if (trigger) pressPersonSwitch(this.api, this.accessory, trigger.userId, trigger.press);
  }

  /** A lock or unlock from Apple Home (or the plugin's own auto-lock) went through. */
  commandSucceeded(): void {
    this.showLastAction();
  }

  private showLastAction(): void {
    if (this.lastAction) showLastAction(this.api, this.lastAction, this.device.state.lastAction);
  }
}
