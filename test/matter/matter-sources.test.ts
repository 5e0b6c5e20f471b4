// The Matter sources follow the real HAP accessories (Homebridge 2's API, HAP-NodeJS 2): one source of
// device state for HAP and Matter, one command path, and rings only when HomeKit rings.
import { afterEach, describe, expect, it, vi } from 'vitest';

import { doorbellUuid } from '../../src/homekit/doorbell-accessory.js';
import type { DoorbellEvent, LockEvent } from '../../src/model/events.js';
import { lockUuid } from '../../src/homekit/lock-accessory.js';
import { CommandSupersededError, type LockAction } from '../../src/model/lock-commands.js';
import { doorbellSource, lockSource } from '../../src/matter/matter-sources.js';
import { BridgeError } from '../../src/cloud/http/errors.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, newAccessory, service } from '../homekit/hap-env.js';
import { serveLock, serveDoorbell, type LockDeps, type DoorbellDeps } from '../homekit/serve-device.js';

// Matter exists on Homebridge 2 only.
const [hb2] = hapEnvs;
if (!hb2) throw new Error('no Homebridge 2 environment');
const { api } = hb2;
const { Service: S, Characteristic: C } = api.hap;

const NOW = 1_700_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const actor = { kind: 'person', firstName: 'Ada' } as const;
const lockEvent = (state: 'locked' | 'unlocked', at?: number): LockEvent => ({ lockId: 'L1', at, kind: 'lockState', state, source: 'operation', device: 'lock', actor });
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const made: { dispose(): void }[] = [];
afterEach(() => {
  for (const thing of made.splice(0)) thing.dispose();
  vi.useRealTimers();
});

function lockSetup(options: { doorSensor?: boolean; autoLockSeconds?: number } = {}) {
  const calls: { action: LockAction; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const captured = captureLog();
  const deps: LockDeps = {
    api,
    log: captured.log,
    describeCommandFailure,
    operate: (_id, action) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ action, resolve, reject });
      }),
  };
  const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
  const lock = serveLock(deps, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: options.doorSensor ?? false, autoLockSeconds: options.autoLockSeconds });
  made.push(lock);
  const commanded: LockAction[] = [];
  const source = lockSource(lock, (action) => {
    commanded.push(action);
    return lock.command(action, 'a Matter controller');
  });
  return { accessory, lock, calls, captured, source, commanded };
}

describe('one source of lock state for HAP and Matter', () => {
  it('the plans show what the accessory holds: lockState follows LockCurrentState', () => {
    const { lock, source, accessory } = lockSetup();
    expect(source.plans()[0]?.state.doorLock).toEqual({ lockState: null });
    lock.apply(lockEvent('unlocked', 1), ctx);
    expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(0);
    expect(source.plans()[0]?.state.doorLock).toEqual({ lockState: 2 });
  });

  it('followers hear every applied change, and nothing for an event the ordering rule ignored', () => {
    const { lock, source } = lockSetup();
    const heard: number[] = [];
    const stop = source.follow({ change: () => heard.push(1), ring: () => undefined });
    lock.apply(lockEvent('locked', 2_000), ctx);
    lock.apply(lockEvent('unlocked', 1_000), ctx);
    expect(heard).toHaveLength(1);
    stop();
    lock.apply(lockEvent('unlocked', 3_000), ctx);
    expect(heard).toHaveLength(1);
  });

  it('a lock_name_changed renames the endpoints; a first door event adds the ContactSensor', () => {
    const { lock, source } = lockSetup();
    lock.apply({ lockId: 'L1', at: undefined, kind: 'lockName', name: 'Main Entrance' }, ctx);
    expect(source.plans().map((p) => p.label)).toEqual(['Main Entrance']);
    lock.apply({ lockId: 'L1', at: undefined, kind: 'doorState', state: 'closed' }, ctx);
    expect(source.plans().map((p) => p.label)).toEqual(['Main Entrance', 'Main Entrance Door']);
  });

  it('the DoorLock\'s handlers run the lock\'s commands; other endpoints have none', () => {
    const { source } = lockSetup({ doorSensor: true });
    const [lock, door] = source.plans();
    if (!lock || !door) throw new Error('no plans');
    expect(Object.keys(source.handlers(lock)?.doorLock ?? {})).toEqual(['lockDoor', 'unlockDoor']);
    expect(source.handlers(door)).toBeUndefined();
  });
});

