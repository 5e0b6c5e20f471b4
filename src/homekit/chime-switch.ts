// The doorbell's chime switch: "<doorbell> Chime", On by default and kept across restarts. While it
// is Off a press is still recorded (event log, settings page), but no phone or HomePod rings and no
// Matter press is sent; motion and pictures are unchanged. Home automations can turn it off at
// night. Turning it On again rings nothing belatedly: a press is rung when it arrives or never.
import type { API, PlatformAccessory } from 'homebridge';

import type { Logger } from '../util/logger.js';
import { acquireService } from './services.js';

export const CHIME_SUBTYPE = 'chime';
const CHIME_CONTEXT_KEY = 'lockAccessChime';

export class ChimeSwitch {
  private name = '';

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly log: Logger,
  ) {}

  /** Whether a press rings (On unless the user turned it off). */
  get on(): boolean {
    return (this.accessory.context as Record<string, unknown>)[CHIME_CONTEXT_KEY] !== false;
  }

  converge(name: string): void {
    this.name = name;
    const { Service: S, Characteristic: C } = this.api.hap;
    const service = acquireService(this.accessory, S.Switch, `${name} Chime`, CHIME_SUBTYPE);
    service.updateCharacteristic(C.Name, `${name} Chime`);
    service.updateCharacteristic(C.On, this.on);
    service.getCharacteristic(C.On).onSet((value) => {
      this.set(value === true || value === 1);
    });
  }

  private set(on: boolean): void {
    if (on === this.on) return;
    (this.accessory.context as Record<string, unknown>)[CHIME_CONTEXT_KEY] = on;
    // Kept across restarts: Homebridge's accessory cache holds the context.
    this.api.updatePlatformAccessories([this.accessory]);
    this.log.info(`${this.name}: chime ${on ? 'on: presses ring again' : 'off: presses are recorded but ring no phone or HomePod'}.`);
  }
}
