// Push is only as good as the way in, and a broken way in is silent: the delivery watch notices.
// Whenever no verified callback has arrived for the check period, it asks the service for one lock's
// state (the service answers with a signed `status` callback) and waits up to 30 s from the service's
// answer to that request. Nothing arrived:
// events are not arriving, every registration is sent again (the service may have lost them), the
// public address is checked, one warning says so, and the check repeats on a back-off. Any verified
// callback means arriving again at once. Clock and timers are injected, so the schedule is tested
// with fake timers.
import type { DeliveryFeed, DeliveryState } from '../model/delivery-state.js';
import { listedDelay } from '../util/backoff.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { runDeliveryChecks, type DeliveryChecks } from './delivery-checks.js';
import { reasonMessage, reasonOf } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { deliveryMessage } from './delivery-messages.js';
import { minutesWords, timeWords } from './delivery-words.js';
import type { DeliveryStatus } from './status.js';

export type { DeliveryState } from '../model/delivery-state.js';

/** How long a probe waits for its callback. */
export const PROBE_WAIT_MS = 30_000;
/** After a probe found nothing: again soon, then less often, never later than the period. */
export const RECHECK_AFTER_MS = [60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 30 * 60_000] as const;

/** What the status file, the settings page and the diagnostics show. */
export type DeliveryRecord = DeliveryStatus;
type DeliveryCheck = NonNullable<DeliveryStatus['lastCheck']>;

export interface DeliveryWatchDeps {
  periodMs: number;
  clock: Clock;
  log: Logger;
  /** The locks that can be asked for their state, in a stable order (the probe rotates through them). */
  locks(): readonly string[];
  nameOf(lockId: string): string;
  /** `PUT /remoteoperate/{id}/status`; rejects when the service did not take the request. */
  askStatus(lockId: string): Promise<void>;
  registerAgain: DeliveryChecks['registerAgain'];
  selfCheck: DeliveryChecks['selfCheck'];
  publish(record: DeliveryRecord): void;
  /** The last verified callback of an earlier run, for "since when". */
  lastHeardAt?: number;
  /** Runs a check when no other watch's check runs (several accounts' watches share one). */
  turn?: (check: () => Promise<void>) => Promise<void>;
}

export class DeliveryWatch implements DeliveryFeed {
  private current: DeliveryState = 'unknown';
  private since: number;
  private readonly startedAt: number;
  private lastHeardAt: number | undefined;
  private heardThisRun = false;
  private timer: unknown;
  private nextCheckAt: number | undefined;
  /** Resolves the probe that waits for a callback. */
  private waiting: ((arrived: boolean) => void) | undefined;
  private checking = false;
  /** Probes in a row that found nothing, and checks in a row that could not ask any lock. */
  private failures = 0;
  private unasked = 0;
  private rotation = 0;
  private lastCheck: DeliveryCheck | undefined;
  private checked: DeliveryRecord['checked'];
  private readonly listeners = new Set<(state: DeliveryState) => void>();
  private stopped = false;

  constructor(private readonly deps: DeliveryWatchDeps) {
    this.startedAt = deps.clock.now();
    this.since = this.startedAt;
    this.lastHeardAt = deps.lastHeardAt;
  }

  get state(): DeliveryState {
    return this.current;
  }

