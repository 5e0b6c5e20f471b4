// What a Matter endpoint set follows: the device's feed of applied changes, never a second copy of
// its state. A source gives the endpoint plans for the state the device holds now, tells when that
// state changed (or the doorbell rang), and supplies the command handlers.
import type { DoorbellFeed, LockFeed } from '../model/device-changes.js';
import type { LockAction } from '../model/lock-commands.js';
import type { LockEntry } from '../model/device-entry.js';
import { doorbellEndpoints, lockEndpoints, type EndpointPlan, type MatterDoorbellView } from './matter-endpoints.js';
import type { MatterHandlers } from './matter-publisher.js';

export interface MatterFollower {
  /** The state behind the plans changed. */
  change(): void;
  /** The doorbell rang in HomeKit (after dedupe and the 60 s age rule). */
  ring(): void;
}

export interface MatterSource {
  /** `lock:<id>` or `doorbell:<id>`. */
  readonly device: string;
  plans(): EndpointPlan[];
  follow(follower: MatterFollower): () => void;
  handlers(plan: EndpointPlan): MatterHandlers | undefined;
}

/** Runs a lock command for a Matter controller; rejects with the error Matter should answer with. */
export type MatterLockCommand = (action: LockAction) => Promise<void>;

/** A lock as Matter follows it: its feed, and its entry (its settings decide its parts). */
export type MatterLock = LockFeed & { readonly entry: Readonly<LockEntry> };

export function lockSource(lock: MatterLock, command: MatterLockCommand): MatterSource {
  const view = () => ({ ...lock.entry, name: lock.name });
  return {
    device: `lock:${lock.entry.id}`,
    plans: () => lockEndpoints(view(), lock.state),
    follow: (follower) =>
      lock.onChange((change) => {
        // Only what moved the state reaches Matter: a stale event, a failed command or an alert did not.
        if (change.cause === 'event' || change.cause === 'command' || change.cause === 'entry') follower.change();
      }),
    handlers: (plan) =>
      plan.deviceType === 'DoorLock'
        ? { doorLock: { lockDoor: () => command('lock'), unlockDoor: () => command('unlock') } }
        : undefined,
  };
}

/** A doorbell. Motion is the device's: on from an applied motion event until its timeout ends it. */
export function doorbellSource(doorbell: DoorbellFeed, view: MatterDoorbellView): MatterSource {
  return {
    device: `doorbell:${view.id}`,
    plans: () => doorbellEndpoints(view, doorbell.motion),
    follow: (follower) =>
      doorbell.onChange((change) => {
        // Only rings and motion reach Matter; a late, repeated or older event, or a muted press, did neither.
        if (change.cause === 'motionEnded') follower.change();
        else if (change.cause === 'event' && change.ring) follower.ring();
        else if (change.cause === 'event' && change.motion) follower.change();
      }),
    handlers: () => undefined,
  };
}
