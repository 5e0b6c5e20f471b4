import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { doublingDelay, jitteredDelay, listedDelay, unitInterval } from '../../src/util/backoff.js';

const schedule = { firstMs: 5_000, maxMs: 60_000 };

describe('the one back-off schedule', () => {
  it('doubles from the first delay with each failure in a row, up to the longest', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => doublingDelay(n, schedule))).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    expect(doublingDelay(0, schedule)).toBe(5_000);
  });

  it('a listed schedule gives its entries in order, then nothing', () => {
    expect([0, 1, 2, 3, 4].map((n) => listedDelay([1_000, 3_000, 9_000], n))).toEqual([undefined, 1_000, 3_000, 9_000, undefined]);
  });

  it('jitter stays between 0 and the doubling delay, whatever the random source gives', () => {
    expect(jitteredDelay(3, schedule, () => 0)).toBe(0);
    expect(jitteredDelay(3, schedule, () => 0.5)).toBe(10_000);
    expect(jitteredDelay(3, schedule, () => 0.999)).toBe(19_980);
    expect(jitteredDelay(3, schedule, () => Number.NaN)).toBe(0);
    expect(jitteredDelay(3, schedule, () => 7)).toBeLessThan(20_000);
    expect(unitInterval(-1)).toBe(0);
  });

  it('property: never negative, never beyond the longest delay, and never shorter after another failure', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 80 }), fc.double({ noNaN: false }), (firstMs, extra, failures, random) => {
        const s = { firstMs, maxMs: firstMs + extra };
        const plain = doublingDelay(failures, s);
        expect(plain).toBeGreaterThanOrEqual(0);
        expect(plain).toBeLessThanOrEqual(s.maxMs);
        expect(doublingDelay(failures + 1, s)).toBeGreaterThanOrEqual(plain);
        const jittered = jitteredDelay(failures, s, () => random);
        expect(jittered).toBeGreaterThanOrEqual(0);
        expect(jittered).toBeLessThanOrEqual(plain);
      }),
    );
  });
});
