// What a Matter endpoint set follows: the device's feed of applied changes, never a second copy of
// its state. A source gives the endpoint plans for the state the device holds now, tells when that
// state changed (or the doorbell rang), and supplies the command handlers.
import type { DoorbellFeed, LockFeed } from '../model/device-feeds.js';
import type { LockAction } from '../model/lock-commands.js';
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

export interface LockSourceOptions {
  id: string;
  doorSensor: boolean;
  doorSensorOnly?: boolean;
  command: MatterLockCommand;
}

export function lockSource(lock: LockFeed, options: LockSourceOptions): MatterSource {
  const view = () => ({ id: options.id, name: lock.name, doorSensor: options.doorSensor, doorSensorOnly: options.doorSensorOnly });
  return {
    device: `lock:${options.id}`,
    plans: () => lockEndpoints(view(), lock.state),
    follow: (follower) =>
      lock.onChange(() => {
        follower.change();
      }),
    handlers: (plan) =>
      plan.deviceType === 'DoorLock'
        ? { doorLock: { lockDoor: () => options.command('lock'), unlockDoor: () => options.command('unlock') } }
        : undefined,
  };
}

/**
 * A doorbell. Motion is on from an applied motion event until the accessory's motion timeout ends
 * it; a source made while motion is on (after a config change) starts with it off, as a restart does.
 */
export function doorbellSource(doorbell: DoorbellFeed, view: MatterDoorbellView): MatterSource {
  let motion = false;
  return {
    device: `doorbell:${view.id}`,
    plans: () => doorbellEndpoints(view, motion),
    follow: (follower) =>
      doorbell.onChange((change) => {
        // Only rings and motion reach Matter; a late, repeated or older event did neither.
        if (change.cause === 'motionEnded') {
          motion = false;
          follower.change();
        } else if (change.ring) {
          follower.ring();
        } else if (change.motion) {
          motion = true;
          follower.change();
        }
      }),
    handlers: () => undefined,
  };
}
