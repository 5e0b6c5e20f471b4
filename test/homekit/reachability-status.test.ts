// The status file follows each lock's reachability, however it changed: an online notice, a status
// report that proves the bridge answers, or a remote command that went through. A real
// AccessoryRegistry on Homebridge 2's API, with the lock devices it serves.
import { describe, expect, it } from 'vitest';

import type { LockEvent } from '../../src/model/events.js';
import { AccessoryRegistry } from '../../src/homekit/accessory-registry.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import type { WantedDevice } from '../../src/model/wanted-device.js';
import { captureLog, hapEnvs } from './hap-env.js';

const [hb2] = hapEnvs;
if (!hb2) throw new Error('no Homebridge environment');
const { api } = hb2;
const NOW = 1_700_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const A: WantedDevice = { kind: 'lock', id: 'A', name: 'Front Door', doorSensor: false };
const B: WantedDevice = { kind: 'lock', id: 'B', name: 'Back Door', doorSensor: false };
const online = (lockId: string, value: boolean, at = NOW): LockEvent => ({ lockId, at, kind: 'online', online: value });

function setup(failCommands = false) {
  const published: string[] = [];
  const registry = new AccessoryRegistry({
    api,
    log: captureLog().log,
    pluginName: 'homebridge-lock-access',
    platformName: 'LockAccess',
    cached: [],
    deps: {
      api,
      log: captureLog().log,
      describeCommandFailure,
      fetchImage: () => Promise.resolve(Buffer.from('jpeg')),
      operate: () => (failCommands ? Promise.reject(new Error('the bridge is busy')) : Promise.resolve()),
    },
    reachabilityChanged: (id) => published.push(id),
  });
  registry.sync([A, B], true);
  return { registry, published, lock: (id: string) => registry.lock(id) ?? (() => { throw new Error(`no lock ${id}`); })() };
}

describe('the status file follows every change of reachability', () => {
  it('an offline and an online notice each publish once; a repeated notice publishes nothing', () => {
    const { lock, published } = setup();
    lock('A').apply(online('A', false), ctx);
    expect(published).toEqual(['A']);
    lock('A').apply(online('A', false, NOW + 1), ctx);
    expect(published).toEqual(['A']);
    lock('A').apply(online('A', true, NOW + 2), ctx);
    expect(published).toEqual(['A', 'A']);
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
    expect(published).toEqual(['A', 'A']);
  });

  it('a command that brings an offline lock back publishes it; one to an online lock, or a failed one, does not', async () => {
    const { lock, published } = setup();
    await lock('B').command('lock', 'a test');
    expect(published).toEqual([]);
    lock('A').apply(online('A', false), ctx);
    await lock('A').command('unlock', 'a test');
    expect(lock('A').state.online).toBe(true);
    expect(published).toEqual(['A', 'A']);

    const failing = setup(true);
    failing.lock('A').apply(online('A', false), ctx);
    await expect(failing.lock('A').command('lock', 'a test')).rejects.toThrow(/busy/);
    expect(failing.published).toEqual(['A']);
  });

  it('a lock that left the registry is no longer followed', () => {
    const { registry, published } = setup();
    const gone = registry.lock('A');
    registry.sync([B], true);
    gone?.apply(online('A', false), ctx);
    expect(published).toEqual([]);
  });
});
