// The lock guards the door: auto-lock once the door is really closed, and "left open" / "left
// unlocked" alerts. It follows the lock's applied changes and sends commands through the lock's one
// command queue; timers come from an injected clock, so every countdown is tested without waiting.
//
// Safety of auto-lock: "lock" is sent only while the lock is known unlocked, the door known closed
// and the lock's bridge online, checked again at the moment of sending. Anything else (the door
// open, ajar or unknown, any lock event, a command from Apple Home, the bridge going offline)
// cancels the countdown; a new one starts from the moment the conditions hold again.
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { GuardAlerts, LockChange, LockFeed } from './device-feeds.js';
import type { LockState } from './lock-state.js';

export type { GuardAlerts } from './device-feeds.js';

export interface GuardSettings {
  /** Whether the lock has a door sensor: without one, auto-lock never runs. */
  doorSensor: boolean;
  /** 0: off. */
  autoLockSeconds: number;
  leftOpenSeconds: number;
  leftUnlockedSeconds: number;
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
  /** The plugin sent its own auto-lock: the lock callback that follows is attributed to it. */
  onAutoLockSent?(at: number): void;
}

export class LockGuard {
  private autoLockTimer: unknown;
  private openTimer: unknown;
  private unlockedTimer: unknown;
  private alerts: GuardAlerts = { leftOpen: false, leftUnlocked: false };
  /** Tried twice and failed: no more tries until the next unlock. */
  private gaveUp = false;
  private readonly unsubscribe: () => void;
  private disposed = false;

  constructor(private readonly deps: LockGuardDeps) {
    this.unsubscribe = deps.lock.onChange((change) => {
      this.changed(change);
    });
    this.reconsider(true);
  }

  /** The settings changed (config, or AutoSecurityTimeout written from HomeKit): countdowns start over. */
  settingsChanged(): void {
    this.cancelAutoLock();
    this.reconsider(true);
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
    // A stale event changed nothing, a failed command moved nothing, and alerts are the guard's own.
    if (change.cause === 'stale' || change.cause === 'commandFailed' || change.cause === 'alerts') return;
    const lockMoved = (change.cause === 'event' && change.event.kind === 'lockState') || change.cause === 'command';
    if (change.cause === 'event' && change.event.kind === 'lockState' && change.state.lock === 'locked') this.gaveUp = false;
    if (change.cause === 'command' && change.action === 'unlock') this.gaveUp = false;
    // Any lock event or command restarts the auto-lock countdown from now.
    if (lockMoved) this.cancelAutoLock();
    this.reconsider(lockMoved);
  }

  private reconsider(restart: boolean): void {
    if (this.disposed) return;
    const state = this.deps.lock.state;
    const settings = this.deps.settings();
    if (!autoLockMayRun(state, settings)) this.cancelAutoLock();
    else if ((restart || this.autoLockTimer === undefined) && !this.gaveUp) this.startAutoLock(settings.autoLockSeconds * 1000, 1);
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

  private cancelAutoLock(): void {
    if (this.autoLockTimer !== undefined) this.deps.clock.clearTimeout(this.autoLockTimer);
    this.autoLockTimer = undefined;
  }

  private startAutoLock(delayMs: number, attempt: 1 | 2): void {
    this.cancelAutoLock();
    this.autoLockTimer = this.deps.clock.setTimeout(() => {
      this.autoLockTimer = undefined;
      void this.fire(attempt);
    }, delayMs);
  }

  private async fire(attempt: 1 | 2): Promise<void> {
    const { lock, log } = this.deps;
    // Checked again at the moment of sending: never "lock" with the door open, ajar or unknown.
    if (this.disposed || !autoLockMayRun(lock.state, this.deps.settings())) return;
    const sentAt = this.deps.clock.now();
    this.deps.onAutoLockSent?.(sentAt);
    try {
      await lock.command('lock', AUTO_LOCK_ORIGIN);
      log.info(`${lock.name}: locked by auto-lock (the door was closed for ${this.deps.settings().autoLockSeconds} s).`);
    } catch (error) {
      // Disposed while the command was on its way (the lock left the config).
      if (this.isDisposed()) return;
      const why = error instanceof Error ? error.message : String(error);
      if (attempt === 1 && autoLockMayRun(lock.state, this.deps.settings())) {
        log.info(`${lock.name}: auto-lock failed (${why}); it is tried once more in ${AUTO_LOCK_RETRY_MS / 1000} s.`);
        this.startAutoLock(AUTO_LOCK_RETRY_MS, 2);
        return;
      }
      if (attempt === 2) {
        this.gaveUp = true;
        log.warn(`${lock.name}: auto-lock failed twice (${why}); the door is closed but the lock is still unlocked. It is not tried again until the next unlock.`);
      }
    }
  }
}
