// Back-off with full jitter that honours Retry-After, and a bounded-concurrency pool that slows down
// for every caller after a 429. Sleep, clock and random source are injectable so schedules are
// tested without waiting.
import { jitteredDelay, unitInterval } from '../../util/backoff.js';
import { RateLimitedError, TransientError } from './errors.js';

export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

export interface BackoffOptions {
  /** First delay ceiling; doubled for each further attempt. */
  baseMs: number;
  /** Largest delay ceiling. */
  capMs: number;
  /** Source of randomness in [0, 1). */
  random: () => number;
}

export const DEFAULT_BACKOFF: Omit<BackoffOptions, 'random'> = { baseMs: 500, capMs: 30_000 };

/**
 * "Full jitter": a uniform delay between 0 and min(cap, base * 2^attempt), so many clients that failed
 * together do not come back together. `attempt` counts from 0 for the first retry.
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  return jitteredDelay(attempt + 1, { firstMs: options.baseMs, maxMs: options.capMs }, options.random);
}

/**
 * Delay before retrying after a 429. Retry-After is a minimum, so jitter only adds to it (up to a
 * quarter of it, at most a second), spreading the callers that were told the same instant.
 */
export function rateLimitDelay(error: RateLimitedError, attempt: number, options: BackoffOptions): number {
  if (error.retryAfterMs === undefined) return Math.max(options.baseMs, backoffDelay(attempt + 1, options));
  const spread = Math.min(1_000, error.retryAfterMs / 4);
  return Math.ceil(error.retryAfterMs + unitInterval(options.random()) * spread);
}

export interface RetryOptions extends BackoffOptions {
  sleep: Sleep;
  /** Attempts in all for 5xx, timeouts and network errors (the first try included). */
  maxAttempts: number;
  /** Attempts in all while the service keeps answering 429. */
  maxRateLimitedAttempts: number;
  /** A Retry-After longer than this is not waited for here: the caller records the failure and tries later. */
  maxRetryAfterMs: number;
  /** Told before each wait, e.g. to slow a pool down or to log. */
  onRetry?: (info: { error: unknown; attempt: number; delayMs: number }) => void;
  /** Checked before each retry; false stops retrying (e.g. the plugin is shutting down). */
  shouldContinue?: () => boolean;
}

export const DEFAULT_RETRY: Omit<RetryOptions, 'random' | 'sleep'> = {
  ...DEFAULT_BACKOFF,
  maxAttempts: 4,
  maxRateLimitedAttempts: 8,
  maxRetryAfterMs: 120_000,
};

/** Which failures are worth another try in the same run. Everything else is final at once. */
export function isRetryable(error: unknown): boolean {
  return error instanceof RateLimitedError || error instanceof TransientError;
}

/**
 * Runs `task` until it succeeds, a failure is not retryable, or the attempt budgets are spent; then
 * throws the last error. 429 and transient failures have separate budgets: being told to slow down
 * is not a sign that the request is broken.
 */
export async function withRetry<T>(task: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  let transientFailures = 0;
  let rateLimited = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await task(attempt);
    } catch (error) {
      let delayMs: number;
      if (error instanceof RateLimitedError) {
        rateLimited++;
        if (rateLimited >= options.maxRateLimitedAttempts) throw error;
        if (error.retryAfterMs !== undefined && error.retryAfterMs > options.maxRetryAfterMs) throw error;
        delayMs = rateLimitDelay(error, rateLimited - 1, options);
      } else if (error instanceof TransientError) {
        transientFailures++;
        if (transientFailures >= options.maxAttempts) throw error;
        delayMs = backoffDelay(transientFailures - 1, options);
      } else {
        throw error;
      }
      if (options.shouldContinue && !options.shouldContinue()) throw error;
      options.onRetry?.({ error, attempt, delayMs });
      await options.sleep(delayMs);
      if (options.shouldContinue && !options.shouldContinue()) throw error;
    }
  }
}

export interface PoolOptions {
  /** Most tasks running at once. */
  concurrency: number;
  sleep: Sleep;
  now: () => number;
  /** Pause after a 429 without Retry-After. */
  defaultPauseMs?: number;
}

/**
 * Runs at most `concurrency` tasks at once, in the order they were queued. After `pause(ms)` (a 429)
 * no task starts until the pause has passed and the limit is halved, then it grows back by one per
 * success: one slow-down is felt by every caller, not only the one that was refused.
 */
export class ConcurrencyPool {
  private readonly max: number;
  private limit: number;
  private active = 0;
  private successesSinceGrowth = 0;
  private readonly waiting: (() => void)[] = [];
  private pausedUntil = 0;
  private pauseGate: Promise<void> | undefined;

  constructor(private readonly options: PoolOptions) {
    this.max = Math.max(1, Math.floor(options.concurrency));
    this.limit = this.max;
  }

  /** The current limit (lower than the configured one for a while after a 429). */
  get currentLimit(): number {
    return this.limit;
  }

  get running(): number {
    return this.active;
  }

  /**
   * Tells every caller to wait `ms` before starting anything new, and halves the limit. The requests
   * in flight when the limit was hit all come back with 429: only the first of a burst halves.
   */
  pause(ms: number): void {
    const now = this.options.now();
    if (this.pauseGate === undefined) this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.successesSinceGrowth = 0;
    const until = now + ms;
    if (until <= this.pausedUntil && this.pauseGate) return;
    this.pausedUntil = until;
    const gate = this.options.sleep(ms);
    this.pauseGate = gate;
    void gate.then(() => {
      if (this.pauseGate === gate) this.pauseGate = undefined;
    }, () => {
      if (this.pauseGate === gate) this.pauseGate = undefined;
    });
  }

  /**
   * Runs `task` in a slot. A 429 from the task pauses the pool before the slot is given back, so
   * no other caller starts a request in between.
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    let ok = false;
    try {
      const result = await task();
      ok = true;
      return result;
    } catch (error) {
      if (error instanceof RateLimitedError) this.pause(error.retryAfterMs ?? this.options.defaultPauseMs ?? 1_000);
      throw error;
    } finally {
      this.release(ok);
    }
  }

  private async acquire(): Promise<void> {
    for (;;) {
      // A newer pause may replace the gate while we wait on it: wait until no gate is left.
      let gate = this.pauseGate;
      while (gate) {
        await gate.catch(() => undefined);
        gate = this.pauseGate;
      }
      if (this.active < this.limit) {
        this.active++;
        return;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(ok: boolean): void {
    this.active--;
    if (ok && this.limit < this.max) {
      this.successesSinceGrowth++;
      if (this.successesSinceGrowth >= this.limit) {
        this.limit++;
        this.successesSinceGrowth = 0;
      }
    }
    // Wake as many waiters as there is room for; each re-checks the gate and the limit.
    const room = Math.max(1, this.limit - this.active);
    for (let i = 0; i < room && this.waiting.length > 0; i++) this.waiting.shift()?.();
  }
}
