// Keeps a storm of callbacks (a replay, a misbehaving sender, a benchmark) from flooding Homebridge's
// log: event lines are written at a household's pace, and the rest are counted and summed up in one
// line. Each info line is a synchronous write, so a flood would also slow the plugin down. Warnings
// and errors always pass; left-out lines still go to debug, which `homebridge -D` shows.
import type { Logger } from './logger.js';

export interface LogLimitOptions {
  /** Lines written at once after a quiet spell. */
  burst?: number;
  /** Lines written per second once the burst is spent. */
  perSecond?: number;
  /** How soon after the first left-out line the summary is written. */
  summaryDelayMs?: number;
  now?: () => number;
}

export const DEFAULT_LOG_BURST = 50;
export const DEFAULT_LOG_PER_SECOND = 10;
const DEFAULT_SUMMARY_DELAY_MS = 10_000;

export class LogLimiter implements Logger {
  private tokens: number;
  private refilledAt: number;
  private leftOut = 0;
  private leftOutSince = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly now: () => number;

  constructor(
    private readonly log: Logger,
    private readonly options: LogLimitOptions = {},
  ) {
    this.burst = options.burst ?? DEFAULT_LOG_BURST;
    this.perSecond = options.perSecond ?? DEFAULT_LOG_PER_SECOND;
    this.now = options.now ?? Date.now;
    this.tokens = this.burst;
    this.refilledAt = this.now();
  }

  info(message: string): void {
    if (this.take()) {
      this.log.info(message);
      return;
    }
    this.log.debug(message);
    if (this.leftOut === 0) this.leftOutSince = this.now();
    this.leftOut += 1;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.summarise();
    }, this.options.summaryDelayMs ?? DEFAULT_SUMMARY_DELAY_MS);
    this.timer.unref();
  }

  warn(message: string): void {
    this.log.warn(message);
  }

  error(message: string): void {
    this.log.error(message);
  }

  debug(message: string): void {
    this.log.debug(message);
  }

  /** Writes the pending summary now (call on shutdown). */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.summarise();
  }

  private take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private summarise(): void {
    if (this.leftOut === 0) return;
    const seconds = Math.max(1, Math.round((this.now() - this.leftOutSince) / 1000));
    this.log.info(
      `${String(this.leftOut)} event line${this.leftOut === 1 ? ' was' : 's were'} left out of this log in the last ${String(seconds)} s, because events arrived faster than ${String(this.perSecond)} a second. The event log in the plugin settings keeps the latest events of every device; homebridge -D logs every line.`,
    );
    this.leftOut = 0;
  }
}
