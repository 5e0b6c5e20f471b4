import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { ChangeListeners, type ListenerPhase } from '../../src/model/change-listeners.js';
import type { LockChange, LockFeed } from '../../src/model/device-changes.js';
import type { LockEvent } from '../../src/model/events.js';
import { AUTO_LOCK_ORIGIN, AUTO_LOCK_RETRY_MS, LockGuard, type GuardAlerts, type GuardSettings } from '../../src/model/lock-guard.js';
import { initialLockState, type LockState } from '../../src/model/lock-state.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** A lock as the guard sees it: state, a change feed and a command that the test answers. */
class FakeLock implements LockFeed {
  state: LockState = { ...initialLockState(), lock: 'locked', door: 'closed', online: true };
  readonly name = 'Front Door';
  readonly commands: { action: string; origin: string }[] = [];
  failCommands = 0;
  /** A command of someone else's still on its way. */
  pending = false;
  private readonly listeners = new ChangeListeners<LockChange>(quiet);

  onChange(listener: (change: LockChange) => void, phase?: ListenerPhase): () => void {
    return this.listeners.add(listener, phase);
  }

  command(action: 'lock' | 'unlock', origin: string): Promise<void> {
    this.commands.push({ action, origin });
    if (this.failCommands > 0) {
      this.failCommands -= 1;
      return Promise.reject(new Error('the lock\'s Wi-Fi bridge is busy (423)'));
    }
    this.state = { ...this.state, lock: action === 'lock' ? 'locked' : 'unlocked' };
    this.listeners.emit({ cause: 'command', state: this.state, action, origin, settled: true });
    return Promise.resolve();
  }

  /** An applied callback event. */
  event(patch: Partial<LockState>, kind: LockEvent['kind'] = patch.door !== undefined ? 'doorState' : patch.online !== undefined ? 'online' : 'lockState'): void {
    this.state = { ...this.state, ...patch };
    const event = kind === 'doorState'
      ? { kind, lockId: 'L1', at: undefined, state: this.state.door === 'unknown' ? 'unknown' : this.state.door } as LockEvent
      : kind === 'online'
        ? { kind, lockId: 'L1', at: undefined, online: this.state.online } as LockEvent
        : { kind: 'lockState', lockId: 'L1', at: undefined, state: this.state.lock === 'locked' ? 'locked' : 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'person', userId: 'u' } } as LockEvent;
    this.listeners.emit({ cause: 'event', state: this.state, event, context: { receivedAt: Date.now(), signedAt: Date.now() }, byAutoLock: false });
  }
}

const clock = { now: () => Date.now(), setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => { clearTimeout(h as NodeJS.Timeout); } };

