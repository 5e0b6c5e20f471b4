// The public-address self-check keeps watching: it repeats every hour, sooner after a failure
// (back-off), the status file says when it last passed, and a change from passing to failing is a
// warning in the log (once per change). Timers are injected so tests run the schedule at once.
import type { Logger } from '../util/logger.js';
import { reasonOf } from '../util/reason-messages.js';
import { messageCatalog, type UiMessage } from '../util/ui-message.js';
import { listedDelay } from '../util/backoff.js';
import type { SelfCheckOutcome } from '../cloud/startup-checks.js';

export interface SelfCheckRecord {
  state: 'ok' | 'failed';
  url: string;
  message: UiMessage;
  checkedAt: number;
  lastPassedAt?: number;
  nextAt?: number;
  history: { at: number; ok: boolean; message: UiMessage }[];
}

export interface SelfCheckWatchDeps {
  check(): Promise<SelfCheckOutcome>;
  publish(record: SelfCheckRecord): void;
  log: Logger;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const SELF_CHECK_WATCH_MESSAGES = {
  'selfCheck.failed': 'The self-check could not run ({reason}).',
} as const;

const say = messageCatalog(SELF_CHECK_WATCH_MESSAGES);

function selfCheckFailed(error: unknown): UiMessage {
  return say('selfCheck.failed', { reason: reasonOf(error) });
}

export const SELF_CHECK_EVERY_MS = 60 * 60 * 1000;
/** After a failure: again soon, then less often, at most hourly. */
export const SELF_CHECK_RETRY_MS = [60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 30 * 60_000] as const;
const HISTORY = 10;

export class SelfCheckWatch {
  private timer: unknown;
  private failures = 0;
  private lastOk: boolean | undefined;
  private lastPassedAt: number | undefined;
  private history: SelfCheckRecord['history'] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastOutcome: SelfCheckOutcome | undefined;

  constructor(private readonly deps: SelfCheckWatchDeps) {}

  /** The result of the last check, undefined before the first. */
  get last(): SelfCheckOutcome | undefined {
    return this.lastOutcome;
  }

  /** Checks now (one at a time) and plans the next check. */
  runNow(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clearTimer(this.timer);
    this.timer = undefined;
  }

  private async run(): Promise<void> {
    if (this.timer !== undefined) this.deps.clearTimer(this.timer);
    this.timer = undefined;
    const { log } = this.deps;
    let outcome: SelfCheckOutcome;
    try {
      outcome = await this.deps.check();
    } catch (error) {
      outcome = { ok: false, url: '', message: selfCheckFailed(error) };
    }
    if (this.stopped) return;
    this.lastOutcome = outcome;
    const at = this.deps.now();
    if (outcome.ok) {
      this.failures = 0;
      this.lastPassedAt = at;
      if (this.lastOk === false) log.info(`Self-check passes again: ${outcome.url} reaches this webhook listener.`);
      else if (this.lastOk === undefined) log.info(`Self-check passed: ${outcome.url} reaches this webhook listener.`);
    } else {
      this.failures += 1;
      if (this.lastOk === true) {
        const since = this.lastPassedAt === undefined ? '' : ` (it passed at ${new Date(this.lastPassedAt).toLocaleTimeString()})`;
        log.warn(`Self-check now fails${since}: ${outcome.message.text} Until it passes again the service cannot deliver events. It is tried again in a minute.`);
      } else if (this.lastOk === undefined) {
        log.warn(`Self-check failed: ${outcome.message.text}`);
      } else {
        log.debug(`Self-check still fails: ${outcome.message.text}`);
      }
    }
    this.lastOk = outcome.ok;
    const delay = outcome.ok ? SELF_CHECK_EVERY_MS : (listedDelay(SELF_CHECK_RETRY_MS, this.failures) ?? SELF_CHECK_EVERY_MS);
    this.history = [{ at, ok: outcome.ok, message: outcome.message }, ...this.history].slice(0, HISTORY);
    this.deps.publish({
      state: outcome.ok ? 'ok' : 'failed',
      url: outcome.url,
      message: outcome.message,
      checkedAt: at,
      ...(this.lastPassedAt === undefined ? {} : { lastPassedAt: this.lastPassedAt }),
      nextAt: at + delay,
      history: this.history,
    });
    this.timer = this.deps.setTimer(() => {
      this.timer = undefined;
      void this.runNow();
    }, delay);
  }
}
