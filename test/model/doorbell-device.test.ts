// The doorbell device on its own: a store in memory and fake timers for the motion timeout.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { DoorbellChange } from '../../src/model/device-changes.js';
import { memoryStore } from '../../src/model/device-store.js';
import { CHIME_KEY, DOORBELL_STATE_KEY, DoorbellDevice } from '../../src/model/doorbell-device.js';
import type { DoorbellEvent } from '../../src/model/events.js';
import { systemClock } from '../../src/util/clock.js';

const T0 = 1_700_000_000_000;
const press = (at: number, dvrId?: string): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'doorbellPress', dvrId });
const motion = (at: number, imageUrl?: string): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'motion', imageUrl });
const ctx = () => ({ receivedAt: Date.now(), signedAt: Date.now() });

function setup(initial: Record<string, unknown> = {}) {
  const store = memoryStore(initial);
  const lines: string[] = [];
  const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m), debug: () => undefined };
  const clock = { ...systemClock, now: () => Date.now(), setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => { clearTimeout(h as NodeJS.Timeout); } };
  const device = new DoorbellDevice({ log, store, clock }, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
  const changes: DoorbellChange[] = [];
  device.onChange((change) => changes.push(change));
  return { device, store, lines, changes };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('presses', () => {
  it('a press rings once; the same press again does not', () => {
    const { device, changes } = setup();
    device.apply(press(T0, 'dvr-1'), ctx());
    device.apply(press(T0, 'dvr-1'), ctx());
    expect(changes.map((c) => c.cause === 'event' && c.ring)).toEqual([true, false]);
  });

  it('with the chime off a press is recorded but rings nothing; the choice is kept at once and survives a restart', () => {
    const { device, changes, store, lines } = setup();
    device.setChime(false);
    expect(changes.at(-1)).toEqual({ cause: 'chime', state: device.state, on: false });
    device.apply(press(T0), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', ring: false, muted: true });
    expect(device.state.lastPress?.at).toBe(T0);
    expect(lines.join('\n')).toMatch(/the chime is off, so no phone or HomePod rings/);
    const restarted = setup({ [CHIME_KEY]: store.read(CHIME_KEY), [DOORBELL_STATE_KEY]: store.read(DOORBELL_STATE_KEY) });
    expect(restarted.device.chimeOn).toBe(false);
    restarted.device.setChime(true);
    // Turning it on again rings nothing belatedly.
    expect(restarted.changes.filter((c) => c.cause === 'event')).toEqual([]);
  });
});

describe('motion', () => {
  it('is on from a motion event until the timeout, which a new motion restarts; the still is announced', async () => {
    const { device, changes } = setup();
    device.apply(motion(T0, 'https://example.invalid/1.jpg'), ctx());
    expect(device.motion).toBe(true);
    expect(changes.at(-1)).toMatchObject({ cause: 'event', motion: true, snapshot: { url: 'https://example.invalid/1.jpg' } });
    await vi.advanceTimersByTimeAsync(20_000);
    device.apply(motion(Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(20_000);
    expect(device.motion).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(device.motion).toBe(false);
    expect(changes.at(-1)).toMatchObject({ cause: 'motionEnded' });
  });

  it('never outlives a restart or a dispose', async () => {
    const { device, store, changes } = setup();
    device.apply(motion(T0), ctx());
    const restarted = setup({ [DOORBELL_STATE_KEY]: store.read(DOORBELL_STATE_KEY) });
    expect(restarted.device.motion).toBe(false);
    const before = changes.length;
    device.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(changes).toHaveLength(before);
  });
});

describe('recordings', () => {
  const video = (dvrId: string): DoorbellEvent => ({ doorbellId: 'D1', at: Date.now(), kind: 'videoAvailable', dvrId, cause: 'buttonpush' });

  it('a recording becomes available once: redelivered, it changes nothing (same recording, same time it became available) and is kept across a restart', () => {
    const { device, changes, store } = setup();
    device.apply(video('dvr-1'), ctx());
    const first = device.state.lastVideo;
    expect(first).toMatchObject({ dvrId: 'dvr-1', availableAt: T0 });
    vi.advanceTimersByTime(30_000);
    device.apply(video('dvr-1'), ctx());
    expect(device.state.lastVideo).toEqual(first);
    expect(changes.map((c) => c.cause === 'event' && c.recording)).toEqual([true, false]);
    device.apply(video('dvr-2'), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', recording: true });
    expect(device.state.lastVideo).toMatchObject({ dvrId: 'dvr-2', availableAt: T0 + 30_000 });
    vi.runOnlyPendingTimers();
    const restarted = setup({ [DOORBELL_STATE_KEY]: store.read(DOORBELL_STATE_KEY) });
    expect(restarted.device.state.lastVideo).toMatchObject({ dvrId: 'dvr-2', availableAt: T0 + 30_000 });
  });
});

describe('a fresh recording', () => {
  it('is the newest recording while it became available less than a motion window ago, across a restart; none before any', () => {
    const { device, store } = setup();
    expect(device.freshRecording).toBeUndefined();
    device.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-1', cause: 'doorbellPress', startTime: T0 - 5_000 }, ctx());
    expect(device.freshRecording).toBe('dvr-1');
    vi.advanceTimersByTime(29_999);
    const restarted = setup({ [DOORBELL_STATE_KEY]: store.read(DOORBELL_STATE_KEY) });
    expect(restarted.device.freshRecording).toBe('dvr-1');
    vi.advanceTimersByTime(1);
    expect(restarted.device.freshRecording).toBeUndefined();
  });
});
