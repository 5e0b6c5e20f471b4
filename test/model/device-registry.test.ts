// The device registry owns the devices: it makes, updates and disposes them from their entries,
// keeps their records, tells every view (equally) when the set changed, and follows each lock's
// reachability for the status file, however it changed.
import { describe, expect, it } from 'vitest';

import { DeviceRegistry, type DeviceView } from '../../src/model/device-registry.js';
import { DeviceStatusView } from '../../src/status/device-status.js';
import type { LockEvent } from '../../src/model/events.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { systemClock } from '../../src/util/clock.js';
import { captureLog } from '../homekit/hap-env.js';
import { memoryRecords } from './memory-records.js';
const NOW = 1_700_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const A: DeviceEntry = { kind: 'lock', id: 'A', name: 'Front Door', doorSensor: false };
const B: DeviceEntry = { kind: 'lock', id: 'B', name: 'Back Door', doorSensor: false };
const online = (lockId: string, value: boolean, at = NOW): LockEvent => ({ lockId, at, kind: 'online', online: value });

function setup(failCommands = false) {
  const published: string[] = [];
  const records = memoryRecords();
  const captured = captureLog();
  const registry = new DeviceRegistry({
    log: captured.log,
    clock: systemClock,
    records,
    describeCommandFailure,
    operate: () => (failCommands ? Promise.reject(new Error('the bridge is busy')) : Promise.resolve()),
  });
  // The status file's device list follows the registry as a view: each publish here names the locks then offline.
  registry.attach(new DeviceStatusView(registry, { devices: (shown) => published.push(shown.lockIds().filter((id) => shown.lock(id)?.state.online === false).join()) }));
  registry.sync([A, B], true);
  published.length = 0;
  return { registry, records, captured, published, lock: (id: string) => registry.lock(id) ?? (() => { throw new Error(`no lock ${id}`); })() };
}

describe('the status file follows every change of reachability', () => {
  it('an offline and an online notice each publish once; a repeated notice publishes nothing', () => {
    const { lock, published } = setup();
    lock('A').apply(online('A', false), ctx);
    expect(published).toEqual(['A']);
    lock('A').apply(online('A', false, NOW + 1), ctx);
    expect(published).toEqual(['A']);
    lock('A').apply(online('A', true, NOW + 2), ctx);
    expect(published).toEqual(['A', '']);
  });

  it('a status report brings an offline lock back; an operation from the lock does not', () => {
    const { lock, published } = setup();
    lock('A').apply(online('A', false), ctx);
    const actor = { kind: 'person', userId: 'u' } as const;
    lock('A').apply({ lockId: 'A', at: NOW + 5, kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor }, ctx);
    expect(lock('A').state.online).toBe(false);
    expect(published).toEqual(['A']);
    lock('A').apply({ lockId: 'A', at: NOW + 10, kind: 'lockState', state: 'locked', source: 'status', device: 'lock', actor }, ctx);
    expect(lock('A').state.online).toBe(true);
    expect(published).toEqual(['A', '']);
  });

  it('a command that brings an offline lock back publishes it; one to an online lock, or a failed one, does not', async () => {
    const { lock, published } = setup();
    await lock('B').command('lock', 'a test');
    expect(published).toEqual([]);
    lock('A').apply(online('A', false), ctx);
    await lock('A').command('unlock', 'a test');
    expect(lock('A').state.online).toBe(true);
    expect(published).toEqual(['A', '']);

    const failing = setup(true);
    failing.lock('A').apply(online('A', false), ctx);
    await expect(failing.lock('A').command('lock', 'a test')).rejects.toThrow(/busy/);
    expect(failing.published).toEqual(['A']);
  });

  it('a lock that left the registry is no longer followed', () => {
    const { registry, published } = setup();
    const gone = registry.lock('A');
    registry.sync([B], true);
    published.length = 0;
    gone?.apply(online('A', false), ctx);
    expect(published).toEqual([]);
  });
});

describe('the registry owns the devices; the views follow it as equals', () => {
  function recorder(name: string, calls: string[], failing = false): DeviceView {
    const run = (what: string) => {
      calls.push(`${name} ${what}`);
      if (failing) throw new Error(`${name} broke`);
    };
    return { synced: (sweep) => { run(`synced ${String(sweep)}`); }, removed: (kind, id) => { run(`removed ${kind}:${id}`); }, dispose: () => { run('dispose'); } };
  }

  it('sync, remove and dispose reach every view; a view that fails is logged and the others still follow', () => {
    const { registry, captured } = setup();
    const calls: string[] = [];
    registry.attach(recorder('homekit', calls, true));
    const detach = registry.attach(recorder('matter', calls));
    registry.sync([A], false);
    registry.remove('lock', 'A');
    expect(calls).toEqual(['homekit synced false', 'matter synced false', 'homekit removed lock:A', 'matter removed lock:A']);
    expect(captured.text('error')).toMatch(/A view of the devices could not show the devices \(homekit broke\); the others are not affected/);
    detach();
    registry.disposeAll();
    expect(calls.slice(4)).toEqual(['homekit dispose']);
  });

  it('without a sweep the devices of the last run stay; with one, those not wanted leave and their records go', () => {
    const { registry, records } = setup();
    registry.sync([B], false);
    expect(registry.lockIds().sort()).toEqual(['A', 'B']);
    registry.sync([B], true);
    expect(registry.lockIds()).toEqual(['B']);
    expect(records.remembered().map((d) => d.id)).toEqual(['B']);
  });

  it('a device keeps its object (and its state) when its entry changes; the views read the new settings from it', () => {
    const { registry, lock } = setup();
    const before = lock('A');
    before.apply({ lockId: 'A', at: NOW, kind: 'doorState', state: 'open' }, ctx);
    registry.sync([{ ...A, doorSensor: true, name: 'Front' }], false);
    expect(lock('A')).toBe(before);
    expect(lock('A').entry.doorSensor).toBe(true);
    expect(registry.nameOf('lock', 'A')).toBe('Front');
    expect(lock('A').state.door).toBe('open');
  });
});