describe('Matter commands through the lock\'s one command serialiser', () => {
  it('unlockDoor runs the remote command; on success HomeKit\'s current and target follow, and the log says who', async () => {
    const { source, calls, accessory, captured } = lockSetup();
    const [plan] = source.plans();
    if (!plan) throw new Error('no plan');
    const handler = source.handlers(plan)?.doorLock?.unlockDoor as () => Promise<void>;
    const done = handler();
    await settle();
    expect(calls.map((c) => c.action)).toEqual(['unlock']);
    calls[0]?.resolve();
    await expect(done).resolves.toBeUndefined();
    const mechanism = service(accessory, S.LockMechanism);
    expect(mechanism.getCharacteristic(C.LockCurrentState).value).toBe(0);
    expect(mechanism.getCharacteristic(C.LockTargetState).value).toBe(0);
    expect(source.plans()[0]?.state.doorLock).toEqual({ lockState: 2 });
    expect(captured.text('info')).toMatch(/Front Door: unlocked from a Matter controller\./);
  });

  it('a failed command rejects (so Matter answers FAILURE), changes no state and logs the reason', async () => {
    const { source, lock, calls, captured } = lockSetup();
    lock.apply(lockEvent('locked', 1), ctx);
    const done = (source.handlers(source.plans()[0] ?? never())?.doorLock?.unlockDoor as () => Promise<void>)();
    await settle();
    calls[0]?.reject(new BridgeError('offline', 422));
    await expect(done).rejects.toThrow(/offline \(422\)/);
    expect(source.plans()[0]?.state.doorLock).toEqual({ lockState: 1 });
    expect(captured.text('error')).toMatch(/Front Door: could not unlock from a Matter controller: .*offline \(422\)/);
  });

  it('unlockDoor stops the auto-lock countdown when it is asked for: no auto-lock is queued behind the unlock on its way', async () => {
    vi.useFakeTimers();
    const { source, lock, calls } = lockSetup({ doorSensor: true, autoLockSeconds: 30 });
    lock.apply({ lockId: 'L1', at: undefined, kind: 'doorState', state: 'closed' }, ctx);
    lock.apply(lockEvent('unlocked'), ctx);
    await vi.advanceTimersByTimeAsync(29_000);
    const done = (source.handlers(source.plans()[0] ?? never())?.doorLock?.unlockDoor as () => Promise<void>)();
    await vi.advanceTimersByTimeAsync(60_000);
    calls[0]?.resolve();
    await expect(done).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.map((c) => c.action)).toEqual(['unlock']);
  });

  it('the same action from Apple Home and from Matter at once is one remote command', async () => {
    const { source, accessory, calls } = lockSetup();
    await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
    await settle();
    const matter = (source.handlers(source.plans()[0] ?? never())?.doorLock?.lockDoor as () => Promise<void>)();
    await settle();
    expect(calls).toHaveLength(1);
    calls[0]?.resolve();
    await expect(matter).resolves.toBeUndefined();
  });
  it('a Matter command replaced by a newer opposite wish before it ran rejects: it never happened', async () => {
    const { source, accessory, calls } = lockSetup();
    const target = service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState);
    await target.handleSetRequest(C.LockTargetState.SECURED);
    await settle();
    const unlock = (source.handlers(source.plans()[0] ?? never())?.doorLock?.unlockDoor as () => Promise<void>)().then(
      () => 'done',
      (error: unknown) => error,
    );
    await settle();
    await target.handleSetRequest(C.LockTargetState.SECURED);
    await settle();
    expect(await unlock).toBeInstanceOf(CommandSupersededError);
    calls[0]?.resolve();
    await settle();
    expect(calls.map((c) => c.action)).toEqual(['lock']);
  });
});

describe('the doorbell reaches Matter only when HomeKit rings', () => {
  function bellSetup(motionTimeoutSeconds = 30) {
    const deps: DoorbellDeps = { api, log: captureLog().log, fetchImage: () => Promise.resolve(Buffer.from('jpeg')) };
    const accessory = newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'));
    const doorbell = serveDoorbell(deps, accessory, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds });
    made.push(doorbell);
    const source = doorbellSource(doorbell, { id: 'D1', name: 'Front Doorbell' });
    const heard: string[] = [];
    made.push({ dispose: source.follow({ change: () => heard.push('change'), ring: () => heard.push('ring') }) });
    return { doorbell, source, heard };
  }
  const press = (dvrId: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'doorbellPress', dvrId });

  it('one ring per real press; the same press again, or one more than 60 s late, rings nothing', () => {
    const { doorbell, heard } = bellSetup();
    doorbell.apply(press('dvr-1'), ctx);
    doorbell.apply(press('dvr-1'), ctx);
    doorbell.apply(press('dvr-2', NOW - 61_000), ctx);
    expect(heard).toEqual(['ring']);
  });

  it('motion: occupied while on, clear again after motionTimeoutSeconds', () => {
    vi.useFakeTimers();
    const { doorbell, source, heard } = bellSetup(5);
    expect(source.plans()[1]?.state).toEqual({ occupancySensing: { occupancy: { occupied: false } } });
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'motion', imageUrl: 'https://example.invalid/still.jpg' }, ctx);
    expect(heard).toEqual(['change']);
    expect(source.plans()[1]?.state).toEqual({ occupancySensing: { occupancy: { occupied: true } } });
    vi.advanceTimersByTime(5_000);
    expect(heard).toEqual(['change', 'change']);
    expect(source.plans()[1]?.state).toEqual({ occupancySensing: { occupancy: { occupied: false } } });
  });
});

function never(): never {
  throw new Error('missing plan');
}
