import { describe, expect, it } from 'vitest';

import { AuthorizationLostError, RateLimitedError, RequestRejectedError, TransientError } from '../../../src/cloud/http/errors.js';
import { backoffDelay, ConcurrencyPool, DEFAULT_RETRY, rateLimitDelay, withRetry } from '../../../src/cloud/http/retry.js';

/** A sleep that records what it was asked for and resolves at once (no real waiting). */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: (ms: number) => { waits.push(ms); return Promise.resolve(); } };
}

/** A sleep whose waits are released by hand, with a clock that advances when they are. */
function manualSleep() {
  let now = 0;
  const pending: { until: number; resolve: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms: number) => new Promise<void>((resolve) => pending.push({ until: now + ms, resolve })),
    pendingCount: () => pending.length,
    /** Advances the clock to the earliest wait and releases every wait due by then. */
    releaseAll: () => {
      if (pending.length === 0) return;
      now = Math.max(...pending.map((p) => p.until));
      for (const p of pending.splice(0)) p.resolve();
    },
  };
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('back-off with full jitter, capped', () => {
  it('"full jitter": the delay is random between 0 and min(cap, base * 2^attempt)', () => {
    const options = { baseMs: 100, capMs: 1_000, random: () => 0.5 };
    expect(backoffDelay(0, options)).toBe(50);
    expect(backoffDelay(1, options)).toBe(100);
    expect(backoffDelay(3, options)).toBe(400);
    expect(backoffDelay(10, options)).toBe(500); // capped at 1000 * 0.5
    expect(backoffDelay(2, { ...options, random: () => 0 })).toBe(0);
    expect(backoffDelay(2, { ...options, random: () => 0.999 })).toBe(399);
  });

  it('a broken random source cannot produce negative or out-of-range delays', () => {
    expect(backoffDelay(1, { baseMs: 100, capMs: 1_000, random: () => -3 })).toBe(0);
    expect(backoffDelay(1, { baseMs: 100, capMs: 1_000, random: () => Number.NaN })).toBe(0);
    expect(backoffDelay(1, { baseMs: 100, capMs: 1_000, random: () => 7 })).toBeLessThan(200);
  });

  it('"429 honoured with Retry-After": never earlier than Retry-After, jitter only adds', () => {
    const error = new RateLimitedError('slow down', 2_000);
    expect(rateLimitDelay(error, 0, { baseMs: 100, capMs: 1_000, random: () => 0 })).toBe(2_000);
    const high = rateLimitDelay(error, 0, { baseMs: 100, capMs: 1_000, random: () => 0.99 });
    expect(high).toBeGreaterThan(2_000);
    expect(high).toBeLessThanOrEqual(2_500);
  });

  it('a 429 without Retry-After still waits at least the base delay', () => {
    expect(rateLimitDelay(new RateLimitedError('slow down', undefined), 0, { baseMs: 300, capMs: 10_000, random: () => 0 })).toBe(300);
  });
});

describe('retries of 429, 5xx and network errors', () => {
  const base = { ...DEFAULT_RETRY, baseMs: 100, capMs: 1_000, random: () => 0.5 };

  it('"5xx and network errors retried": succeeds after transient failures, waiting the back-off each time', async () => {
    const { waits, sleep } = recordingSleep();
    let calls = 0;
    const result = await withRetry(() => {
      calls++;
      if (calls < 3) return Promise.reject(new TransientError('HTTP 503', 503));
      return Promise.resolve('done');
    }, { ...base, sleep });
    expect(result).toBe('done');
    expect(calls).toBe(3);
    expect(waits).toEqual([50, 100]);
  });

  it('"a few attempts, then recorded": gives up after maxAttempts with the last error', async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    await expect(withRetry(() => {
      calls++;
      return Promise.reject(new TransientError(`fail ${calls}`, 502));
    }, { ...base, sleep, maxAttempts: 3 })).rejects.toThrow('fail 3');
    expect(calls).toBe(3);
  });

  it('"Retry-After honoured": waits what the service asked before trying again', async () => {
    const { waits, sleep } = recordingSleep();
    let calls = 0;
    await withRetry(() => {
      calls++;
      return calls === 1 ? Promise.reject(new RateLimitedError('429', 3_000)) : Promise.resolve();
    }, { ...base, random: () => 0, sleep });
    expect(waits).toEqual([3_000]);
  });

  it('429s have their own budget: being told to slow down does not use up the transient attempts', async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    await withRetry(() => {
      calls++;
      if (calls <= 5) return Promise.reject(new RateLimitedError('429', 10));
      if (calls <= 7) return Promise.reject(new TransientError('503', 503));
      return Promise.resolve();
    }, { ...base, sleep, maxAttempts: 3, maxRateLimitedAttempts: 6 });
    expect(calls).toBe(8);
  });

  it('a Retry-After longer than the limit is not waited for: the caller records it and tries later', async () => {
    const { waits, sleep } = recordingSleep();
    await expect(withRetry(() => Promise.reject(new RateLimitedError('429', 3_600_000)), { ...base, sleep, maxRetryAfterMs: 60_000 })).rejects.toBeInstanceOf(RateLimitedError);
    expect(waits).toEqual([]);
  });

  it('401 (after the client\'s own refresh) and other 4xx are final at once', async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    await expect(withRetry(() => { calls++; return Promise.reject(new AuthorizationLostError('lost', 401)); }, { ...base, sleep })).rejects.toBeInstanceOf(AuthorizationLostError);
    await expect(withRetry(() => { calls++; return Promise.reject(new RequestRejectedError('bad', 400)); }, { ...base, sleep })).rejects.toBeInstanceOf(RequestRejectedError);
    expect(calls).toBe(2);
  });

  it('stops retrying when told to (shutdown or unlink)', async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    let go = true;
    await expect(withRetry(() => { calls++; go = false; return Promise.reject(new TransientError('503', 503)); }, { ...base, sleep, shouldContinue: () => go })).rejects.toBeInstanceOf(TransientError);
    expect(calls).toBe(1);
  });
});

