// What a view of a device follows: its applied changes, and (for a lock) its state, its name and a
// way to send it a command. HomeKit owns these today; Matter and the status file depend only on
// this shape, never on the HomeKit classes, so either view can change without the other.
import type { ChangeListener } from './change-listeners.js';
import type { DoorbellState } from './doorbell-state.js';
import type { DoorbellEvent, LockEvent } from './events.js';
import type { LockAction } from './lock-commands.js';
import type { LockState } from './lock-state.js';

/** An applied change: a callback event the reducer took, or a remote command that succeeded. */
export type LockChange = { cause: 'event'; state: LockState; event: LockEvent } | { cause: 'command'; state: LockState; action: LockAction };

export type DoorbellChange =
  | { cause: 'event'; state: DoorbellState; event: DoorbellEvent; ring: boolean; motion: boolean }
  | { cause: 'motionEnded'; state: DoorbellState };

export interface LockFeed {
  readonly state: LockState;
  readonly name: string;
  onChange(listener: ChangeListener<LockChange>): () => void;
  /** Runs a remote command through the lock's one command queue; `origin` says who asked. */
  command(action: LockAction, origin: string): Promise<void>;
}

export interface DoorbellFeed {
  onChange(listener: ChangeListener<DoorbellChange>): () => void;
}
