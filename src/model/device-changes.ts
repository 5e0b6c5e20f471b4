// What a view of a device follows: its changes, its state, its name and (for a lock) a way to send
// it a command. HomeKit, Matter and the status file depend only on this shape, never on each other.
import type { ChangeListener, ListenerPhase } from './change-listeners.js';
import type { DoorbellState } from './doorbell-state.js';
import type { DeliveryContext } from './event-time.js';
import type { DoorbellEvent, LockEvent } from './events.js';
import type { LockAction } from './lock-commands.js';
import type { LockState } from './lock-state.js';
import type { Trigger } from './person-triggers.js';

/** The guard's alerts: the door left open, the lock left unlocked, each past its delay. */
export interface GuardAlerts {
  leftOpen: boolean;
  leftUnlocked: boolean;
}

export type LockChange =
  /**
   * A callback event the reducer took. `byAutoLock`: the lock callback that follows the plugin's own
   * auto-lock. `trigger`: a person's automation trigger fires (once per real event).
   */
  | { cause: 'event'; state: LockState; event: LockEvent; context: DeliveryContext; byAutoLock: boolean; trigger?: Trigger | undefined }
  /** A callback event older than the last of its kind: it changed nothing. */
  | { cause: 'stale'; state: LockState; event: LockEvent; context: DeliveryContext; byAutoLock: boolean }
  /** A remote command succeeded. `settled`: no newer wish waits, so the target settles on this state. */
  | { cause: 'command'; state: LockState; action: LockAction; origin: string; settled: boolean }
  /** A remote command failed (already logged). `superseded`: a newer wish waits, so the target stays. */
  | { cause: 'commandFailed'; state: LockState; action: LockAction; origin: string; superseded: boolean }
  /** Config or discovery changed the entry (name, door sensor, people, guard delays). */
  | { cause: 'entry'; state: LockState }
  /** The guard's alerts changed. */
  | { cause: 'alerts'; state: LockState; alerts: GuardAlerts };

export type DoorbellChange =
  /**
   * `ring` and `motion` say what the event does now: false for a late, repeated or older one, or a
   * press while the chime is off (`muted`). `recording`: a new recording became available (its
   * details are `state.lastVideo`); false for a redelivered or older one.
   */
  | { cause: 'event'; state: DoorbellState; event: DoorbellEvent; ring: boolean; motion: boolean; muted: boolean; recording: boolean; snapshot?: { url: string; fallbackUrl?: string } }
  | { cause: 'motionEnded'; state: DoorbellState }
  | { cause: 'chime'; state: DoorbellState; on: boolean }
  | { cause: 'entry'; state: DoorbellState };

export interface LockFeed {
  readonly state: LockState;
  readonly name: string;
  /** `phase` 'model' is for the model's own rules: they hear a change before the views. */
  onChange(listener: ChangeListener<LockChange>, phase?: ListenerPhase): () => void;
  /** Runs a remote command through the lock's one command queue; `origin` says who asked. */
  command(action: LockAction, origin: string): Promise<void>;
}

export interface DoorbellFeed {
  readonly state: DoorbellState;
  /** Motion seen and its timeout not over yet. */
  readonly motion: boolean;
  onChange(listener: ChangeListener<DoorbellChange>, phase?: ListenerPhase): () => void;
}
