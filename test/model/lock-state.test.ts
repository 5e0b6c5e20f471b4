import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { LockEvent } from '../../src/model/events.js';
import {
  commandSucceeded,
  initialLockState,
  lockDisplayName,
  parseLockState,
  RECENT_EVENTS,
  reduceLock,
  repairLockMarks,
  withEntryName,
  type LockState,
} from '../../src/model/lock-state.js';

const person = { kind: 'person', userId: 'u1', firstName: 'Ada', lastName: 'Lovelace' } as const;

const locked = (at: number | undefined, source: 'operation' | 'status' = 'operation'): LockEvent => ({
  lockId: 'L1', at, kind: 'lockState', state: 'locked', source, device: 'lock', actor: person,
});
const unlocked = (at: number | undefined): LockEvent => ({
  lockId: 'L1', at, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: person,
});
const door = (state: 'open' | 'closed' | 'ajar' | 'init' | 'unknown', at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'doorState', state });
const battery = (device: 'lock' | 'keypad', level: number, _low: boolean, at?: number): LockEvent => ({
  lockId: 'L1', at, kind: 'battery', device, raw: `raw-${level}`,
});
const online = (value: boolean, at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'online', online: value });

/** Signed well after every event time in these tests, so no time here is bounded by the signature. */
const SIGNED = 1_767_225_600_000;
const delivered = (receivedAt: number) => ({ receivedAt, signedAt: SIGNED });

function run(events: LockEvent[], start: LockState = initialLockState()): LockState {
  return events.reduce((state, event, index) => reduceLock(state, event, delivered(1_000 + index)).state, start);
}

describe('lock state before any event', () => {
  it('starts UNKNOWN with no door, battery or keypad known and the bridge online', () => {
    const state = initialLockState();
    expect(state.lock).toBe('unknown');
    expect(state.door).toBe('unknown');
    expect(state.battery).toBeNull();
    expect(state.keypadSeen).toBe(false);
    expect(state.online).toBe(true);
  });
});

describe('mapping of lock events onto state', () => {
  it('operation/status lock and unlock set the lock state', () => {
    expect(run([locked(1)]).lock).toBe('locked');
    expect(run([locked(1), unlocked(2)]).lock).toBe('unlocked');
    expect(run([unlocked(1), locked(2, 'status')]).lock).toBe('locked');
  });

  it('door closed, open and ajar set the door; "init/unknown change nothing" but reveal a door sensor', () => {
    expect(run([door('closed', 1)]).door).toBe('closed');
    expect(run([door('closed', 1), door('ajar', 2)]).door).toBe('ajar');
    const afterInit = run([door('open', 1), door('init', 2), door('unknown', 3)]);
    expect(afterInit.door).toBe('open');
    expect(run([door('init')]).doorSensorSeen).toBe(true);
    expect(run([door('init')]).door).toBe('unknown');
  });

  it('lock and keypad batteries are kept apart; a keypad battery event reveals the keypad', () => {
    const state = run([battery('lock', 15, true, 1), battery('keypad', 20, true, 1)]);
    expect(state.battery).toEqual({ raw: 'raw-15' });
    expect(state.keypadBattery).toEqual({ raw: 'raw-20' });
    expect(state.keypadSeen).toBe(true);
    expect(run([battery('lock', 100, false)]).keypadSeen).toBe(false);
  });

  it('systemstatus offline and online follow each other', () => {
    expect(run([online(false, 1)]).online).toBe(false);
    expect(run([online(false, 1), online(true, 2)]).online).toBe(true);
  });

  it('privacy, vacation and keypad-enabled flags, and lock_name_changed, are kept in state', () => {
    const state = run([
      { lockId: 'L1', at: 1, kind: 'configFlag', flag: 'privacyMode', value: true },
      { lockId: 'L1', at: 2, kind: 'configFlag', flag: 'keypadEnabled', value: false },
      { lockId: 'L1', at: 3, kind: 'lockName', name: 'Back Door' },
    ]);
    expect(state.flags).toEqual({ privacyMode: true, keypadEnabled: false });
    expect(state.eventName).toBe('Back Door');
  });
});

