import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { deviceTime, EVENT_TIME_SLACK_MS, isOlder, learnLead, order, orderingTime, orderTwoClocks, repairMarks, serviceTime } from '../../src/model/event-time.js';

const T = 1_767_225_600_000;
const TOL = 300_000;
const ctx = { receivedAt: T + 40, signedAt: T, toleranceMs: TOL };

describe('"an event time is evidence, not truth": later than the signature\'s t plus 2 s counts as t', () => {
  it('a time up to the signature\'s t plus 2 s is kept as it is', () => {
    expect(orderingTime(T - 5_000, ctx)).toBe(T - 5_000);
    expect(orderingTime(T, ctx)).toBe(T);
    expect(orderingTime(T + EVENT_TIME_SLACK_MS, ctx)).toBe(T + EVENT_TIME_SLACK_MS);
  });

  it('a later time is treated as the signature\'s t, whatever the signature tolerance', () => {
    expect(orderingTime(T + EVENT_TIME_SLACK_MS + 1, ctx)).toBe(T);
    expect(orderingTime(T + 4 * 60_000, ctx)).toBe(T);
    expect(orderingTime(T + 365 * 86_400_000, ctx)).toBe(T);
    expect(orderingTime(T + 60_000, { receivedAt: T, signedAt: T })).toBe(T);
  });

  it('without a time there is nothing to bound', () => {
    expect(orderingTime(undefined, ctx)).toBeUndefined();
  });

  it('never orders an event after its signature plus 2 s (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1_000, max: 3_600_000 }), (at, signedAt, toleranceMs) => {
        const time = orderingTime(at, { receivedAt: signedAt, signedAt, toleranceMs });
        expect(time).toBeDefined();
        expect(time as number).toBeLessThanOrEqual(signedAt + EVENT_TIME_SLACK_MS);
        // times within the bound are never changed
        if (at <= signedAt + EVENT_TIME_SLACK_MS) expect(time).toBe(at);
      }),
    );
  });
});

describe('a device\'s own clock (a doorbell\'s): a time beyond the signature\'s t plus its tolerance counts as t', () => {
  it('a time up to t plus the tolerance is kept as it is, a fast clock included', () => {
    expect(deviceTime(T - 5_000, ctx)).toBe(T - 5_000);
    expect(deviceTime(T + 30_000, ctx)).toBe(T + 30_000);
    expect(deviceTime(T + TOL, ctx)).toBe(T + TOL);
  });

  it('a later time (a clock a year off, a unit slip) is the signature\'s t; the tolerance is the one the signature was checked with', () => {
    expect(deviceTime(T + TOL + 1, ctx)).toBe(T);
    expect(deviceTime(T + 365 * 86_400_000, ctx)).toBe(T);
    expect(deviceTime(T * 1000, ctx)).toBe(T);
    expect(deviceTime(T + 240_000, { ...ctx, toleranceMs: 60_000 })).toBe(T);
    expect(deviceTime(T + 240_000, { receivedAt: T, signedAt: T })).toBe(T + 240_000);
    expect(deviceTime(undefined, ctx)).toBeUndefined();
  });
});

describe('"an event older than the last applied one changes nothing"', () => {
  it('older only when both times exist and the event\'s is earlier', () => {
    expect(isOlder(1, 2)).toBe(true);
    expect(isOlder(2, 2)).toBe(false);
    expect(isOlder(3, 2)).toBe(false);
    expect(isOlder(undefined, 2)).toBe(false);
    expect(isOlder(1, undefined)).toBe(false);
  });
});

describe('saved ordering marks in the future are repaired at start-up', () => {
  it('a mark beyond now plus the tolerance becomes now; others stay', () => {
    const repaired = repairMarks({ lock: T + 86_400_000, door: T - 10, battery: T + TOL, online: undefined }, T, TOL);
    expect(repaired).toEqual({ lock: T, door: T - 10, battery: T + TOL, online: undefined });
  });

  it('says so when nothing needed repair (undefined), leaving the marks untouched', () => {
    const marks = { lock: T - 1, door: T };
    expect(repairMarks(marks, T, TOL)).toBeUndefined();
    expect(repairMarks({}, T)).toBeUndefined();
  });

  it('no repaired mark lies beyond now plus the tolerance, and marks in the past are never moved (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('lock', 'door', 'battery', 'keypadBattery', 'online'), fc.integer({ min: 0, max: 4_000_000_000_000 })), (marks) => {
        const repaired = repairMarks(marks, T, TOL) ?? marks;
        for (const [key, mark] of Object.entries(marks)) {
          const after = repaired[key];
          expect(after).toBeLessThanOrEqual(T + TOL);
          if (mark <= T + TOL) expect(after).toBe(mark);
        }
      }),
    );
  });
});

