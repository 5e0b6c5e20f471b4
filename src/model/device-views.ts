// Everything that shows the device set somewhere: HomeKit's accessory registry, and other publishers
// (Matter endpoints) that take the same wanted devices. The runtime syncs them all at once.
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import type { DeviceKind, WantedDevice } from './wanted-device.js';

export interface DevicePublisher {
  /** Makes what it shows match `wanted`; with `sweep`, removes whatever is not wanted. */
  sync(wanted: readonly WantedDevice[], sweep: boolean): void;
  /** Removes one device at run time (a lock_user_remove). */
  remove(kind: DeviceKind, id: string): void;
  /** Shutdown: timers and handlers go; what is published stays for the next run. */
  disposeAll(): void;
}

/**
 * HomeKit's registry first, as before; then every other publisher, each guarded, because a failing
 * extra must never cost HomeKit its accessories or crash Homebridge.
 */
export class Publishers implements DevicePublisher {
  private readonly others: DevicePublisher[] = [];

  constructor(
    private readonly primary: DevicePublisher,
    private readonly log: Logger,
  ) {}

  add(publisher: DevicePublisher): void {
    this.others.push(publisher);
  }

  sync(wanted: readonly WantedDevice[], sweep: boolean): void {
    this.primary.sync(wanted, sweep);
    this.each('show the devices', (publisher) => {
      publisher.sync(wanted, sweep);
    });
  }

  remove(kind: DeviceKind, id: string): void {
    this.primary.remove(kind, id);
    this.each(`remove ${kind} ${id}`, (publisher) => {
      publisher.remove(kind, id);
    });
  }

  disposeAll(): void {
    this.primary.disposeAll();
    this.each('stop', (publisher) => {
      publisher.disposeAll();
    });
  }

  private each(what: string, run: (publisher: DevicePublisher) => void): void {
    for (const publisher of this.others) {
      try {
        run(publisher);
      } catch (error) {
        this.log.error(`A device publisher could not ${what} (${errorText(error)}); HomeKit is not affected.`);
      }
    }
  }
}