describe('ordering per device and aspect', () => {
  it('"an event older than the last applied one changes nothing"', () => {
    const result = reduceLock(run([locked(2_000)]), unlocked(1_000), delivered(5_000));
    expect(result.applied).toBe(false);
    expect(result.state.lock).toBe('locked');
    expect(result.state.recent.at(-1)).toMatchObject({ kind: 'lockState', applied: false });
  });

  it('an event with the same time as the last applied one is not older, so it applies', () => {
    expect(run([locked(2_000), unlocked(2_000)]).lock).toBe('unlocked');
  });

  it('"events without a time apply in arrival order"', () => {
    expect(run([locked(2_000), unlocked(undefined)]).lock).toBe('unlocked');
    expect(run([unlocked(undefined), locked(undefined)]).lock).toBe('locked');
    // and an untimed event does not move the ordering mark
    expect(run([locked(2_000), unlocked(undefined), locked(1_000)]).lock).toBe('unlocked');
  });

  it('aspects are ordered independently: a newer lock event does not block an older battery event', () => {
    const state = run([locked(5_000), online(false, 5_000), battery('lock', 5, true, 1_000), door('open', 1_000), online(true, 4_000)]);
    expect(state.battery?.raw).toBe('raw-5');
    expect(state.door).toBe('open');
    expect(state.online).toBe(false);
  });

  it('keypad battery and lock battery are separate aspects', () => {
    const state = run([battery('lock', 100, false, 5_000), battery('keypad', 5, true, 1_000)]);
    expect(state.keypadBattery?.raw).toBe('raw-5');
  });

  it('whatever the arrival order of timed lock events, the newest one wins (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 20 }), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), (times, lockFlags) => {
        const events = times.map((at, i) => (lockFlags[i] === true ? locked(at) : unlocked(at)));
        const newest = events.reduce((a, b) => ((a.at ?? 0) >= (b.at ?? 0) ? a : b));
        const expected = newest.kind === 'lockState' ? newest.state : 'unknown';
        expect(run(events).lock).toBe(expected);
        expect(run([...events].reverse()).lock).toBe(expected);
      }),
    );
  });
});

