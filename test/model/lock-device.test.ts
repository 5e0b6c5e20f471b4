// The lock device on its own, without HomeKit or Matter: a store in memory and fake timers. What it
// announces is what every view renders, so the rules are checked here once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { LockChange } from '../../src/model/device-changes.js';
import { memoryStore, type DeviceStore } from '../../src/model/device-store.js';
import type { Actor, LockEvent } from '../../src/model/events.js';
import { AUTO_LOCK_ORIGIN } from '../../src/model/lock-guard.js';
import { AUTO_LOCK_FOLLOW_MS, GUARD_DELAY_KEY, LOCK_STATE_KEY, LockDevice } from '../../src/model/lock-device.js';
import type { LockEntry } from '../../src/model/device-entry.js';
import type { LockAction } from '../../src/model/lock-commands.js';
import { systemClock } from '../../src/util/clock.js';

const T0 = 1_700_000_000_000;
const actor = { kind: 'person', userId: 'u-1' } as const;
const lockEv = (state: 'locked' | 'unlocked', at?: number, by: { device?: 'lock' | 'keypad'; actor?: Actor } = {}): LockEvent =>
  ({ lockId: 'L1', at, kind: 'lockState', state, source: 'operation', device: by.device ?? 'lock', actor: by.actor ?? actor });
const doorEv = (state: 'open' | 'closed' | 'ajar' | 'init' | 'unknown', at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'doorState', state });
const statusEv = (state: 'locked' | 'unlocked', at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'lockState', state, source: 'status', device: 'lock', actor });
const onlineEv = (online: boolean, at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'online', online });

interface Written {
  key: string;
  when: 'batched' | 'now';
}

