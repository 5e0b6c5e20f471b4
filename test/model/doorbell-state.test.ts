import { describe, expect, it } from 'vitest';

import { eventAge, initialDoorbellState, parseDoorbellState, recentRecording, reduceDoorbell, repairDoorbellMarks, type DoorbellState } from '../../src/model/doorbell-state.js';
import type { DoorbellEvent } from '../../src/model/events.js';
import { MAX_RING_AGE_MS } from '../../src/settings.js';

const NOW = 1_700_000_000_000;
const fresh = { receivedAt: NOW, signedAt: NOW - 1_000 };
const press = (dvrId?: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'doorbellPress', ...(dvrId === undefined ? {} : { dvrId }) });
const motion = (imageUrl: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'motion', imageUrl, width: 640, height: 360 });

describe('a doorbell press or motion older than 60 s is recorded but rings no phone', () => {
  it('a fresh press rings', () => {
    const result = reduceDoorbell(initialDoorbellState(), press('dvr-1'), fresh);
    expect(result.ring).toBe(true);
    expect(result.state.lastPress).toMatchObject({ dvrId: 'dvr-1', rang: true });
  });

  it('age is taken from the signature time when the payload has no event time', () => {
    expect(eventAge(press('a'), { receivedAt: NOW, signedAt: NOW - MAX_RING_AGE_MS - 1 })).toBe(MAX_RING_AGE_MS + 1);
    const late = reduceDoorbell(initialDoorbellState(), press('a'), { receivedAt: NOW, signedAt: NOW - MAX_RING_AGE_MS - 1 });
    expect(late.ring).toBe(false);
    expect(late.quietReason).toMatch(/60 seconds late/);
    expect(late.state.lastPress).toMatchObject({ dvrId: 'a', rang: false });
  });

  it('age is taken from the event time where the payload has one, even when the signature is fresh', () => {
    const late = reduceDoorbell(initialDoorbellState(), press('a', NOW - MAX_RING_AGE_MS - 1), fresh);
    expect(late.ring).toBe(false);
    const onTime = reduceDoorbell(initialDoorbellState(), press('a', NOW - MAX_RING_AGE_MS), fresh);
    expect(onTime.ring).toBe(true);
  });

  it('a late motion is recorded (its picture kept) but does not trigger the motion sensor', () => {
    const late = reduceDoorbell(initialDoorbellState(), motion('http://127.0.0.1/a.jpg', NOW - 2 * MAX_RING_AGE_MS), fresh);
    expect(late.motion).toBe(false);
    expect(late.snapshotUrl).toBe('http://127.0.0.1/a.jpg');
    expect(late.state.lastMotion).toMatchObject({ imageUrl: 'http://127.0.0.1/a.jpg', rang: false });
  });
});

describe('duplicates ring nothing', () => {
  it('"a press with the same dvrId as the last one" is ignored', () => {
    const first = reduceDoorbell(initialDoorbellState(), press('dvr-1'), fresh);
    const again = reduceDoorbell(first.state, press('dvr-1'), fresh);
    expect(again.ring).toBe(false);
    expect(again.state.lastPress).toEqual(first.state.lastPress);
    expect(reduceDoorbell(again.state, press('dvr-2'), fresh).ring).toBe(true);
  });

  it('presses without a dvrId are not taken for duplicates of each other', () => {
    const first = reduceDoorbell(initialDoorbellState(), press(), fresh);
    expect(reduceDoorbell(first.state, press(), fresh).ring).toBe(true);
  });
});

describe('ordering of doorbell events', () => {
  it('an older motion arriving after a newer one keeps the newer picture', () => {
    const newer = reduceDoorbell(initialDoorbellState(), motion('http://127.0.0.1/new.jpg', NOW - 1_000), fresh);
    const older = reduceDoorbell(newer.state, motion('http://127.0.0.1/old.jpg', NOW - 2_000), fresh);
    expect(older.motion).toBe(false);
    expect(older.snapshotUrl).toBeUndefined();
    expect(older.state.lastMotion?.imageUrl).toBe('http://127.0.0.1/new.jpg');
  });

  it('an older press arriving after a newer one rings nothing', () => {
    const newer = reduceDoorbell(initialDoorbellState(), press('b', NOW - 1_000), fresh);
    expect(reduceDoorbell(newer.state, press('a', NOW - 2_000), fresh).ring).toBe(false);
  });
});