describe('state is plain JSON kept in accessory.context', () => {
  it('survives a JSON round trip and validates when read back', () => {
    const state = run([locked(1), door('open', 2), battery('keypad', 20, true, 3), online(false, 4)]);
    expect(parseLockState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it('a state saved by an earlier version, whose batteries also held a level and a low flag, reads back with their words', () => {
    const state = run([battery('lock', 15, true, 1), battery('keypad', 20, true, 1)]);
    const saved = { ...state, battery: { level: 15, low: true, raw: 'raw-15' }, keypadBattery: { level: 20, low: true, raw: 'raw-20' } };
    expect(parseLockState(JSON.parse(JSON.stringify(saved)))).toEqual(state);
  });

  it('"a bad context starts fresh": anything that does not validate reads as nothing', () => {
    expect(parseLockState(undefined)).toBeUndefined();
    expect(parseLockState({ version: 1, lock: 'half-open' })).toBeUndefined();
    expect(parseLockState('locked')).toBeUndefined();
  });

  it('keeps only the last few events', () => {
    const state = run(Array.from({ length: RECENT_EVENTS + 5 }, (_, i) => locked(i + 1)));
    expect(state.recent).toHaveLength(RECENT_EVENTS);
    expect(state.recent.at(-1)?.at).toBe(RECENT_EVENTS + 5);
  });
});

describe('names from config, discovery or lock_name_changed', () => {
  it('lock_name_changed wins until config or discovery give a different name', () => {
    let state = withEntryName(initialLockState(), 'Front Door');
    state = reduceLock(state, { lockId: 'L1', at: 1, kind: 'lockName', name: 'Main Entrance' }, delivered(1)).state;
    expect(lockDisplayName(state, 'Front Door')).toBe('Main Entrance');
    // a restart with the same config keeps the event's name
    state = withEntryName(state, 'Front Door');
    expect(lockDisplayName(state, 'Front Door')).toBe('Main Entrance');
    // a new config name wins
    state = withEntryName(state, 'Porch');
    expect(lockDisplayName(state, 'Porch')).toBe('Porch');
  });
});

describe('a successful remote command', () => {
  it('sets the lock state without moving the ordering mark', () => {
    const state = commandSucceeded(run([locked(5_000)]), 'unlocked');
    expect(state.lock).toBe('unlocked');
    expect(state.lastAt.lock).toBe(5_000);
    expect(reduceLock(state, locked(6_000), delivered(1)).state.lock).toBe('locked');
  });
});

const drift = (at: number): LockEvent => ({ lockId: 'L1', at, kind: 'clockDrift', warningLevel: 'warning', driftedTo: Date.UTC(2000, 0, 1) });
const TOLERANCE = 300_000;
/** Delivered when the service signed it: t = `signedAt`, received 50 ms later. */
const signedAt = (t: number) => ({ receivedAt: t + 50, signedAt: t, toleranceMs: TOLERANCE });

describe('a future-stamped event must never freeze a lock', () => {
  const now = Date.UTC(2026, 5, 1);

  it('an event stamped beyond t plus the tolerance applies and counts as sent now, so later real events still apply', () => {
    const jumped = reduceLock(initialLockState(), locked(now + 365 * 86_400_000), signedAt(now));
    expect(jumped.applied).toBe(true);
    expect(jumped.state.lastAt.lock).toBe(now);
    const real = reduceLock(jumped.state, unlocked(now + 60_000), signedAt(now + 60_000));
    expect(real.applied).toBe(true);
    expect(real.state.lock).toBe('unlocked');
  });

  it('a future-stamped event right after a real one applies, though t (whole seconds) is older than the real one', () => {
    const real = reduceLock(initialLockState(), locked(now + 400), signedAt(now));
    const jumped = reduceLock(real.state, unlocked(now + 365 * 86_400_000), signedAt(now));
    expect(jumped.applied).toBe(true);
    expect(jumped.state.lastAt.lock).toBe(now + 400);
    expect(reduceLock(jumped.state, locked(now + 600), signedAt(now)).state.lock).toBe('locked');
  });

  it('door init and unknown move no ordering mark: open (T-60 s), unknown (T-10 s), then a late closed (T-30 s) ends Closed', () => {
    const door = (state: 'open' | 'closed' | 'unknown' | 'init', at: number): LockEvent => ({ kind: 'doorState', lockId: 'L1', at, state });
    let s = reduceLock(initialLockState(), door('open', now - 60_000), signedAt(now)).state;
    s = reduceLock(s, door('unknown', now - 10_000), signedAt(now)).state;
    expect(s.lockAt?.door).toBe(now - 60_000);
    s = reduceLock(s, door('init', now - 5_000), signedAt(now)).state;
    const late = reduceLock(s, door('closed', now - 30_000), signedAt(now));
    expect(late.applied).toBe(true);
    expect(late.state.door).toBe('closed');
  });

  it('a time up to 2 s after the signature is trusted as it is (t is often whole seconds)', () => {
    const ahead = reduceLock(initialLockState(), locked(now + 1_500), signedAt(now));
    expect(ahead.state.lastAt.lock).toBe(now + 1_500);
    expect(reduceLock(ahead.state, unlocked(now + 1_000), signedAt(now + 1_000)).applied).toBe(false);
  });

  it('a keypad lock stamped 4 minutes ahead by a fast lock clock does not hide the app unlock a second later', () => {
    const keypad = reduceLock(initialLockState(), locked(now + 4 * 60_000), signedAt(now));
    expect(keypad.state).toMatchObject({ lock: 'locked', lastAt: { lock: now } });
    const app = reduceLock(keypad.state, unlocked(now + 1_000), signedAt(now + 1_000));
    expect(app.applied).toBe(true);
    expect(app.state.lock).toBe('unlocked');
  });

  it('with one event of a run stamped years ahead, the last event sent still decides the state (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 600_000 }), fc.boolean()), { minLength: 1, maxLength: 25 }),
        fc.nat(),
        fc.integer({ min: 2_001, max: 20 * 365 * 86_400_000 }),
        (steps, pick, jump) => {
          const corrupt = pick % steps.length;
          let t = now;
          let state = initialLockState();
          for (const [index, [gap, lock]] of steps.entries()) {
            t += gap;
            const stamped = index === corrupt ? t + jump : t;
            state = reduceLock(state, lock ? locked(stamped) : unlocked(stamped), signedAt(t)).state;
          }
          expect(state.lock).toBe(steps.at(-1)?.[1] === true ? 'locked' : 'unlocked');
        },
      ),
    );
  });

  it('marks saved from a future-stamped event (older versions) are repaired to now at start-up', () => {
    const saved: LockState = { ...initialLockState(), lock: 'locked', lastAt: { lock: now + 365 * 86_400_000, door: now - 1_000 } };
    const repaired = repairLockMarks(saved, now);
    expect(repaired.lastAt).toEqual({ lock: now, door: now - 1_000 });
    expect(reduceLock(repaired, unlocked(now + 1_000), signedAt(now + 1_000)).state.lock).toBe('unlocked');
    // nothing to repair: the very same state comes back
    expect(repairLockMarks(repaired, now)).toBe(repaired);
  });
});