function setup(settings: Partial<GuardSettings> = {}) {
  const lock = new FakeLock();
  const alerts: GuardAlerts[] = [];
  const sent: number[] = [];
  const lines: string[] = [];
  const current: GuardSettings = { doorSensor: true, autoLockSeconds: 30, leftOpenSeconds: 0, leftUnlockedSeconds: 0, ...settings };
  const guard = new LockGuard({
    lock, clock, settings: () => current, commandPending: () => lock.pending,
    log: { ...quiet, warn: (m) => lines.push(`warn ${m}`), info: (m) => lines.push(`info ${m}`) },
    onAlerts: (a) => alerts.push(a),
    onAutoLockSent: (at) => sent.push(at),
  });
  // The door reported closed since the guard started: a fact the guard may act on.
  lock.event({ door: 'closed' });
  return { lock, guard, alerts, sent, lines, current };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const locks = (lock: FakeLock) => lock.commands.filter((c) => c.action === 'lock' && c.origin === AUTO_LOCK_ORIGIN).length;

describe('auto-lock: once the lock is known unlocked and the door known closed for that long, one lock command', () => {
  it('unlocked with the door closed for 30 s sends one lock command, and no more', async () => {
    const { lock, sent } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(locks(lock)).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(locks(lock)).toBe(1);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(1);
    expect(lock.state.lock).toBe('locked');
  });

  it('the countdown starts at the later of the unlock and the close', async () => {
    const { lock } = setup();
    lock.event({ door: 'open' });
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(20_000);
    lock.event({ door: 'closed' });
    await vi.advanceTimersByTimeAsync(29_000);
    expect(locks(lock)).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(locks(lock)).toBe(1);
  });

  it.each(['open', 'ajar'] as const)('never with the door %s: the door opening cancels, and nothing is sent while it stays so', async (door) => {
    const { lock } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(25_000);
    lock.event({ door });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(0);
  });

  it('any lock event restarts the countdown; a lock event that locks cancels it', async () => {
    const { lock } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(25_000);
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(25_000);
    expect(locks(lock)).toBe(0);
    lock.event({ lock: 'locked' });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(0);
  });

  it('a HomeKit command cancels it when it is asked for (and an unlock from Apple Home that succeeds starts a new one)', async () => {
    const { lock, guard } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(25_000);
    guard.commandRequested();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(locks(lock)).toBe(0);
    await lock.command('unlock', 'Apple Home');
    await vi.advanceTimersByTimeAsync(25_000);
    expect(locks(lock)).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(locks(lock)).toBe(1);
  });

  it('a countdown that ends while another command is on its way sends nothing', async () => {
    const { lock } = setup();
    lock.event({ lock: 'unlocked' });
    lock.pending = true;
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(0);
  });

  it('the lock going offline cancels it; nothing is sent while offline', async () => {
    const { lock } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(10_000);
    lock.event({ online: false });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(0);
  });

  it('without a door sensor, or with 0 seconds, nothing is ever sent', async () => {
    for (const settings of [{ doorSensor: false }, { autoLockSeconds: 0 }]) {
      const { lock } = setup(settings);
      lock.event({ lock: 'unlocked' });
      await vi.advanceTimersByTimeAsync(600_000);
      expect(locks(lock)).toBe(0);
    }
  });

  it('a failed command is tried once more after 30 s if the conditions still hold, then a warning and no more tries until the next unlock', async () => {
    const { lock, lines } = setup();
    lock.failCommands = 2;
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(locks(lock)).toBe(1);
    await vi.advanceTimersByTimeAsync(AUTO_LOCK_RETRY_MS - 1);
    expect(locks(lock)).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(locks(lock)).toBe(2);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringMatching(/auto-lock failed twice .*not tried again until the next unlock/)]);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(2);
    // The next unlock arms it again.
    lock.event({ lock: 'locked' });
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(locks(lock)).toBe(3);
  });

  it('the retry is not sent when the door opened meanwhile', async () => {
    const { lock } = setup();
    lock.failCommands = 1;
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(30_000);
    lock.event({ door: 'open' });
    await vi.advanceTimersByTimeAsync(AUTO_LOCK_RETRY_MS);
    expect(locks(lock)).toBe(1);
  });

  it('a changed delay (AutoSecurityTimeout written from HomeKit) starts the countdown over with the new delay; 0 turns it off', async () => {
    const { lock, guard, current } = setup();
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(20_000);
    current.autoLockSeconds = 60;
    guard.settingsChanged();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(locks(lock)).toBe(0);
    current.autoLockSeconds = 0;
    guard.settingsChanged();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(locks(lock)).toBe(0);
  });
});

describe('"left open" and "left unlocked": trip after that long, clear when the door closes (the lock locks)', () => {
  it('left open trips after the door has been open or ajar continuously that long, and clears on close', async () => {
    const { lock, alerts } = setup({ autoLockSeconds: 0, leftOpenSeconds: 300 });
    lock.event({ door: 'open' });
    await vi.advanceTimersByTimeAsync(200_000);
    lock.event({ door: 'ajar' });
    await vi.advanceTimersByTimeAsync(99_999);
    expect(alerts).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(alerts).toEqual([{ leftOpen: true, leftUnlocked: false }]);
    lock.event({ door: 'closed' });
    expect(alerts.at(-1)).toEqual({ leftOpen: false, leftUnlocked: false });
  });

  it('closing before the time is up trips nothing; opening again starts over', async () => {
    const { lock, alerts } = setup({ autoLockSeconds: 0, leftOpenSeconds: 300 });
    lock.event({ door: 'open' });
    await vi.advanceTimersByTimeAsync(299_000);
    lock.event({ door: 'closed' });
    lock.event({ door: 'open' });
    await vi.advanceTimersByTimeAsync(299_000);
    expect(alerts).toEqual([]);
  });

  it('left unlocked trips after the lock has been unlocked that long, and clears when it locks', async () => {
    const { lock, alerts } = setup({ autoLockSeconds: 0, leftUnlockedSeconds: 600 });
    lock.event({ lock: 'unlocked' });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(alerts).toEqual([{ leftOpen: false, leftUnlocked: true }]);
    lock.event({ lock: 'locked' });
    expect(alerts.at(-1)).toEqual({ leftOpen: false, leftUnlocked: false });
  });
});