describe('a future-stamped doorbell event never silences the doorbell', () => {
  const YEAR = 365 * 86_400_000;

  it('a motion stamped a year ahead counts as sent now: later motions still switch the sensor on', () => {
    const jumped = reduceDoorbell(initialDoorbellState(), motion('http://127.0.0.1/ahead.jpg', NOW + YEAR), fresh);
    expect(jumped.motion).toBe(true);
    expect(jumped.state.lastAt.motion).toBe(fresh.signedAt);
    const next = { receivedAt: NOW + 30_000, signedAt: NOW + 29_000 };
    const later = reduceDoorbell(jumped.state, motion('http://127.0.0.1/later.jpg', NOW + 29_000), next);
    expect(later.motion).toBe(true);
    expect(later.snapshotUrl).toBe('http://127.0.0.1/later.jpg');
  });

  it('a press stamped a year ahead rings, and so does the next real one', () => {
    const jumped = reduceDoorbell(initialDoorbellState(), press('a', NOW + YEAR), fresh);
    expect(jumped.ring).toBe(true);
    expect(reduceDoorbell(jumped.state, press('b', NOW + 10_000), { receivedAt: NOW + 10_500, signedAt: NOW + 10_000 }).ring).toBe(true);
  });

  it('marks saved in the future by older versions are repaired at start-up', () => {
    const saved: DoorbellState = { ...initialDoorbellState(), lastAt: { press: NOW + YEAR, motion: NOW - 5_000 } };
    const repaired = repairDoorbellMarks(saved, NOW);
    expect(repaired.lastAt).toEqual({ press: NOW, motion: NOW - 5_000 });
    expect(reduceDoorbell(repaired, press('c', NOW + 1_000), { receivedAt: NOW + 1_200, signedAt: NOW + 1_000 }).ring).toBe(true);
    expect(repairDoorbellMarks(repaired, NOW)).toBe(repaired);
  });
});

describe('videoavailable is kept', () => {
  it('records the recording id and cause without ringing', () => {
    const result = reduceDoorbell(initialDoorbellState(), { doorbellId: 'D1', at: NOW, kind: 'videoAvailable', dvrId: 'dvr-9', cause: 'buttonpush', startTime: NOW - 5_000 }, fresh);
    expect(result.ring || result.motion).toBe(false);
    expect(result.state.lastVideo).toEqual({ dvrId: 'dvr-9', cause: 'buttonpush', startTime: NOW - 5_000, availableAt: NOW });
    expect(result.recording).toBe(true);
  });

  const video = (dvrId: string, startTime?: number): DoorbellEvent => ({ doorbellId: 'D1', at: NOW, kind: 'videoAvailable', dvrId, cause: 'motion', ...(startTime === undefined ? {} : { startTime }) });

  it('a redelivered videoavailable changes nothing the second time: same recording, same time it became available', () => {
    const first = reduceDoorbell(initialDoorbellState(), video('dvr-1'), fresh);
    const again = reduceDoorbell(first.state, video('dvr-1'), { receivedAt: NOW + 30_000, signedAt: NOW + 29_000 });
    expect(again.recording).not.toBe(true);
    expect(again.state.lastVideo).toEqual(first.state.lastVideo);
  });

  it('an older recording arriving after a newer one does not replace it', () => {
    const newer = reduceDoorbell(initialDoorbellState(), video('dvr-2', NOW - 1_000), fresh);
    const older = reduceDoorbell(newer.state, video('dvr-1', NOW - 60_000), fresh);
    expect(older.recording).not.toBe(true);
    expect(older.state.lastVideo?.dvrId).toBe('dvr-2');
  });

  it('a recording plays in the camera view while it is younger than replayMinutes, never with 0', () => {
    const { state } = reduceDoorbell(initialDoorbellState(), video('dvr-1'), fresh);
    expect(recentRecording(state, 60, NOW + 59 * 60_000)).toEqual({ dvrId: 'dvr-1', cause: 'motion', availableAt: NOW });
    expect(recentRecording(state, 60, NOW + 61 * 60_000)).toBeUndefined();
    expect(recentRecording(state, 0, NOW)).toBeUndefined();
    // Saved by an earlier version: when it arrived is unknown, so it is not played.
    expect(recentRecording({ ...state, lastVideo: { dvrId: 'old', cause: 'motion' } }, 60, NOW)).toBeUndefined();
  });
});

describe('doorbell state is plain JSON', () => {
  it('round-trips and rejects a bad context', () => {
    let state: DoorbellState = initialDoorbellState();
    state = reduceDoorbell(state, press('x'), fresh).state;
    state = reduceDoorbell(state, motion('http://127.0.0.1/m.jpg'), fresh).state;
    expect(parseDoorbellState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    expect(parseDoorbellState({ version: 2 })).toBeUndefined();
  });
});