describe('lock_log_timestamp_drifted resets the lock\'s ordering marks', () => {
  const now = Date.UTC(2026, 5, 1);
  const reset = Date.UTC(2000, 0, 1);

  it('without the notice, events from a lock whose clock was reset look older and change nothing', () => {
    const before = run([locked(now), door('closed', now)]);
    expect(reduceLock(before, unlocked(reset + 5_000), signedAt(now + 60_000)).applied).toBe(false);
  });

  it('after the notice, the reset lock\'s manual and keypad operations and door events apply in arrival order', () => {
    let state = run([locked(now), door('closed', now), battery('lock', 100, false, now)]);
    state = reduceLock(state, drift(now + 10_000), signedAt(now + 10_000)).state;
    expect(state.lastAt).toEqual({});
    state = reduceLock(state, unlocked(reset + 5_000), signedAt(now + 20_000)).state;
    expect(state.lock).toBe('unlocked');
    state = reduceLock(state, door('open', reset + 6_000), signedAt(now + 21_000)).state;
    expect(state.door).toBe('open');
    state = reduceLock(state, locked(reset + 9_000), signedAt(now + 30_000)).state;
    expect(state.lock).toBe('locked');
    // "in arrival order": what comes last wins, whatever the reset clock says
    expect(reduceLock(state, unlocked(reset + 7_000), signedAt(now + 31_000)).state.lock).toBe('unlocked');
  });

  it('a status report stamped by the service after the notice does not make the reset clock\'s events look older', () => {
    let state = reduceLock(run([locked(now)]), drift(now + 10_000), signedAt(now + 10_000)).state;
    state = reduceLock(state, locked(now + 20_000, 'status'), signedAt(now + 20_000)).state;
    state = reduceLock(state, unlocked(reset + 1_000), signedAt(now + 30_000)).state;
    expect(state.lock).toBe('unlocked');
  });

  it('a retried delivery stamped before the notice, arriving after it, does not freeze the lock either', () => {
    let state = reduceLock(run([locked(now)]), drift(now + 10_000), signedAt(now + 10_000)).state;
    state = reduceLock(state, unlocked(now + 5_000), signedAt(now + 40_000)).state;
    state = reduceLock(state, locked(reset + 1_000), signedAt(now + 50_000)).state;
    expect(state.lock).toBe('locked');
  });

  it('once the lock\'s clock is set right, its events are ordered by time again', () => {
    let state = reduceLock(run([locked(now)]), drift(now + 10_000), signedAt(now + 10_000)).state;
    state = reduceLock(state, unlocked(now + 60_000), signedAt(now + 60_000)).state;
    expect(reduceLock(state, locked(now + 50_000), signedAt(now + 70_000)).applied).toBe(false);
    expect(state.clockResetAt).toBe(now + 10_000);
  });

  it('after the notice, whatever the reset clock reads, the last event sent decides (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: now - 86_400_000 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }), (lockClock, locks) => {
        let state = run([locked(now - 1_000), unlocked(now)]);
        state = reduceLock(state, drift(now), signedAt(now)).state;
        for (const [i, lock] of locks.entries()) {
          state = reduceLock(state, lock ? locked(lockClock + i) : unlocked(lockClock + i), signedAt(now + i * 1_000)).state;
        }
        expect(state.lock).toBe(locks.at(-1) === true ? 'locked' : 'unlocked');
      }),
    );
  });
});

describe('state reports are applied every time they arrive', () => {
  it('offline, online, offline, online ends online; a battery that goes low, fine, low ends low', () => {
    expect(run([online(false), online(true), online(false), online(true)]).online).toBe(true);
    const low = battery('lock', 5, true);
    const fine = battery('lock', 100, false);
    expect(run([low, fine, low]).battery).toEqual({ raw: 'raw-5' });
  });

  it('for any run of reachability and battery reports, the last one of each wins (property)', () => {
    const report = fc.oneof(fc.boolean().map((v) => online(v)), fc.constantFrom(5, 10, 15, 100).map((level) => battery('lock', level, level < 100)));
    fc.assert(
      fc.property(fc.array(report, { minLength: 1, maxLength: 30 }), (reports) => {
        const state = run(reports);
        const lastOnline = reports.filter((e) => e.kind === 'online').at(-1);
        const lastBattery = reports.filter((e) => e.kind === 'battery').at(-1);
        expect(state.online).toBe(lastOnline?.kind === 'online' ? lastOnline.online : true);
        expect(state.battery?.raw).toBe(lastBattery?.kind === 'battery' ? lastBattery.raw : undefined);
      }),
    );
  });
});

