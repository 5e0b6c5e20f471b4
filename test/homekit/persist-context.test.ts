import type { EventEmitter } from 'node:events';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { lockUuid } from '../../src/homekit/lock-accessory.js';
import { CONTEXT_SAVE_MAX_DELAY_MS, CONTEXT_SAVE_QUIET_MS, flushContextSaves } from '../../src/homekit/persist-context.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, newAccessory } from './hap-env.js';
import { serveLock } from './serve-device.js';

describe.each(hapEnvs)('cached state is saved to the accessory cache soon after a change ($label)', ({ api }) => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function lockOn(bridged: boolean) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const updates: string[][] = [];
    const listener = (accessories: { UUID: string }[]) => updates.push(accessories.map((a) => a.UUID));
    // Homebridge's API object is an EventEmitter; the bridge listens for this internal event to save its cache.
    const emitter = api as unknown as EventEmitter;
    emitter.on('updatePlatformAccessories', listener);
    const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'SAVE'));
    if (bridged) new api.hap.Bridge('Test Bridge', api.hap.uuid.generate('bridge:save')).addBridgedAccessory(accessory._associatedHAPAccessory);
    const lock = serveLock({ api, log: captureLog().log, operate: () => Promise.resolve(), describeCommandFailure }, accessory, { id: 'SAVE', name: 'Front Door', doorSensor: false });
    return { lock, accessory, updates, done: () => emitter.off('updatePlatformAccessories', listener) };
  }

  it('a burst of events on a served accessory becomes one cache update', () => {
    const { lock, accessory, updates, done } = lockOn(true);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    updates.length = 0;
    for (let i = 1; i <= 5; i++) lock.apply({ lockId: 'SAVE', at: i, kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: { kind: 'manual' } }, { receivedAt: i, signedAt: i });
    expect(updates).toEqual([]);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    expect(updates).toEqual([[accessory.UUID]]);
    expect((accessory.context as { lockAccess?: { lock?: string } }).lockAccess?.lock).toBe('locked');
    lock.dispose();
    done();
  });

  it('waits for a quiet spell, and saves at the latest after the longest delay while events keep coming', () => {
    const { lock, accessory, updates, done } = lockOn(true);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    updates.length = 0;
    const event = (i: number) => {
      lock.apply({ lockId: 'SAVE', at: 1000 + i, kind: 'lockState', state: i % 2 === 0 ? 'locked' : 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'manual' } }, { receivedAt: 1000 + i, signedAt: 1000 + i });
    };
    event(0);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS - 1);
    event(1);
    // The second change restarted the quiet period.
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS - 1);
    expect(updates).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(updates).toEqual([[accessory.UUID]]);
    // A change every few seconds never leaves a quiet spell, yet is saved within the longest delay.
    updates.length = 0;
    let elapsed = 0;
    for (let i = 2; elapsed < CONTEXT_SAVE_MAX_DELAY_MS + CONTEXT_SAVE_QUIET_MS && updates.length === 0; i += 1) {
      event(i);
      vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS / 2);
      elapsed += CONTEXT_SAVE_QUIET_MS / 2;
    }
    expect(updates).toEqual([[accessory.UUID]]);
    expect(elapsed).toBeLessThanOrEqual(CONTEXT_SAVE_MAX_DELAY_MS + CONTEXT_SAVE_QUIET_MS / 2);
    expect(elapsed).toBeGreaterThanOrEqual(CONTEXT_SAVE_MAX_DELAY_MS - CONTEXT_SAVE_QUIET_MS);
    lock.dispose();
    done();
  });

  it('on shutdown, pending changes are saved at once (Homebridge saved its cache before calling the plugin)', () => {
    const { lock, accessory, updates, done } = lockOn(true);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    updates.length = 0;
    lock.apply({ lockId: 'SAVE', at: 5000, kind: 'doorState', state: 'open' }, { receivedAt: 5000, signedAt: 5000 });
    flushContextSaves(api);
    expect(updates).toEqual([[accessory.UUID]]);
    // Nothing is saved twice later.
    vi.advanceTimersByTime(CONTEXT_SAVE_MAX_DELAY_MS);
    expect(updates).toHaveLength(1);
    lock.dispose();
    done();
  });

  it('a burst of events waits on one timer: no timer is cleared and set again per event', () => {
    const { lock, accessory, updates, done } = lockOn(true);
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    updates.length = 0;
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const clearTimer = vi.spyOn(globalThis, 'clearTimeout');
    for (let i = 1; i <= 50; i++) lock.apply({ lockId: 'SAVE', at: 100 + i, kind: 'lockState', state: i % 2 === 0 ? 'locked' : 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'manual' } }, { receivedAt: 100 + i, signedAt: 100 + i });
    // The person-trigger and guard timers are not the save's: count only what the save set.
    const saveTimers = setTimer.mock.calls.filter(([, delay]) => delay === CONTEXT_SAVE_QUIET_MS).length;
    expect(saveTimers).toBe(1);
    expect(clearTimer).not.toHaveBeenCalled();
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    expect(updates).toEqual([[accessory.UUID]]);
    setTimer.mockRestore();
    clearTimer.mockRestore();
    lock.dispose();
    done();
  });

  it('an accessory Homebridge does not serve yet is never updated (it would be cached twice)', () => {
    const { lock, updates, done } = lockOn(false);
    lock.apply({ lockId: 'SAVE', at: 1, kind: 'online', online: false }, { receivedAt: 1, signedAt: 1 });
    vi.advanceTimersByTime(5_000);
    expect(updates).toEqual([]);
    lock.dispose();
    done();
  });

  it('changes of several accessories in one burst become a single cache update (Homebridge rewrites the whole cache per update)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const updates: string[][] = [];
    const listener = (accessories: { UUID: string }[]) => updates.push(accessories.map((a) => a.UUID));
    const emitter = api as unknown as EventEmitter;
    emitter.on('updatePlatformAccessories', listener);
    const bridge = new api.hap.Bridge('Batch Bridge', api.hap.uuid.generate('bridge:batch'));
    const locks = ['B1', 'B2', 'B3'].map((id) => {
      const accessory = newAccessory(api, `Door ${id}`, lockUuid(api, id));
      bridge.addBridgedAccessory(accessory._associatedHAPAccessory);
      return { accessory, lock: serveLock({ api, log: captureLog().log, operate: () => Promise.resolve(), describeCommandFailure }, accessory, { id, name: `Door ${id}`, doorSensor: false }) };
    });
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    updates.length = 0;
    for (const [i, { lock }] of locks.entries()) {
      const id = ['B1', 'B2', 'B3'][i] ?? '';
      lock.apply({ lockId: id, at: 1, kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: { kind: 'manual' } }, { receivedAt: 1, signedAt: 1 });
    }
    vi.advanceTimersByTime(CONTEXT_SAVE_QUIET_MS);
    expect(updates).toHaveLength(1);
    expect([...(updates[0] ?? [])].sort()).toEqual(locks.map((l) => l.accessory.UUID).sort());
    for (const { lock } of locks) lock.dispose();
    emitter.off('updatePlatformAccessories', listener);
  });
});
