// The lock guards the door: auto-lock once the door is really closed, and "left open" / "left
// unlocked" alerts. It follows the lock's applied changes and sends commands through the lock's one
// command queue; timers come from an injected clock, so every countdown is tested without waiting.
//
// Safety of auto-lock: "lock" is sent only while the lock is known unlocked, the door known closed
// and the lock's bridge online, checked again at the moment of sending, and never while another
// command is on its way (it would run after it). Anything else (the door open, ajar or unknown, any
// lock event, a command asked for from Apple Home or Matter, the bridge going offline) cancels the
// countdown; a new one starts from the moment the conditions hold again.
//
// Fresh facts only: the door position must have happened since the plugin last could have missed a
// change. After a start (the door may have opened while Homebridge was down, and a saved "open" can
// be lost), after the bridge comes back online (door events could not reach the service meanwhile),
// after a door `init` or `unknown` report and after events resume from "not arriving", the saved
// position is shown but not acted on until a door report whose own event time lies after that
// moment: the service retries for a day and signs each retry anew, so an old "closed" arrives
// looking new. A report without an event time counts by its arrival. door-freshness.ts compares the
// moments.
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { GuardAlerts, LockChange, LockFeed } from './device-changes.js';
import type { LockEntry } from './device-entry.js';
import { DoorFreshness } from './door-freshness.js';
import type { LockEvent } from './events.js';
import { doorSensorDeclared } from './lock-parts.js';
import { eventTimes, type LockState } from './lock-state.js';

export type { GuardAlerts } from './device-changes.js';

export interface GuardSettings {
  /** Whether the lock has a door sensor: without one, auto-lock never runs. */
  doorSensor: boolean;
  /** 0: off. */
  autoLockSeconds: number;
  leftOpenSeconds: number;
  leftUnlockedSeconds: number;
}

/** The guard's settings from the lock's entry; `autoLockSeconds`: the delay in force (HomeKit may have changed it). */
export function guardSettings(entry: LockEntry, autoLockSeconds: number): GuardSettings {
  return { doorSensor: doorSensorDeclared(entry), autoLockSeconds, leftOpenSeconds: entry.leftOpenSeconds ?? 0, leftUnlockedSeconds: entry.leftUnlockedSeconds ?? 0 };
}

/** What of an entry the guard depends on, as one string: a change restarts its countdowns. */
export function guardSettingsKey(entry: LockEntry): string {
  return JSON.stringify([guardSettings(entry, entry.autoLockSeconds ?? 0)]);
}

/** Who the auto-lock's commands are from, as the lock's change feed and log lines say it. */
export const AUTO_LOCK_ORIGIN = 'auto-lock';
/** A failed auto-lock is tried once more this much later, if the conditions still hold. */
export const AUTO_LOCK_RETRY_MS = 30_000;

export function autoLockMayRun(state: LockState, settings: GuardSettings): boolean {
  return settings.doorSensor && settings.autoLockSeconds > 0 && state.lock === 'unlocked' && state.door === 'closed' && state.online;
}

const doorLeftOpen = (state: LockState) => state.door === 'open' || state.door === 'ajar';

export interface LockGuardDeps {
  lock: LockFeed;
  settings(): GuardSettings;
  clock: Clock;
  log: Logger;
  /** The alerts changed (the "Left Open" / "Left Unlocked" sensors follow). */
  onAlerts(alerts: GuardAlerts): void;
  /** Whether a command to the lock is running or waiting: an auto-lock would be queued behind it. */
  commandPending(): boolean;
  /** The plugin sent its own auto-lock, the door closed for `closedSeconds`: the lock callback that follows is attributed to it. */
  onAutoLockSent?(at: number, closedSeconds: number): void;
}

/** Whether an applied event may have missed door changes before it, or reports the door's position. */
function doorFreshness(event: LockEvent): 'position' | 'missed' | undefined {
  if (event.kind === 'doorState') return event.state === 'init' || event.state === 'unknown' ? 'missed' : 'position';
  // The bridge was out of reach, however briefly: door events could not get through meanwhile.
  if (event.kind === 'online' && event.online) return 'missed';
  return undefined;
}

