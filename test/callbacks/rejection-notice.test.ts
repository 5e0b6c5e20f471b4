// Rejections are never silent: a warning with the measured offset and what to
// do, at most once an hour per cause; the clock is injected, so the hour is exact.
import { describe, expect, it } from 'vitest';

import { causeOf, describeOffset, REJECTION_WARNING_INTERVAL_MS, RejectionNotices } from '../../src/callbacks/rejection-notice.js';

const T0 = 1_767_225_600_000;

describe('rejections are never silent (the warning and its rate limit)', () => {
  it('a stale signature warns with the measured offset and says to set up time sync', () => {
    const notices = new RejectionNotices();
    const warning = notices.note('stale-timestamp', T0, 7 * 60_000 + 12_000);
    expect(warning).toMatch(/clock is 7 min 12 s ahead of the time in their signatures/);
    expect(warning).toMatch(/1 callback\(s\) refused/);
    expect(warning).toMatch(/time sync/);
    expect(notices.note('stale-timestamp', T0 + 1, -3 * 3600_000)).toBeUndefined();
  });

  it('at most once an hour per cause; the next warning counts every refusal since start-up', () => {
    const notices = new RejectionNotices();
    expect(notices.note('stale-timestamp', T0, -600_000)).toMatch(/10 min 0 s behind/);
    for (let i = 1; i < 50; i++) expect(notices.note('stale-timestamp', T0 + i * 60_000, -600_000)).toBeUndefined();
    expect(notices.note('stale-timestamp', T0 + REJECTION_WARNING_INTERVAL_MS - 1, -600_000)).toBeUndefined();
    expect(notices.note('stale-timestamp', T0 + REJECTION_WARNING_INTERVAL_MS, -600_000)).toMatch(/52 callback\(s\) refused/);
  });

  it('a clock set back by time sync does not silence the warning for the size of the jump', () => {
    const notices = new RejectionNotices();
    expect(notices.note('stale-timestamp', T0, 86_400_000)).toBeDefined();
    expect(notices.note('stale-timestamp', T0 - 86_400_000, 1_000)).toBeDefined();
  });

  it('bad signatures (a wrong API key) and a wrong or missing custom header warn on their own schedule', () => {
    const notices = new RejectionNotices();
    expect(notices.note('bad-signature', T0)).toMatch(/does not match the API key/);
    expect(notices.note('bad-token', T0)).toMatch(/x-lock-access-token header is missing or not the stored webhook token/);
    expect(notices.note('missing-token', T0 + 1)).toBeUndefined();
    expect(notices.note('stale-timestamp', T0 + 2, 400_000)).toMatch(/clock/);
  });

  it('refusals nobody can fix here (malformed bodies, a 503 while starting) never warn', () => {
    const notices = new RejectionNotices();
    for (const reason of ['schema-violation', 'invalid-json', 'not-ready', 'malformed-signature', 'too-large'] as const) {
      expect(notices.note(reason, T0)).toBeUndefined();
      expect(causeOf(reason)).toBeUndefined();
    }
  });

  it('offsets read as people read them', () => {
    expect(describeOffset(42_000)).toBe('42 s ahead of');
    expect(describeOffset(-(2 * 3600_000 + 3 * 60_000))).toBe('2 h 3 min behind');
  });
});