describe('the ordering rule for one aspect', () => {
  it('"events without a time apply in arrival order" and leave the mark alone', () => {
    expect(order(undefined, T - 1, ctx)).toEqual({ stale: false, mark: T - 1 });
    expect(order(undefined, undefined, ctx)).toEqual({ stale: false, mark: undefined });
  });

  it('an older time changes nothing; the same or a newer one applies and becomes the mark', () => {
    expect(order(T - 10, T - 5, ctx)).toEqual({ stale: true, mark: T - 5 });
    expect(order(T - 5, T - 5, ctx)).toEqual({ stale: false, mark: T - 5 });
    expect(order(T - 1, T - 5, ctx)).toEqual({ stale: false, mark: T - 1 });
  });

  it('a time ahead of t within the tolerance (a fast device clock) is its own: it becomes the mark and orders the next one', () => {
    const fast = order(T + 30_000, T - 900, ctx);
    expect(fast).toEqual({ stale: false, mark: T + 30_000 });
    expect(order(T + 25_000, fast.mark, { ...ctx, signedAt: T + 1_000 }).stale).toBe(true);
  });

  it('a time beyond t plus the tolerance applies as now: the mark moves to t, never backwards', () => {
    expect(order(T + 10 * TOL, undefined, ctx)).toEqual({ stale: false, mark: T });
    expect(order(T + 10 * TOL, T - 900, ctx)).toEqual({ stale: false, mark: T });
    // t is whole seconds: a real event sent a moment earlier may carry a later millisecond time
    expect(order(T + 10 * TOL, T + 400, ctx)).toEqual({ stale: false, mark: T + 400 });
  });

  it('never stale for an event stamped beyond its signature, and the mark never passes t plus the tolerance (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.option(fc.integer({ min: 0, max: T + TOL }), { nil: undefined }), (at, mark) => {
        const result = order(at, mark, ctx);
        if (at > T + TOL) expect(result.stale).toBe(false);
        if (result.mark !== undefined) expect(result.mark).toBeLessThanOrEqual(T + TOL);
        if (result.stale) expect(result.mark).toBe(mark);
      }),
    );
  });
});

describe('two clocks: the lock\'s learnt lead and the order of one lock clock', () => {
  const lock = (at: number | undefined) => ({ at, clock: 'lock' as const });
  const service = (at: number | undefined) => ({ at, clock: 'service' as const });

  it('a lock stamp ahead of t teaches its lead; behind t, a service stamp or a jumped clock teach nothing; within the slack the clock is right', () => {
    expect(learnLead(undefined, lock(T + 30_000), ctx)).toBe(30_000);
    expect(learnLead(30_000, lock(T - 10_000), ctx)).toBe(30_000);
    expect(learnLead(30_000, service(T + 30_000), ctx)).toBe(30_000);
    expect(learnLead(30_000, lock(T + TOL + 1), ctx)).toBe(30_000);
    expect(learnLead(30_000, lock(T + 500), ctx)).toBeUndefined();
    expect(learnLead(30_000, lock(T + 10_000), ctx)).toBe(10_000);
  });

  it('read in the service clock: a lock stamp less its lead, a jumped one as t, a service stamp bounded by t plus the slack', () => {
    expect(serviceTime(lock(T + 30_000), 30_000, ctx)).toBe(T);
    expect(serviceTime(lock(T + TOL + 1), 30_000, ctx)).toBe(T);
    expect(serviceTime(service(T + 60_000), undefined, ctx)).toBe(T);
    expect(serviceTime(lock(undefined), 30_000, ctx)).toBeUndefined();
  });

  it('whatever the lead and the service mark, a lock stamp older than the lock mark is stale and a newer one by the lock clock is never stale against another lock stamp (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -TOL, max: TOL }), fc.integer({ min: 0, max: TOL }), fc.integer({ min: 1, max: 600_000 }), (offset, lead, gap) => {
        const mark = T + offset;
        const marks = { service: undefined, lock: mark };
        expect(orderTwoClocks(lock(mark - gap), marks, lead, ctx).stale).toBe(true);
        const newer = orderTwoClocks(lock(mark + gap), marks, lead, ctx);
        expect(newer.stale).toBe(false);
        if (mark + gap - T <= TOL) expect(newer.marks.lock).toBe(mark + gap);
      }),
    );
  });
});