export class LockGuard {
  private autoLockTimer: unknown;
  private openTimer: unknown;
  private unlockedTimer: unknown;
  private alerts: GuardAlerts = { leftOpen: false, leftUnlocked: false };
  /** Tried twice and failed: no more tries until the next unlock. */
  private gaveUp = false;
  /** Whether the door position happened since the plugin last could have missed a change (never at start). */
  private readonly door: DoorFreshness;
  private wasOnline: boolean;
  /** When the running auto-lock countdown (of the first attempt) started. */
  private closedFrom = 0;
  private readonly unsubscribe: () => void;
  private disposed = false;

  constructor(private readonly deps: LockGuardDeps) {
    this.wasOnline = deps.lock.state.online;
    this.door = new DoorFreshness(deps.clock.now());
    // The model's own rule: it hears a change before the views do, however they were built.
    this.unsubscribe = deps.lock.onChange((change) => {
      this.changed(change);
    }, 'model');
    this.reconsider(true);
  }

  /** The settings changed (config, or AutoSecurityTimeout written from HomeKit): countdowns start over. */
  settingsChanged(): void {
    this.cancelAutoLock();
    this.reconsider(true);
  }

  /**
   * A controller (Apple Home, Matter) asked for a command: the countdown stops now, not when the
   * command succeeds, so an unlock still on its way never gets an auto-lock behind it. The outcome
   * of that command starts a new countdown if the conditions hold.
   */
  commandRequested(): void {
    this.cancelAutoLock();
  }

  /**
   * Events may have been lost (the delivery check found them not arriving, or they arrive again
   * after that): the door's last report may be out of date, so it counts as unknown until a report
   * of a position that happened after now, as after a restart.
   */
  eventsMayBeMissed(): void {
    this.door.missedNow(this.deps.clock.now());
    this.cancelAutoLock();
  }

  get current(): GuardAlerts {
    return { ...this.alerts };
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe();
    for (const timer of [this.autoLockTimer, this.openTimer, this.unlockedTimer]) if (timer !== undefined) this.deps.clock.clearTimeout(timer);
  }

  private isDisposed(): boolean {
    return this.disposed;
  }

  private changed(change: LockChange): void {
    const backOnline = !this.wasOnline && change.state.online;
    this.wasOnline = change.state.online;
    if (backOnline) {
      if (change.cause === 'event') this.door.missedAt(eventTimes(change.state, change.event, change.context), change.context);
      else this.door.missedNow(this.deps.clock.now());
    }
    // A stale event changed nothing, and alerts are the guard's own.
    if (change.cause === 'stale' || change.cause === 'alerts') return;
    if (change.cause === 'commandFailed') {
      // A controller's command failed: its target write stopped the countdown, which starts anew.
      // The auto-lock's own failure is handled where it was sent (one retry).
      if (change.origin !== AUTO_LOCK_ORIGIN) this.reconsider(true);
      return;
    }
    if (change.cause === 'event') {
      const freshness = doorFreshness(change.event);
      const times = () => eventTimes(change.state, change.event, change.context);
      if (change.event.kind === 'clockDrift') this.door.clockReset();
      if (freshness === 'missed') this.door.missedAt(times(), change.context);
      else if (freshness === 'position') this.door.positionAt(times(), change.context);
    }
    // A status report says what is, not what someone did (the plugin's own status requests ask for
    // them): it never starts or restarts the countdown, it only stops one that can no longer run.
    const report = change.cause === 'event' && change.event.kind === 'lockState' && change.event.source === 'status';
    const lockMoved = (change.cause === 'event' && change.event.kind === 'lockState' && !report) || change.cause === 'command';
    if (change.cause === 'event' && change.event.kind === 'lockState' && change.state.lock === 'locked') this.gaveUp = false;
    if (change.cause === 'command' && change.action === 'unlock') this.gaveUp = false;
    // Any lock event or command restarts the auto-lock countdown from now.
    if (lockMoved) this.cancelAutoLock();
    this.reconsider(lockMoved, !report);
  }

