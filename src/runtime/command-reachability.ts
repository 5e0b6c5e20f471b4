// A command that succeeds proves an offline bridge reachable, and the lock accessory
// clears "No Response" itself. Events reach the status file through the router; a command does not,
// so this follower tells the status file when a command changed a lock's reachability.
import type { LockChange } from '../homekit/lock-accessory.js';
import type { DevicePublisher } from './device-publisher.js';
import type { DeviceKind, WantedDevice } from './wanted-device.js';

/** What the follower needs of a lock: its state and its changes. */
export interface FollowedLock {
  readonly state: { readonly online: boolean };
  onChange(listener: (change: LockChange) => void): () => void;
}

export interface CommandReachabilityOptions {
  lock(id: string): FollowedLock | undefined;
  /** A command brought a lock back online (or the reverse): publish the device list again. */
  reachabilityChanged(lockId: string): void;
}

export class CommandReachability implements DevicePublisher {
  private readonly following = new Map<string, () => void>();

  constructor(private readonly options: CommandReachabilityOptions) {}

  sync(wanted: readonly WantedDevice[], sweep: boolean): void {
    const locks = new Set(wanted.filter((device) => device.kind === 'lock').map((device) => device.id));
    for (const id of locks) if (!this.following.has(id)) this.follow(id);
    if (sweep) for (const id of [...this.following.keys()]) if (!locks.has(id)) this.remove('lock', id);
  }

  remove(kind: DeviceKind, id: string): void {
    if (kind !== 'lock') return;
    this.following.get(id)?.();
    this.following.delete(id);
  }

  disposeAll(): void {
    for (const stop of this.following.values()) stop();
    this.following.clear();
  }

  private follow(id: string): void {
    const lock = this.options.lock(id);
    if (!lock) return;
    let online = lock.state.online;
    this.following.set(
      id,
      lock.onChange((change) => {
        const was = online;
        online = change.state.online;
        if (change.cause === 'command' && online !== was) this.options.reachabilityChanged(id);
      }),
    );
  }
}