describe('bounded concurrency that slows down for everyone after a 429', () => {
  it('"bounded concurrency": never more than the limit at once, and every task runs', async () => {
    const clock = manualSleep();
    const pool = new ConcurrencyPool({ concurrency: 3, sleep: clock.sleep, now: clock.now });
    let running = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    const tasks = Array.from({ length: 10 }, (_, i) => pool.run(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      return i;
    }));
    for (let round = 0; round < 10; round++) {
      await flush();
      expect(running).toBeLessThanOrEqual(3);
      for (const open of gates.splice(0)) open();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
  });

  it('"the pool slows down for everyone after a 429": nothing starts until the pause is over, then at half the limit', async () => {
    const clock = manualSleep();
    const pool = new ConcurrencyPool({ concurrency: 8, sleep: clock.sleep, now: clock.now });
    pool.pause(5_000);
    let started = 0;
    const gates: (() => void)[] = [];
    const tasks = Array.from({ length: 20 }, () => pool.run(async () => {
      started++;
      await new Promise<void>((resolve) => gates.push(resolve));
    }));
    await flush();
    expect(started).toBe(0);
    expect(pool.currentLimit).toBe(4);
    clock.releaseAll();
    await flush();
    expect(started).toBe(4);
    while (gates.length > 0) {
      for (const open of gates.splice(0)) open();
      await flush();
    }
    await Promise.all(tasks);
    expect(started).toBe(20);
    // Successes grow the limit back towards the configured one.
    expect(pool.currentLimit).toBeGreaterThan(4);
  });

  it('a burst of 429s from the requests in flight halves the limit once, not once per answer', () => {
    const clock = manualSleep();
    const pool = new ConcurrencyPool({ concurrency: 8, sleep: clock.sleep, now: clock.now });
    for (let i = 0; i < 8; i++) pool.pause(1_000);
    expect(pool.currentLimit).toBe(4);
  });

  it('a task answered 429 pauses the pool before its slot is free: nobody starts in between', async () => {
    const clock = manualSleep();
    const pool = new ConcurrencyPool({ concurrency: 2, sleep: clock.sleep, now: clock.now });
    await expect(pool.run(() => Promise.reject(new RateLimitedError('429', 2_000)))).rejects.toBeInstanceOf(RateLimitedError);
    let started = false;
    const next = pool.run(() => { started = true; return Promise.resolve(); });
    await flush();
    expect(started).toBe(false);
    expect(clock.pendingCount()).toBe(1);
    clock.releaseAll();
    await next;
    expect(started).toBe(true);
    expect(clock.now()).toBe(2_000);
  });

  it('a failing task frees its slot and its error reaches the caller', async () => {
    const clock = manualSleep();
    const pool = new ConcurrencyPool({ concurrency: 1, sleep: clock.sleep, now: clock.now });
    await expect(pool.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(pool.run(() => Promise.resolve('next'))).resolves.toBe('next');
    expect(pool.running).toBe(0);
  });
});
