// One ordering and age rule for a doorbell's presses, motion and recordings: a doorbell's times are
// its own clock's, kept in order by themselves even when that clock runs a little fast; a time
// further ahead of the signature's t than the signature tolerance (a clock a year off, a unit slip)
// counts as t, so one bad clock never freezes what follows, across restarts too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { memoryStore } from '../../src/model/device-store.js';
import { DOORBELL_STATE_KEY, DoorbellDevice } from '../../src/model/doorbell-device.js';
import { initialDoorbellState, parseDoorbellState, reduceDoorbell, repairDoorbellMarks, type DoorbellState } from '../../src/model/doorbell-state.js';
import type { DeliveryContext } from '../../src/model/event-time.js';
import type { DoorbellEvent } from '../../src/model/events.js';
import { systemClock } from '../../src/util/clock.js';

const T = 1_767_225_600_000;
const TOL = 300_000;
const YEAR = 365 * 86_400_000;
const signed = (t: number, late = 300): DeliveryContext => ({ receivedAt: t + late, signedAt: t, toleranceMs: TOL });
const press = (dvrId: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'doorbellPress', dvrId });
const motion = (imageUrl: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'motion', imageUrl });
const video = (dvrId: string, startTime?: number): DoorbellEvent => ({ doorbellId: 'D1', at: startTime, kind: 'videoAvailable', dvrId, cause: 'buttonpush', ...(startTime === undefined ? {} : { startTime }) });

describe('presses and motion: "age by its event time where the payload has one, else by the signature\'s t"; a time beyond the tolerance counts as t', () => {
  it('a doorbell clock 30 s fast keeps its own order: an older press of that clock arriving after a newer one rings nothing', () => {
    const newer = reduceDoorbell(initialDoorbellState(), press('b', T + 30_000), signed(T));
    expect(newer.ring).toBe(true);
    const older = reduceDoorbell(newer.state, press('a', T + 25_000), signed(T + 1_000));
    expect(older.ring).toBe(false);
    expect(older.quietReason).toBe('an older press arrived after a newer one');
    expect(older.state.lastPress?.dvrId).toBe('b');
  });

  it('the same for motion: the older still does not replace the newer one', () => {
    const newer = reduceDoorbell(initialDoorbellState(), motion('http://127.0.0.1/new.jpg', T + 30_000), signed(T));
    const older = reduceDoorbell(newer.state, motion('http://127.0.0.1/old.jpg', T + 25_000), signed(T + 1_000));
    expect(older.motion).toBe(false);
    expect(older.state.lastMotion?.imageUrl).toBe('http://127.0.0.1/new.jpg');
  });

  it('within the tolerance the age is the event\'s own: a press stamped 30 s after t, taken 80 s after t, is 50 s old and rings', () => {
    expect(reduceDoorbell(initialDoorbellState(), press('a', T + 30_000), signed(T, 80_000)).ring).toBe(true);
    expect(reduceDoorbell(initialDoorbellState(), press('a', T + 10_000), signed(T, 80_000)).ring).toBe(false);
  });

  it('beyond the tolerance the age is the signature\'s: a press a year ahead taken 70 s after t is late, one taken at once rings', () => {
    const late = reduceDoorbell(initialDoorbellState(), press('a', T + YEAR), signed(T, 70_000));
    expect(late.ring).toBe(false);
    expect(late.quietReason).toMatch(/60 seconds late/);
    expect(reduceDoorbell(initialDoorbellState(), press('a', T + YEAR), signed(T)).ring).toBe(true);
    // With a 60-s tolerance, 4 minutes ahead is a jumped clock as well.
    const short = { ...signed(T, 70_000), toleranceMs: 60_000 };
    expect(reduceDoorbell(initialDoorbellState(), motion('http://127.0.0.1/m.jpg', T + 240_000), short).motion).toBe(false);
  });
});