  onChange(listener: (state: DeliveryState) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Starts counting the quiet time from now. */
  start(): void {
    this.schedule(this.deps.periodMs);
    this.publish();
  }

  /**
   * A verified callback arrived (any kind, duplicates too: each proves the way in works). Runs for
   * every callback, so the usual case only notes the time; the timer looks at it when it fires.
   */
  heard(what: string | (() => string)): void {
    const now = this.deps.clock.now();
    this.lastHeardAt = now;
    this.heardThisRun = true;
    if (this.current === 'arriving' && this.waiting === undefined) return;
    this.waiting?.(true);
    this.waiting = undefined;
    const was = this.current;
    this.failures = 0;
    this.unasked = 0;
    this.setState('arriving', now);
    if (was === 'notArriving') {
      this.deps.log.info(`Events from Lock Access arrive again (${typeof what === 'string' ? what : what()}); they had not been arriving since ${timeWords(this.since, now)}.`);
    }
    this.schedule(this.deps.periodMs);
    this.publish();
  }

  /** Checks now, whatever the quiet time (e.g. after the way in changed). */
  async checkNow(): Promise<void> {
    await this.check();
  }

  /**
   * The way in cannot be built (the listener did not start, the tunnel cannot open): nothing can
   * arrive, so that is known at once, without a probe. Its own error is already in the log; the
   * first callback that arrives (the way in came back) makes delivery "arriving" again.
   */
  cannotArrive(reason: UiMessage): void {
    if (this.stopped) return;
    const now = this.deps.clock.now();
    this.lastCheck = { at: now, how: 'wayIn', outcome: 'nothing', message: deliveryMessage('deliveryCheck.cannotArrive', { reason }) };
    this.setState('notArriving', now);
    this.deps.log.debug(`Delivery: events cannot arrive (${reason.text}).`);
    this.schedule(this.deps.periodMs);
    this.publish();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.waiting?.(false);
    this.waiting = undefined;
  }

  /** Read after awaits: stop() may have run meanwhile. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private quietSince(): number {
    return this.heardThisRun && this.lastHeardAt !== undefined ? Math.max(this.lastHeardAt, this.startedAt) : this.startedAt;
  }

  private tick(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const quietFor = this.deps.clock.now() - this.quietSince();
    if (this.current !== 'notArriving' && this.unasked === 0 && quietFor < this.deps.periodMs) {
      this.schedule(this.deps.periodMs - quietFor);
      return;
    }
    void this.check();
  }

  private async check(): Promise<void> {
    if (this.checking || this.stopped) return;
    this.checking = true;
    try {
      const run = async () => {
        if (this.isStopped()) return;
        const locks = this.deps.locks();
        if (locks.length === 0) await this.checkWithoutProbe();
        else await this.probe(locks);
      };
      await (this.deps.turn ?? ((check) => check()))(run);
    } catch (error) {
      // The watch must keep watching whatever a dependency did.
      this.deps.log.debug(`The delivery check failed (${errorText(error)}); it runs again later.`);
      if (this.timer === undefined && !this.isStopped()) this.schedule(this.deps.periodMs);
    } finally {
      this.checking = false;
    }
  }

  /** A doorbell-only account has no status request: registrations and the self-check run on the schedule instead. */
  private async checkWithoutProbe(): Promise<void> {
    const [registrations, selfCheck] = await runDeliveryChecks(this.deps, 'no event arrived for a while (doorbells only: nothing to ask)');
    if (this.stopped) return;
    const message = deliveryMessage('deliveryCheck.noLockToAsk', { registrations, selfCheck });
    this.lastCheck = { at: this.deps.clock.now(), how: 'registrations', outcome: 'checked', message };
    this.deps.log.debug(`Delivery check: ${message.text}`);
    this.schedule(this.deps.periodMs);
    this.publish();
  }

  private async probe(locks: readonly string[]): Promise<void> {
    const reasons: string[] = [];
    let first: { name: string; reason: UiMessage } | undefined;
    for (let tried = 0; tried < locks.length; tried++) {
      const lockId = locks[this.rotation++ % locks.length] ?? '';
      const startedAt = this.deps.clock.now();
      const { arrived, answered } = this.waitForCallback();
      try {
        await this.deps.askStatus(lockId);
        // The wait is for the callback, not for a slow bridge's answer to the request.
        answered();
      } catch (error) {
        const settle = this.waiting;
        this.waiting = undefined;
        settle?.(false);
        // A callback may have come in anyway: then delivery is proven all the same.
        if (!(await arrived)) {
          reasons.push(`${this.deps.nameOf(lockId)}: ${errorText(error)}`);
          first ??= { name: this.deps.nameOf(lockId), reason: reasonOf(error) };
          continue;
        }
      }
      if (this.stopped) return;
      if (await arrived) {
        this.lastCheck = { at: startedAt, how: 'probe', lockId, outcome: 'arrived', message: deliveryMessage('deliveryCheck.arrived', { name: this.deps.nameOf(lockId) }) };
        this.publish();
        return;
      }
      if (this.isStopped()) return;
      await this.nothingArrived(lockId, startedAt);
      return;
    }
    // The service took no request (offline bridges, no network, not linked): that says nothing about delivery.
    this.unasked += 1;
    const delay = this.backoff(this.unasked);
    const message = deliveryMessage('deliveryCheck.notAsked', first ?? { name: '', reason: reasonMessage('reason.other') });
    this.lastCheck = { at: this.deps.clock.now(), how: 'probe', outcome: 'notAsked', message };
    this.deps.log.debug(`Delivery check: no lock could be asked for its state (${reasons.join('; ')}). It is tried again in ${minutesWords(delay)}.`);
    this.schedule(delay);
    this.publish();
  }

  /**
   * `arrived` resolves true when a verified callback arrives (also while the request is still on
   * its way), false when none came within the probe's wait after `answered()`.
   */
  private waitForCallback(): { arrived: Promise<boolean>; answered: () => void } {
    let answered = (): void => undefined;
    const arrived = new Promise<boolean>((resolve) => {
      let timer: unknown;
      const settle = (came: boolean) => {
        if (timer !== undefined) this.deps.clock.clearTimeout(timer);
        resolve(came);
      };
      this.waiting = settle;
      answered = () => {
        if (this.waiting !== settle) return;
        timer = this.deps.clock.setTimeout(() => {
          if (this.waiting === settle) this.waiting = undefined;
          resolve(false);
        }, PROBE_WAIT_MS);
      };
    });
    return { arrived, answered };
  }

  private async nothingArrived(lockId: string, askedAt: number): Promise<void> {
    const now = this.deps.clock.now();
    const first = this.current !== 'notArriving';
    this.failures += 1;
    this.unasked = 0;
    const lastHeard = this.lastHeardAt;
    if (first) this.setState('notArriving', now);
    const name = this.deps.nameOf(lockId);
    this.lastCheck = { at: askedAt, how: 'probe', lockId, outcome: 'nothing', message: deliveryMessage('deliveryCheck.nothing', { name, seconds: PROBE_WAIT_MS / 1000 }) };
    const delay = this.backoff(this.failures);
    // The sensor and the page say so at once; the warning follows with what the checks found.
    this.schedule(delay);
    this.publish();
    const [registrations, selfCheck] = await runDeliveryChecks(this.deps, 'events are not arriving');
    if (this.stopped || this.current !== 'notArriving') return;
    this.checked = { registrations, selfCheck };
    this.publish();
    const sinceWords = lastHeard === undefined ? `the plugin started (${timeWords(this.startedAt, now)})` : timeWords(lastHeard, now);
    const sentence = `Events from Lock Access are not arriving: nothing has arrived since ${sinceWords}, and a status request for ${name} brought no callback within ${PROBE_WAIT_MS / 1000} s.`;
    if (!first) {
      this.deps.log.debug(`${sentence} Checked again: ${registrations.text}; ${selfCheck.text}.`);
      return;
    }
    this.deps.log.warn(
      `${sentence} Checked: ${registrations.text}; ${selfCheck.text}. Until events arrive again, Apple Home may show an old state. Send a test event from the plugin settings (Support) to see where the way in breaks, and read "Events stopped arriving" in docs/troubleshooting.md. The next check is in ${minutesWords(delay)}.`,
    );
  }

  private backoff(failures: number): number {
    return Math.min(listedDelay(RECHECK_AFTER_MS, failures) ?? this.deps.periodMs, this.deps.periodMs);
  }

  private setState(state: DeliveryState, at: number): void {
    if (this.current === state) return;
    this.current = state;
    this.since = at;
    if (state !== 'notArriving') this.checked = undefined;
    for (const listener of this.listeners) {
      try {
        listener(state);
      } catch (error) {
        this.deps.log.error(`A follower of the delivery state failed (${errorText(error)}).`);
      }
    }
  }

  private schedule(ms: number): void {
    this.clearTimer();
    if (this.stopped) return;
    this.nextCheckAt = this.deps.clock.now() + ms;
    this.timer = this.deps.clock.setTimeout(() => {
      this.tick();
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private publish(): void {
    this.deps.publish({
      state: this.current,
      since: this.since,
      checkEveryMinutes: Math.round(this.deps.periodMs / 60_000),
      ...(this.lastHeardAt === undefined ? {} : { lastHeardAt: this.lastHeardAt }),
      ...(this.lastCheck === undefined ? {} : { lastCheck: this.lastCheck }),
      ...(this.checked === undefined ? {} : { checked: this.checked }),
      ...(this.nextCheckAt === undefined ? {} : { nextCheckAt: this.nextCheckAt }),
    });
  }
}
