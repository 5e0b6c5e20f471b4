// One doorbell's truth: its state, the presses and motion applied to it, how long motion lasts,
// whether the chime rings, and what it keeps across restarts. HomeKit and Matter follow its changes.
//
// The chime is On by default. While it is Off a press is still recorded (event log, settings page)
// but rings nothing anywhere; turning it On again rings nothing belatedly: a press rings when it
// arrives or never.
import type { Clock } from '../util/clock.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import { ChangeListeners, type ChangeListener, type ListenerPhase } from './change-listeners.js';
import type { DoorbellChange, DoorbellFeed } from './device-changes.js';
import type { DoorbellEntry } from './device-entry.js';
import type { DeviceStore } from './device-store.js';
import { initialDoorbellState, parseDoorbellState, reduceDoorbell, repairDoorbellMarks, type DoorbellState } from './doorbell-state.js';
import type { DeliveryContext } from './event-time.js';
import type { DoorbellEvent } from './events.js';

export interface DoorbellDeviceDeps {
  log: Logger;
  store: DeviceStore;
  clock: Clock;
}

/** Where the state and the chime switch are kept (keys that predate the model, so saved values carry over). */
export const DOORBELL_STATE_KEY = 'lockAccessDoorbell';
export const CHIME_KEY = 'lockAccessChime';

export class DoorbellDevice implements DoorbellFeed {
  private current: DoorbellState;
  private entryValue: DoorbellEntry;
  private readonly changes: ChangeListeners<DoorbellChange>;
  /** Every line this doorbell logs, prefixed with its name. */
  readonly log: Logger;
  private motionTimer: unknown;
  private disposed = false;

  constructor(
    private readonly deps: DoorbellDeviceDeps,
    entry: DoorbellEntry,
  ) {
    this.entryValue = { ...entry };
    const stored = deps.store.read(DOORBELL_STATE_KEY);
    const cached = parseDoorbellState(stored);
    this.log = deviceLogger(deps.log, () => this.entryValue.name);
    if (stored !== undefined && !cached) this.log.warn('the saved state could not be read, so it starts fresh.');
    this.current = cached === undefined ? initialDoorbellState() : repairDoorbellMarks(cached, deps.clock.now());
    this.changes = new ChangeListeners(this.log);
    this.store();
  }

  get state(): DoorbellState {
    return this.current;
  }

  get entry(): Readonly<DoorbellEntry> {
    return this.entryValue;
  }

  get name(): string {
    return this.entryValue.name;
  }

  /** Motion seen and its timeout not over yet (never across a restart: its timer is gone). */
  get motion(): boolean {
    return this.motionTimer !== undefined;
  }

  /** How long motion lasts once seen: a view's work for one motion (loading its still) fits in it. */
  get motionWindowMs(): number {
    return this.entryValue.motionTimeoutSeconds * 1000;
  }

  /** The newest recording's id while it became available less than a motion window ago: still worth offering to a hub. */
  get freshRecording(): string | undefined {
    const video = this.current.lastVideo;
    if (video?.availableAt === undefined) return undefined;
    return this.deps.clock.now() - video.availableAt < this.motionWindowMs ? video.dvrId : undefined;
  }

  /** Whether a press rings (On unless the user turned it off). */
  get chimeOn(): boolean {
    return this.deps.store.read(CHIME_KEY) !== false;
  }

  onChange(listener: ChangeListener<DoorbellChange>, phase?: ListenerPhase): () => void {
    return this.changes.add(listener, phase);
  }

  apply(event: DoorbellEvent, context: DeliveryContext): void {
    if (this.disposed) return;
    if (event.doorbellId !== this.entryValue.id) {
      this.log.debug(`ignored an event for another doorbell (${event.doorbellId}).`);
      return;
    }
    const reduced = reduceDoorbell(this.current, event, context);
    this.current = reduced.state;
    const muted = reduced.ring && !this.chimeOn;
    const ring = reduced.ring && !muted;
    if (reduced.motion) this.startMotion();
    const snapshot = reduced.snapshotUrl === undefined ? {} : { snapshot: { url: reduced.snapshotUrl, ...(reduced.snapshotFallbackUrl === undefined ? {} : { fallbackUrl: reduced.snapshotFallbackUrl }) } };
    this.changes.emit({ cause: 'event', state: this.current, event, ring, motion: reduced.motion, muted, recording: reduced.recording === true, ...snapshot });
    // After the views have rung: a log line is a synchronous write that can wait on a slow reader.
    if (ring) this.log.info(`doorbell pressed.`);
    else if (muted) this.log.info(`doorbell pressed; the chime is off, so no phone or HomePod rings.`);
    else if (reduced.motion) this.log.info(`motion detected.`);
    else if (reduced.quietReason !== undefined) this.log.info(`${reduced.text}, but ${reduced.quietReason}, so no phone is notified.`);
    else this.log.info(`${reduced.text}.`);
    this.store();
  }

  update(entry: DoorbellEntry): void {
    if (this.disposed) return;
    this.entryValue = { ...entry };
    this.store();
    this.changes.emit({ cause: 'entry', state: this.current });
  }

  /** The user switched the chime (from a Home automation, say): kept across restarts. */
  setChime(on: boolean): void {
    if (this.disposed || on === this.chimeOn) return;
    this.deps.store.write(CHIME_KEY, on, 'now');
    this.log.info(`chime ${on ? 'on: presses ring again' : 'off: presses are recorded but ring no phone or HomePod'}.`);
    this.changes.emit({ cause: 'chime', state: this.current, on });
  }

  dispose(): void {
    this.disposed = true;
    if (this.motionTimer !== undefined) this.deps.clock.clearTimeout(this.motionTimer);
    this.motionTimer = undefined;
    this.changes.clear();
    this.deps.store.dispose();
  }

  /** New motion restarts the countdown. */
  private startMotion(): void {
    if (this.motionTimer !== undefined) this.deps.clock.clearTimeout(this.motionTimer);
    this.motionTimer = this.deps.clock.setTimeout(() => {
      this.motionTimer = undefined;
      this.changes.emit({ cause: 'motionEnded', state: this.current });
    }, this.motionWindowMs);
  }

  private store(): void {
    this.deps.store.write(DOORBELL_STATE_KEY, this.current, 'batched');
  }
}
