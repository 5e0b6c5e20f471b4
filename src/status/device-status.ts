// The status file's device list follows the device registry as the views do: the set after each
// sync or removal, and each lock's reachability as it changes (an event, a status report, a command).
import type { DeviceRegistry, DeviceView } from '../model/device-registry.js';
import type { LockDevice } from '../model/lock-device.js';
import type { StatusPublisher } from './status-publisher.js';

export class DeviceStatusView implements DeviceView {
  /** What stops following each lock, by the lock the registry holds. */
  private readonly following = new Map<LockDevice, () => void>();

  constructor(
    private readonly registry: DeviceRegistry,
    private readonly publisher: Pick<StatusPublisher, 'devices'>,
  ) {}

  synced(): void {
    this.publish();
  }

  removed(): void {
    this.publish();
  }

  dispose(): void {
    for (const stop of this.following.values()) stop();
    this.following.clear();
  }

  private publish(): void {
    this.followLocks();
    this.publisher.devices(this.registry);
  }

  /** Follows the registry's locks, and stops following those that left. */
  private followLocks(): void {
    const locks = new Set(this.registry.locks());
    for (const [lock, stop] of this.following) {
      if (locks.has(lock)) continue;
      stop();
      this.following.delete(lock);
    }
    for (const lock of locks) {
      if (this.following.has(lock)) continue;
      let online = lock.state.online;
      this.following.set(lock, lock.onChange((change) => {
        if (change.state.online === online) return;
        online = change.state.online;
        this.publisher.devices(this.registry);
      }));
    }
  }
}
