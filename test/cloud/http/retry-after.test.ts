// Retry-After as the service sends it with a 429 (back-off "honouring Retry-After").
import { describe, expect, it } from 'vitest';

import { parseRetryAfter } from '../../../src/cloud/http/retry-after.js';

describe('RateLimitedError "with the Retry-After delay (seconds or HTTP date)"', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP date relative to now, and a past date as 0', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent or unreadable values', () => {
    for (const value of [null, undefined, '', 'soon', '1.5', '-3']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