describe('recordings follow the same rule: "a startTime beyond the signature\'s t plus its tolerance counts as t"', () => {
  it('after a recording stamped a year ahead, the next honest recording is still new: it becomes the newest and triggers', () => {
    const bad = reduceDoorbell(initialDoorbellState(), video('dvr-bad', T + YEAR), signed(T));
    expect(bad.recording).toBe(true);
    expect(bad.state.lastAt.video).toBe(T);
    const honest = reduceDoorbell(bad.state, video('dvr-next', T + 60_000), signed(T + 90_000));
    expect(honest.recording).toBe(true);
    expect(honest.state.lastVideo?.dvrId).toBe('dvr-next');
  });

  it('a unit slip (microseconds for milliseconds) freezes nothing either', () => {
    const slip = reduceDoorbell(initialDoorbellState(), video('dvr-us', (T - 20_000) * 1000), signed(T));
    expect(reduceDoorbell(slip.state, video('dvr-ms', T + 40_000), signed(T + 60_000)).recording).toBe(true);
  });

  it('an older recording arriving after a newer one is still not new; one without a start time applies in arrival order', () => {
    const newer = reduceDoorbell(initialDoorbellState(), video('dvr-2', T - 1_000), signed(T));
    expect(reduceDoorbell(newer.state, video('dvr-1', T - 60_000), signed(T + 5_000)).recording).not.toBe(true);
    expect(reduceDoorbell(newer.state, video('dvr-3'), signed(T + 5_000)).recording).toBe(true);
  });

  it('whatever bad clocks come in between, every honest recording triggers and becomes the newest, across restarts (property)', () => {
    const step = fc.record({
      gapMs: fc.integer({ min: 1_000, max: 3_600_000 }),
      // How long before its delivery an honest clip started (less than the gap: it started after the delivery before it).
      startedBefore: fc.double({ min: 0, max: 0.99, noNaN: true }),
      bad: fc.option(fc.oneof(fc.integer({ min: TOL + 1, max: 2 * YEAR }).map((ahead) => (t: number) => t + ahead), fc.constant((t: number) => t * 1000)), { nil: undefined }),
      restart: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        let state: DoorbellState = initialDoorbellState();
        let t = T;
        steps.forEach((s, i) => {
          t += s.gapMs;
          const startTime = s.bad ? s.bad(t) : t - Math.floor(s.gapMs * s.startedBefore);
          const result = reduceDoorbell(state, video(`dvr-${String(i)}`, startTime), signed(t));
          if (!s.bad) {
            expect(result.recording).toBe(true);
            expect(result.state.lastVideo?.dvrId).toBe(`dvr-${String(i)}`);
          }
          // No mark ever lies beyond the newest t.
          expect(result.state.lastAt.video).toBeLessThanOrEqual(t);
          state = result.state;
          if (s.restart) state = repairDoorbellMarks(parseDoorbellState(JSON.parse(JSON.stringify(state))) ?? initialDoorbellState(), t + 500);
        });
      }),
    );
  });
});

describe('a future mark saved by an earlier version is repaired when the state is loaded', () => {
  const SAVED_AT = T;
  /** State as earlier versions saved it: recordings ordered by the newest one's raw startTime, a year ahead. */
  const saved = { ...initialDoorbellState(), lastVideo: { dvrId: 'dvr-ahead', cause: 'buttonpush', startTime: SAVED_AT + YEAR, availableAt: SAVED_AT } };

  it('repairDoorbellMarks takes the saved startTime as the recordings\' mark and brings it back to now', () => {
    const repaired = repairDoorbellMarks(saved, SAVED_AT + 60_000);
    expect(repaired.lastAt.video).toBe(SAVED_AT + 60_000);
    expect(repaired.lastVideo).toEqual(saved.lastVideo);
    expect(repairDoorbellMarks(repaired, SAVED_AT + 60_000)).toBe(repaired);
    // A mark in the past is kept as it was.
    const past = { ...saved, lastVideo: { ...saved.lastVideo, startTime: SAVED_AT - 5_000 } };
    expect(repairDoorbellMarks(past, SAVED_AT).lastAt.video).toBe(SAVED_AT - 5_000);
  });

  it('a doorbell loaded from that state takes the next honest recording as new', () => {
    const now = SAVED_AT + 120_000;
    const store = memoryStore({ [DOORBELL_STATE_KEY]: saved });
    const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
    const device = new DoorbellDevice({ log, store, clock: { ...systemClock, now: () => now } }, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
    const recordings: boolean[] = [];
    device.onChange((change) => {
      if (change.cause === 'event') recordings.push(change.recording);
    });
    device.apply(video('dvr-honest', now + 10_000), signed(now + 30_000));
    expect(recordings).toEqual([true]);
    expect(device.state.lastVideo?.dvrId).toBe('dvr-honest');
    device.dispose();
  });
});
