// The arithmetic of the keep-alive and refresh schedule.
import { describe, expect, it } from 'vitest';

import { DAY_MS, MAX_TIMER_MS, expiryOf, refreshDueAt, refreshMarginMs, retryDelayMs, timerDelay } from '../../../src/cloud/tokens/token-schedule.js';

describe('refresh "when the token nears expiry (expires_in, or the JWT exp)"', () => {
  it('the JWT exp wins over expires_in; expires_in counts from receipt; neither means unknown', () => {
    expect(expiryOf(5_000, 100, 1_000)).toBe(5_000);
    expect(expiryOf(undefined, 100, 1_000)).toBe(101_000);
    expect(expiryOf(undefined, undefined, 1_000)).toBeUndefined();
    expect(expiryOf(undefined, 0, 1_000)).toBeUndefined();
  });

  it('refreshes when less than 7 days or 10% of the lifetime remains, whichever is smaller', () => {
    expect(refreshMarginMs(120 * DAY_MS)).toBe(7 * DAY_MS); // four months: 12 days is 10%, 7 days is smaller
    expect(refreshMarginMs(10 * DAY_MS)).toBe(DAY_MS);
    expect(refreshMarginMs(1000)).toBe(100);
    const issued = Date.UTC(2026, 0, 1);
    expect(refreshDueAt(issued + 120 * DAY_MS, issued)).toBe(issued + 113 * DAY_MS);
    expect(refreshDueAt(issued + DAY_MS, issued)).toBe(issued + DAY_MS - DAY_MS / 10);
    expect(refreshDueAt(undefined, issued)).toBeUndefined();
    // Unknown issue time: the 7-day cap.
    expect(refreshDueAt(issued + 30 * DAY_MS, undefined)).toBe(issued + 23 * DAY_MS);
  });

  it('timers never wait less than a second nor longer than setTimeout can', () => {
    expect(timerDelay(0, 10_000)).toBe(1000);
    expect(timerDelay(10_000 + 5000, 10_000)).toBe(5000);
    expect(timerDelay(400 * DAY_MS, 0)).toBe(MAX_TIMER_MS);
    expect([1, 2, 3, 6, 7, 20].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
  });
});