function setup(entry: Partial<LockEntry> = {}, initial: Record<string, unknown> = {}) {
  const lines: string[] = [];
  const writes: Written[] = [];
  const memory = memoryStore(initial);
  const store: DeviceStore = {
    read: (key) => memory.read(key),
    write: (key, value, when) => {
      writes.push({ key, when });
      memory.write(key, value, when);
    },
    dispose: () => undefined,
  };
  const operations: { action: LockAction; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const log = { info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`), debug: () => undefined };
  const device = new LockDevice(
    {
      log,
      store,
      clock: { ...systemClock, now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => { clearTimeout(h as NodeJS.Timeout); } },
      describeCommandFailure: (error) => `${(error as Error).message}.`,
      operate: (_id, action) => new Promise<void>((resolve, reject) => operations.push({ action, resolve, reject })),
    },
    { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, ...entry },
  );
  const changes: LockChange[] = [];
  device.onChange((change) => changes.push(change));
  return { device, changes, lines, writes, store, operations };
}

const ctx = () => ({ receivedAt: Date.now(), signedAt: Date.now() });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('state and its changes', () => {
  it('applies events, announces each, keeps the state batched, and announces an older event as stale without moving anything', () => {
    const { device, changes, writes, store } = setup();
    device.apply(lockEv('locked', T0), ctx());
    device.apply(lockEv('unlocked', T0 - 5_000), ctx());
    expect(device.state.lock).toBe('locked');
    expect(changes.map((c) => c.cause)).toEqual(['event', 'stale']);
    expect(writes.filter((w) => w.key === LOCK_STATE_KEY).every((w) => w.when === 'batched')).toBe(true);
    expect(store.read(LOCK_STATE_KEY)).toMatchObject({ lock: 'locked' });
  });

  it('starts from what the store kept, and fresh (with a warning) from what it cannot read', () => {
    const first = setup();
    first.device.apply(lockEv('unlocked', T0), ctx());
    const again = setup({}, { [LOCK_STATE_KEY]: first.store.read(LOCK_STATE_KEY) });
    expect(again.device.state.lock).toBe('unlocked');
    const broken = setup({}, { [LOCK_STATE_KEY]: { version: 1, lock: 'sideways' } });
    expect(broken.device.state.lock).toBe('unknown');
    expect(broken.lines.join('\n')).toMatch(/saved state could not be read/);
  });

  it('ignores an event for another lock', () => {
    const { device, changes } = setup();
    device.apply({ ...lockEv('locked'), lockId: 'L2' }, ctx());
    expect(changes).toEqual([]);
    expect(device.state.lock).toBe('unknown');
  });

  it('a new entry renames the lock and is announced; a lock_name_changed name gives way to a new config name', () => {
    const { device, changes } = setup();
    device.apply({ lockId: 'L1', at: T0, kind: 'lockName', name: 'Porch' }, ctx());
    expect(device.name).toBe('Porch');
    device.update({ kind: 'lock', id: 'L1', name: 'Garden Gate', doorSensor: true });
    expect(device.name).toBe('Garden Gate');
    expect(changes.at(-1)?.cause).toBe('entry');
  });
});

describe('commands', () => {
  it('a command that succeeds is announced with who asked and brings an offline lock back online', async () => {
    const { device, changes, operations, lines } = setup();
    device.apply(onlineEv(false, T0), ctx());
    const done = device.command('unlock', 'a Matter controller');
    operations[0]?.resolve();
    await done;
    expect(device.state).toMatchObject({ lock: 'unlocked', online: true });
    expect(changes.at(-1)).toMatchObject({ cause: 'command', action: 'unlock', origin: 'a Matter controller', settled: true });
    expect(lines.join('\n')).toMatch(/answered a command, so it is back online/);
  });

  it('a command that fails is announced (not superseded) and rejects for whoever sent it', async () => {
    const { device, changes, operations, lines } = setup();
    const done = device.command('lock', 'Apple Home');
    operations[0]?.reject(new Error('the bridge is busy'));
    await expect(done).rejects.toThrow('the bridge is busy');
    expect(changes.at(-1)).toMatchObject({ cause: 'commandFailed', action: 'lock', superseded: false });
    expect(lines.join('\n')).toMatch(/error Front Door: could not lock from Apple Home: the bridge is busy\./);
  });
});

describe('the guard runs on the device', () => {
  it('auto-locks once the door has been closed for the delay; the lock callback that follows is marked as the auto-lock', async () => {
    const { device, changes, operations } = setup({ autoLockSeconds: 30 });
    device.apply(onlineEv(true, T0), ctx());
    device.apply(doorEv('closed', T0), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(29_000);
    expect(operations).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(operations.map((o) => o.action)).toEqual(['lock']);
    operations[0]?.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(changes.at(-1)).toMatchObject({ cause: 'command', origin: AUTO_LOCK_ORIGIN });
    await vi.advanceTimersByTimeAsync(2_000);
    device.apply(lockEv('locked', Date.now()), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', byAutoLock: true });
    // Only the one callback is the auto-lock's: the next lock is a person's again.
    device.apply(lockEv('locked', Date.now() + 1), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', byAutoLock: false });
  });

  /** A lock with a 30 s auto-lock, its bridge online and the door reported closed, then locked or unlocked. */
  const onlineAndClosed = (lock: 'locked' | 'unlocked') => {
    const made = setup({ autoLockSeconds: 30 });
    made.device.apply(onlineEv(true, T0), ctx());
    made.device.apply(doorEv('closed', T0), ctx());
    made.device.apply(lockEv(lock, T0), ctx());
    return made;
  };

  it('a status report (the answer to a status request, e.g. the delivery check\'s) is not an action: it neither restarts a running auto-lock countdown nor delays it', async () => {
    const { device, operations } = onlineAndClosed('unlocked');
    await vi.advanceTimersByTimeAsync(20_000);
    device.apply(statusEv('unlocked', Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    expect(operations.map((o) => o.action)).toEqual(['lock']);
  });

  it('a status report never starts an auto-lock: an unlock learned only from a report (its unlock callback, and maybe the door\'s, went missing) sends nothing', async () => {
    const { device, operations } = onlineAndClosed('locked');
    await vi.advanceTimersByTimeAsync(60_000);
    device.apply(statusEv('unlocked', Date.now()), ctx());
    expect(device.state.lock).toBe('unlocked');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(operations).toEqual([]);
    // A report that the lock is locked still stops a countdown that can no longer run.
    device.apply(lockEv('unlocked', Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    device.apply(statusEv('locked', Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(operations).toEqual([]);
  });

  it('auto-lock needs the door sensor the user declared: a lock whose door reports without doorSensor shows the sensor but never auto-locks', async () => {
    const { device, operations, lines } = setup({ autoLockSeconds: 30, doorSensor: false });
    expect(lines.filter((l) => l.includes('needs a door sensor'))).toHaveLength(1);
    device.apply(lockEv('unlocked', T0), ctx());
    device.apply(doorEv('closed', Date.now()), ctx());
    expect(device.state.doorSensorSeen).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(operations).toHaveLength(0);
  });

  it('the last action is a model word in the state, the auto-lock\'s own included, and the door history follows applied door events', async () => {
    const { device, operations } = setup({ autoLockSeconds: 5 });
    device.apply(doorEv('closed', T0), ctx());
    device.apply(lockEv('unlocked', T0 + 1, { device: 'keypad' }), ctx());
    expect(device.state.lastAction).toBe('unsecuredByKeypad');
    await vi.advanceTimersByTimeAsync(5_000);
    operations[0]?.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(device.state.lastAction).toBe('securedByAutoLock');
    device.apply(doorEv('open', Date.now()), ctx());
    device.apply(doorEv('closed', Date.now()), ctx());
    expect(device.doorHistory.entries.map(([, , open]) => open)).toEqual([0, 1, 0]);
    expect(device.doorHistory.timesOpened).toBe(1);
  });

  it('a lock callback long after the auto-lock is not attributed to it', async () => {
    const { device, changes, operations } = setup({ autoLockSeconds: 10 });
    device.apply(onlineEv(true, T0), ctx());
    device.apply(doorEv('closed', T0), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    operations[0]?.reject(new Error('busy'));
    // Tried once more after 30 s, and failing again.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(operations).toHaveLength(2);
    operations[1]?.reject(new Error('busy'));
    await vi.advanceTimersByTimeAsync(AUTO_LOCK_FOLLOW_MS + 1_000);
    device.apply(lockEv('locked', Date.now()), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', byAutoLock: false });
  });

  it('the left-open alert is announced after its delay and cleared when the door closes', async () => {
    const { device, changes } = setup({ leftOpenSeconds: 60 });
    device.apply(doorEv('open', T0), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(device.alerts.leftOpen).toBe(true);
    expect(changes.at(-1)).toMatchObject({ cause: 'alerts', alerts: { leftOpen: true, leftUnlocked: false } });
    device.apply(doorEv('closed', Date.now()), ctx());
    expect(device.alerts.leftOpen).toBe(false);
  });

  it('a delay set from a controller is kept at once and wins until the config value changes', () => {
    const { device, writes, store } = setup({ autoLockSeconds: 30 });
    device.setAutoLockSeconds(120.4, 'HomeKit');
    expect(device.autoLockSeconds()).toBe(120);
    expect(writes.at(-1)).toEqual({ key: GUARD_DELAY_KEY, when: 'now' });
    const restarted = setup({ autoLockSeconds: 30 }, { [GUARD_DELAY_KEY]: store.read(GUARD_DELAY_KEY) });
    expect(restarted.device.autoLockSeconds()).toBe(120);
    const reconfigured = setup({ autoLockSeconds: 45 }, { [GUARD_DELAY_KEY]: store.read(GUARD_DELAY_KEY) });
    expect(reconfigured.device.autoLockSeconds()).toBe(45);
    device.setAutoLockSeconds(99_999, 'HomeKit');
    expect(device.autoLockSeconds()).toBe(3600);
  });

  it('warns once when auto-lock has no door sensor to rely on', () => {
    const { device, lines } = setup({ autoLockSeconds: 30, doorSensor: false });
    device.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false, autoLockSeconds: 30 });
    expect(lines.filter((l) => l.includes('needs a door sensor'))).toHaveLength(1);
  });

  it('after dispose nothing is applied, announced or sent', async () => {
    const { device, changes, operations } = setup({ autoLockSeconds: 5 });
    device.apply(onlineEv(true, T0), ctx());
    device.apply(doorEv('closed', T0), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    const before = changes.length;
    device.dispose();
    await vi.advanceTimersByTimeAsync(10_000);
    device.apply(lockEv('locked', Date.now()), ctx());
    expect(changes).toHaveLength(before);
    expect(operations).toHaveLength(0);
    await expect(device.command('lock', 'a test')).rejects.toThrow(/no longer served/);
  });
});

describe('auto-lock acts only on fresh facts', () => {
  const sentLocks = (operations: { action: LockAction }[]) => operations.filter((o) => o.action === 'lock').length;

  it('after a start the saved door position is shown but not acted on, until the next closed report', async () => {
    const first = setup({ autoLockSeconds: 30 });
    first.device.apply(doorEv('closed', T0), ctx());
    first.device.apply(lockEv('unlocked', T0), ctx());
    first.device.dispose();
    const again = setup({ autoLockSeconds: 30 }, { [LOCK_STATE_KEY]: first.store.read(LOCK_STATE_KEY) });
    expect(again.device.state).toMatchObject({ lock: 'unlocked', door: 'closed', online: true });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(again.operations).toHaveLength(0);
    // A status answer reports the lock, not the door: still nothing.
    again.device.apply(statusEv('unlocked', Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(600_000);
    expect(again.operations).toHaveLength(0);
    again.device.apply(doorEv('closed'), ctx());
    await vi.advanceTimersByTimeAsync(29_000);
    expect(again.operations).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(again.operations.map((o) => o.action)).toEqual(['lock']);
  });

  it.each([
    ['an online notice after offline', (device: LockDevice) => { device.apply(onlineEv(false), ctx()); device.apply(onlineEv(true), ctx()); }],
    ['an online notice without an offline one (a short outage)', (device: LockDevice) => { device.apply(onlineEv(true), ctx()); }],
    ['a status report proving an offline bridge reachable', (device: LockDevice) => { device.apply(onlineEv(false), ctx()); device.apply(statusEv('unlocked', Date.now()), ctx()); }],
  ])('after the bridge comes back (%s) the door before the outage is not acted on until a fresh closed', async (_label, backOnline) => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    backOnline(device);
    expect(device.state).toMatchObject({ online: true, lock: 'unlocked', door: 'closed' });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(operations).toHaveLength(0);
    device.apply(doorEv('closed'), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(operations.map((o) => o.action)).toEqual(['lock']);
  });

  it('when events may have been missed (not arriving) the door before is not acted on until a fresh closed', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    device.eventsMayBeMissed();
    expect(device.state).toMatchObject({ lock: 'unlocked', door: 'closed' });
    // A lock event would restart the countdown on a door it knows; here the door is not known.
    device.apply(lockEv('unlocked', Date.now()), ctx());
    await vi.advanceTimersByTimeAsync(600_000);
    expect(operations).toHaveLength(0);
    device.apply(doorEv('closed'), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(operations.map((o) => o.action)).toEqual(['lock']);
  });

  it.each(['unknown', 'init'] as const)('a door %s report after closed: the reducer keeps showing closed, the countdown stops until a fresh closed', async (report) => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(20_000);
    device.apply(doorEv(report), ctx());
    expect(device.state.door).toBe('closed');
    await vi.advanceTimersByTimeAsync(600_000);
    expect(operations).toHaveLength(0);
    device.apply(doorEv('closed'), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(operations.map((o) => o.action)).toEqual(['lock']);
  });

  it('"fresh by event time": an old closed, retried and re-signed after a restart, shows but starts no countdown; a closed that happened after the start does', async () => {
    // At shutdown: the lock unlocked, the door open.
    const first = setup({ autoLockSeconds: 30 });
    first.device.apply(lockEv('unlocked', T0), ctx());
    first.device.apply(doorEv('open', T0 + 1_000), ctx());
    first.device.dispose();
    // Homebridge is down for 10 minutes; meanwhile the door closes (T0+2 min) and opens (T0+3 min).
    vi.setSystemTime(T0 + 600_000);
    const again = setup({ autoLockSeconds: 30 }, { [LOCK_STATE_KEY]: first.store.read(LOCK_STATE_KEY) });
    await vi.advanceTimersByTimeAsync(210_000);
    // The service retries the closed, signed afresh: it arrives now, but happened before the start.
    again.device.apply(doorEv('closed', T0 + 120_000), ctx());
    expect(again.device.state.door).toBe('closed');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sentLocks(again.operations)).toBe(0);
    again.device.apply(doorEv('open', T0 + 180_000), ctx());
    expect(again.device.state.door).toBe('open');
    // The door closes now: that report happened after the start, so the countdown runs.
    again.device.apply(doorEv('closed', Date.now() - 1_000), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sentLocks(again.operations)).toBe(1);
  });

  it('after the bridge is back online, a closed stamped before it came back starts nothing; one stamped after does', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(lockEv('unlocked', T0), ctx());
    device.apply(onlineEv(false, T0), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    const back = Date.now();
    device.apply(onlineEv(true, back), ctx());
    await vi.advanceTimersByTimeAsync(5_000);
    // The bridge uploads its log of the outage late: a closed from during it.
    device.apply(doorEv('closed', back - 30_000), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sentLocks(operations)).toBe(0);
    device.apply(doorEv('closed', back + 1_000), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sentLocks(operations)).toBe(1);
  });

  it('a door unknown report: a closed stamped before it, arriving after it, starts nothing; an unknown older than the closed leaves it fresh', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    device.apply(doorEv('unknown', Date.now()), ctx());
    device.apply(doorEv('closed', Date.now() - 5_000), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sentLocks(operations)).toBe(0);
    device.apply(doorEv('closed', Date.now()), ctx());
    // A late unknown from before that closed changes nothing for it.
    device.apply(doorEv('unknown', Date.now() - 10_000), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sentLocks(operations)).toBe(1);
  });

  it('events resuming after "not arriving": a closed from before they resumed starts nothing', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(10_000);
    device.eventsMayBeMissed();
    await vi.advanceTimersByTimeAsync(300_000);
    // Events arrive again: the retries of what happened in the gap come now.
    device.eventsMayBeMissed();
    device.apply(doorEv('closed', Date.now() - 100_000), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sentLocks(operations)).toBe(0);
  });

  it('a lock clock running ahead: a closed it stamped after the start counts as fresh once read in the service clock', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    await vi.advanceTimersByTimeAsync(5_000);
    device.apply(lockEv('unlocked', Date.now()), ctx());
    // Stamped 60 s ahead by the lock clock, sent at once: it happened now, after the start.
    device.apply(doorEv('closed', Date.now() + 60_000), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sentLocks(operations)).toBe(1);
  });

  it('a command from a controller cancels the countdown when it is asked for, and no auto-lock is queued behind it', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(29_000);
    // Apple Home unlocks (a slow bridge: the command is still on its way when the countdown would end).
    void device.request('unlock', 'Apple Home');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    operations[0]?.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    // The unlock went through: a new countdown from now.
    await vi.advanceTimersByTimeAsync(29_000);
    expect(sentLocks(operations)).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock', 'lock']);
  });

  it('a countdown that ends while any command is on its way sends nothing; a failed command from a controller starts a new countdown', async () => {
    const { device, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    void device.request('unlock', 'a Matter controller');
    // A fresh door report starts a countdown, but it ends while the command is still on its way.
    device.apply(doorEv('closed'), ctx());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    operations[0]?.reject(new Error('the bridge is busy'));
    await vi.advanceTimersByTimeAsync(29_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock', 'lock']);
  });

  it('a failed auto-lock closes the attribution window: a person locking a few seconds later is that person', async () => {
    const { device, changes, operations } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    operations[0]?.reject(new Error('the bridge is busy'));
    await vi.advanceTimersByTimeAsync(5_000);
    device.apply(lockEv('locked', Date.now(), { device: 'keypad' }), ctx());
    expect(changes.at(-1)).toMatchObject({ cause: 'event', byAutoLock: false });
  });

  it('the lock callback of its own auto-lock is worded as auto-lock, with how long the door was closed', async () => {
    const { device, operations, lines } = setup({ autoLockSeconds: 30 });
    device.apply(doorEv('closed'), ctx());
    device.apply(lockEv('unlocked', T0), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    operations[0]?.resolve();
    await vi.advanceTimersByTimeAsync(1_000);
    lines.length = 0;
    const own = device.apply(lockEv('locked', Date.now(), { actor: { kind: 'person', userId: 'u-1', firstName: 'Alex', lastName: 'Owner' } }), ctx());
    expect(own).toEqual({ autoLockSeconds: 30 });
    expect(lines).toEqual(['info Front Door: Locked by auto-lock (the door was closed for 30 s).']);
    expect(lines.join('\n')).not.toMatch(/remotely|Alex/);
  });
});