describe('No Response until the bridge is proven reachable', () => {
  const status = (at: number): LockEvent => locked(at, 'status');

  it('a status callback clears offline', () => {
    const state = run([online(false), status(5_000)]);
    expect(state.online).toBe(true);
    expect(state.lock).toBe('locked');
  });

  it('a successful remote command clears offline', () => {
    expect(commandSucceeded(run([online(false)]), 'locked').online).toBe(true);
  });

  it('an operation callback does not: its log may have come over Bluetooth, not through the bridge', () => {
    expect(run([online(false), unlocked(5_000), door('open', 5_000)]).online).toBe(false);
  });

  it('a status report that ordering ignores changes nothing, reachability included', () => {
    expect(run([locked(9_000), online(false), status(5_000)]).online).toBe(false);
  });

  it('a status report older than a timed offline notice does not clear it', () => {
    expect(run([online(false, 9_000), status(5_000)]).online).toBe(false);
    expect(run([online(false, 4_000), status(5_000)]).online).toBe(true);
  });
});

describe('two clocks: each lock clock keeps its own order, across clocks a lock time is read through its learnt lead', () => {
  const now = Date.UTC(2026, 6, 1);
  const keypad = (state: 'locked' | 'unlocked', at: number): LockEvent => ({ lockId: 'L1', at, kind: 'lockState', state, source: 'operation', device: 'keypad', actor: person });
  const manual = (state: 'locked' | 'unlocked', at: number): LockEvent => ({ lockId: 'L1', at, kind: 'lockState', state, source: 'operation', device: 'lock', actor: { kind: 'manual', userId: state === 'locked' ? 'manuallock' : 'manualunlock' } });
  const app = (state: 'locked' | 'unlocked', at: number): LockEvent => ({ lockId: 'L1', at, kind: 'lockState', state, source: 'operation', device: 'lock', actor: person });

  it('a lock 30 s fast sends closed (stamped X) then open (stamped X-5 s, arriving later): the door stays closed', () => {
    const x = now + 30_000;
    let s = reduceLock(initialLockState(), door('closed', x), signedAt(now)).state;
    const late = reduceLock(s, door('open', x - 5_000), signedAt(now + 4_000));
    expect(late.applied).toBe(false);
    s = late.state;
    expect(s.door).toBe('closed');
  });

  it('a manual unlock stamped R+35 s then a keypad lock stamped R+30 s arriving later (a late bridge log): stays unlocked', () => {
    const r = now;
    let s = reduceLock(initialLockState(), manual('unlocked', r + 35_000), signedAt(r + 5_000)).state;
    const late = reduceLock(s, keypad('locked', r + 30_000), signedAt(r + 20_000));
    expect(late.applied).toBe(false);
    s = late.state;
    expect(s.lock).toBe('unlocked');
  });

  it('a keypad lock stamped 240 s ahead then an app unlock 1.5 s later: unlocked', () => {
    const first = reduceLock(initialLockState(), keypad('locked', now + 240_000), signedAt(now));
    expect(first.state).toMatchObject({ lock: 'locked', clockLead: 240_000 });
    const unlock = reduceLock(first.state, app('unlocked', now + 1_500), signedAt(now + 1_000));
    expect(unlock.applied).toBe(true);
    expect(unlock.state.lock).toBe('unlocked');
  });

  it('a lock clock a year ahead, then back: the state follows, and the jump teaches no lead', () => {
    const year = 365 * 86_400_000;
    let s = reduceLock(initialLockState(), keypad('locked', now - 10_000), signedAt(now - 9_000)).state;
    const jumped = reduceLock(s, keypad('unlocked', now + year), signedAt(now));
    expect(jumped.applied).toBe(true);
    s = jumped.state;
    expect(s.lock).toBe('unlocked');
    expect(s.clockLead).toBeUndefined();
    s = reduceLock(s, keypad('locked', now + 20_000), signedAt(now + 20_000)).state;
    expect(s.lock).toBe('locked');
    s = reduceLock(s, door('open', now + 21_000), signedAt(now + 21_000)).state;
    expect(s.door).toBe('open');
  });

  it('a lock stamp behind t teaches nothing; the learnt lead is kept with the state and reset by the drift notice', () => {
    let s = reduceLock(initialLockState(), keypad('locked', now - 60_000), signedAt(now)).state;
    expect(s.clockLead).toBeUndefined();
    s = reduceLock(s, door('closed', now + 30_000), signedAt(now)).state;
    expect(parseLockState(JSON.parse(JSON.stringify(s)))).toMatchObject({ clockLead: 30_000, lockAt: { door: now + 30_000 } });
    s = reduceLock(s, drift(now + 60_000), signedAt(now + 60_000)).state;
    expect(s.clockLead).toBeUndefined();
    expect(s.lockAt).toBeUndefined();
  });

  it('across clocks with a learnt lead: a late keypad lock that happened before an app unlock does not undo it', () => {
    // The lock runs 30 s fast (learnt from a prompt delivery).
    let s = reduceLock(initialLockState(), door('closed', now + 30_000), signedAt(now)).state;
    s = reduceLock(s, app('unlocked', now + 20_000), signedAt(now + 20_000)).state;
    // A keypad lock at now+10 s (stamped now+40 s) arrives late.
    const late = reduceLock(s, keypad('locked', now + 40_000), signedAt(now + 50_000));
    expect(late.applied).toBe(false);
    expect(late.state.lock).toBe('unlocked');
  });

  it('a lock clock set right again is followed at its next prompt delivery: a keypad unlock after an app lock applies', () => {
    let s = reduceLock(initialLockState(), keypad('locked', now + 30_000), signedAt(now)).state;
    expect(s.clockLead).toBe(30_000);
    // The app synchronised the lock's clock; an app lock, then a keypad unlock 10 s later.
    s = reduceLock(s, app('locked', now + 100_000), signedAt(now + 100_000)).state;
    const unlock = reduceLock(s, keypad('unlocked', now + 110_000), signedAt(now + 110_000));
    expect(unlock.applied).toBe(true);
    expect(unlock.state).toMatchObject({ lock: 'unlocked' });
    expect(unlock.state.clockLead).toBeUndefined();
  });

  it('one lock clock keeps its own order whatever its lead and the arrival order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 280_000 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 15 }),
        fc.array(fc.boolean(), { minLength: 15, maxLength: 15 }),
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 15, maxLength: 15 }),
        (lead, happened, opens, delays) => {
          // Each event happens at `now + h`, is stamped by the lock clock `lead` ahead, and is signed
          // (sent or re-sent) some time after it happened; the arrival order is the array's.
          let s = initialLockState();
          happened.forEach((h, i) => {
            const stamped = now + h + lead;
            s = reduceLock(s, door(opens[i] === true ? 'open' : 'closed', stamped), signedAt(now + h + (delays[i] ?? 0))).state;
          });
          const newest = happened.indexOf(Math.max(...happened));
          expect(s.door).toBe(opens[newest] === true ? 'open' : 'closed');
        },
      ),
    );
  });

  it('keypad and manual operations of one lock clock: the newest by the lock clock wins in any arrival order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 280_000 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 15 }),
        fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 15, maxLength: 15 }),
        (lead, happened, kinds) => {
          const events = happened.map((h, i) => {
            const [locks, byHand] = kinds[i] ?? [true, true];
            const stamped = now + h + lead;
            return { event: byHand ? manual(locks ? 'locked' : 'unlocked', stamped) : keypad(locks ? 'locked' : 'unlocked', stamped), signed: now + h };
          });
          const newest = happened.indexOf(Math.max(...happened));
          const expected = (kinds[newest]?.[0] ?? true) ? 'locked' : 'unlocked';
          for (const order of [events, [...events].reverse()]) {
            let s = initialLockState();
            // Signed in arrival order at a time no earlier than the event, as retries are.
            let t = now;
            for (const { event, signed } of order) {
              t = Math.max(t, signed);
              s = reduceLock(s, event, signedAt(t)).state;
            }
            expect(s.lock).toBe(expected);
          }
        },
      ),
    );
  });
});