  private reconsider(restart: boolean, mayStart = true): void {
    if (this.disposed) return;
    const state = this.deps.lock.state;
    const settings = this.deps.settings();
    if (!this.mayAutoLock(state, settings)) this.cancelAutoLock();
    else if (mayStart && (restart || this.autoLockTimer === undefined) && !this.gaveUp) this.startAutoLock(settings.autoLockSeconds * 1000, 1);
    this.openTimer = this.follow(this.openTimer, settings.leftOpenSeconds > 0 && doorLeftOpen(state), settings.leftOpenSeconds, 'leftOpen');
    this.unlockedTimer = this.follow(this.unlockedTimer, settings.leftUnlockedSeconds > 0 && state.lock === 'unlocked', settings.leftUnlockedSeconds, 'leftUnlocked');
  }

  /** A "left …" countdown: runs while its condition holds, trips the alert, clears it when it ends. */
  private follow(timer: unknown, holds: boolean, seconds: number, alert: keyof GuardAlerts): unknown {
    if (!holds) {
      if (timer !== undefined) this.deps.clock.clearTimeout(timer);
      this.setAlert(alert, false);
      return undefined;
    }
    if (timer !== undefined || this.alerts[alert]) return timer;
    return this.deps.clock.setTimeout(() => {
      if (alert === 'leftOpen') this.openTimer = undefined;
      else this.unlockedTimer = undefined;
      this.setAlert(alert, true);
    }, seconds * 1000);
  }

  private setAlert(alert: keyof GuardAlerts, on: boolean): void {
    if (this.alerts[alert] === on) return;
    this.alerts = { ...this.alerts, [alert]: on };
    this.deps.onAlerts(this.current);
  }

  private mayAutoLock(state: LockState, settings: GuardSettings): boolean {
    return this.door.fresh && autoLockMayRun(state, settings);
  }

  private cancelAutoLock(): void {
    if (this.autoLockTimer !== undefined) this.deps.clock.clearTimeout(this.autoLockTimer);
    this.autoLockTimer = undefined;
  }

  private startAutoLock(delayMs: number, attempt: 1 | 2): void {
    this.cancelAutoLock();
    if (attempt === 1) this.closedFrom = this.deps.clock.now();
    this.autoLockTimer = this.deps.clock.setTimeout(() => {
      this.autoLockTimer = undefined;
      void this.fire(attempt);
    }, delayMs);
  }

  private async fire(attempt: 1 | 2): Promise<void> {
    const { lock, log } = this.deps;
    // Checked again at the moment of sending: never "lock" with the door open, ajar or unknown, nor
    // behind a command on its way (its outcome starts a new countdown).
    if (this.disposed || !this.mayAutoLock(lock.state, this.deps.settings()) || this.deps.commandPending()) return;
    const sentAt = this.deps.clock.now();
    const closedSeconds = Math.round((sentAt - this.closedFrom) / 1000);
    this.deps.onAutoLockSent?.(sentAt, closedSeconds);
    try {
      await lock.command('lock', AUTO_LOCK_ORIGIN);
      log.info(`locked by auto-lock (the door was closed for ${closedSeconds} s).`);
    } catch (error) {
      // Disposed while the command was on its way (the lock left the config).
      if (this.isDisposed()) return;
      const why = error instanceof Error ? error.message : String(error);
      if (attempt === 1 && this.mayAutoLock(lock.state, this.deps.settings())) {
        log.info(`auto-lock failed (${why}); it is tried once more in ${AUTO_LOCK_RETRY_MS / 1000} s.`);
        this.startAutoLock(AUTO_LOCK_RETRY_MS, 2);
        return;
      }
      if (attempt === 2) {
        this.gaveUp = true;
        log.warn(`auto-lock failed twice (${why}); the door is closed but the lock is still unlocked. It is not tried again until the next unlock.`);
      }
    }
  }
}
