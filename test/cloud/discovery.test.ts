import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DoorbellConfig, LockConfig } from '../../src/config.js';
import { discoverDevices, discoverEachList, DiscoveryShapeError, mergeDevices, parseDoorbellsMine, parseLocksMine, type DiscoveredDevices } from '../../src/cloud/discovery.js';
import { type CloudFixture, startCloudFixture } from './cloud-fixture.js';

const lock = (entry: Partial<LockConfig> & { id: string }): LockConfig => ({ doorSensor: false, hidden: false, ...entry });
const doorbell = (entry: Partial<DoorbellConfig> & { id: string }): DoorbellConfig => ({ motionTimeoutSeconds: 30, hidden: false, ...entry });

describe('discovery: tolerant parsing of /users/locks/mine and /users/doorbells/mine', () => {
  it('objects keyed by device id; locks carry LockName, doorbells name', () => {
    expect(parseLocksMine({ A: { LockName: 'Front', UserType: 'superuser' }, B: { LockName: 'Back' } })).toEqual([
      { id: 'A', name: 'Front' },
      { id: 'B', name: 'Back' },
    ]);
    expect(parseDoorbellsMine({ D: { name: 'Porch', serialNumber: 'x' } })).toEqual([{ id: 'D', name: 'Porch' }]);
  });

  it('"skip malformed entries, accept missing names"', () => {
    expect(parseLocksMine({ A: { LockName: 42 }, B: null, C: 'text', D: [1], E: {}, '': { LockName: 'no id' }, F: { LockName: '  ' } })).toEqual([
      { id: 'A', name: undefined },
      { id: 'E', name: undefined },
      { id: 'F', name: undefined },
    ]);
  });

  it('an answer that is not an object keyed by id is a discovery failure, not an empty account', () => {
    for (const raw of ['x', [{ LockName: 'A' }], 3, true]) expect(() => parseLocksMine(raw)).toThrow(DiscoveryShapeError);
  });

  it('no content, null or an empty array is an account without such devices: an empty list', () => {
    for (const raw of [undefined, null, []]) {
      expect(parseLocksMine(raw)).toEqual([]);
      expect(parseDoorbellsMine(raw)).toEqual([]);
    }
  });
});

describe('discovery: merge with the config', () => {
  const discovered = { locks: [{ id: 'A', name: 'Service A' }, { id: 'B', name: undefined }, { id: 'H', name: 'Hidden' }], doorbells: [{ id: 'D', name: 'Service D' }] };

  it('"config entries override names and add doorSensor/motionTimeoutSeconds"', () => {
    const merged = mergeDevices({ locks: [lock({ id: 'A', name: 'Front Door', doorSensor: true }), lock({ id: 'B', doorSensorOnly: true })], doorbells: [doorbell({ id: 'D', motionTimeoutSeconds: 90 })] }, discovered);
    expect(merged.locks[0]).toEqual({ kind: 'lock', id: 'A', name: 'Front Door', doorSensor: true, source: 'both' });
    expect(merged.locks[1]).toMatchObject({ id: 'B', doorSensorOnly: true });
    expect(merged.doorbells).toEqual([{ kind: 'doorbell', id: 'D', name: 'Service D', motionTimeoutSeconds: 90, source: 'both' }]);
  });

  it('"hidden: true excludes" a device even when the service lists it', () => {
    const merged = mergeDevices({ locks: [lock({ id: 'H', hidden: true })], doorbells: [doorbell({ id: 'D', hidden: true })] }, discovered);
    expect(merged.locks.map((l) => l.id)).toEqual(['A', 'B']);
    expect(merged.doorbells).toEqual([]);
  });

  it('"devices only in config are kept"; a device without any name gets a readable one', () => {
    const merged = mergeDevices({ locks: [lock({ id: 'CFG' })], doorbells: [] }, discovered);
    expect(merged.locks.map((l) => [l.id, l.name, l.source])).toEqual([
      ['CFG', 'Lock CFG', 'config'],
      ['A', 'Service A', 'service'],
      ['B', 'Lock B', 'service'],
      ['H', 'Hidden', 'service'],
    ]);
  });

  it('without discovery only the config counts', () => {
    expect(mergeDevices({ locks: [lock({ id: 'A' })], doorbells: [] }, undefined)).toEqual({ locks: [{ kind: 'lock', id: 'A', name: 'Lock A', doorSensor: false, source: 'config' }], doorbells: [] });
  });
});

describe('discovery against the simulator, each list on its own', () => {
  let fx: CloudFixture;
  beforeEach(async () => {
    fx = await startCloudFixture({ locks: [{ id: 'L1', name: 'Front' }, { id: 'L2', name: 'Garage' }], doorbells: [{ id: 'D1', name: 'Porch' }] });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('discoverDevices reads both lists', async () => {
    expect(await discoverDevices(fx.client)).toEqual({
      locks: [{ id: 'L1', name: 'Front' }, { id: 'L2', name: 'Garage' }],
      doorbells: [{ id: 'D1', name: 'Porch' }],
    });
  });

  const NONE: DiscoveredDevices = { locks: [], doorbells: [] };
  const resolve = async (config: Parameters<typeof mergeDevices>[0], lastKnown: DiscoveredDevices = NONE) => {
    const listed = await discoverEachList(fx.client, lastKnown);
    return { ...listed, devices: mergeDevices(config, listed.discovered) };
  };

  it('"hidden excludes" and config names win in the merged result', async () => {
    const resolved = await resolve({ locks: [lock({ id: 'L2', hidden: true }), lock({ id: 'L1', name: 'Front Door' })], doorbells: [] });
    expect(resolved.problems).toEqual([]);
    expect(resolved.devices.locks.map((l) => [l.id, l.name])).toEqual([['L1', 'Front Door']]);
    expect(resolved.devices.doorbells.map((d) => d.id)).toEqual(['D1']);
  });

  it('"a discovery failure must not remove devices": the failed list falls back to the last run\'s devices', async () => {
    const lastKnown = { locks: [{ id: 'L1', name: 'Front' }, { id: 'OLD', name: 'Old lock' }], doorbells: [] };
    fx.sim.faults.failNext(10, 503, 'GET /users/locks/mine');
    const resolved = await resolve({ locks: [lock({ id: 'CFG' })], doorbells: [] }, lastKnown);
    expect(resolved.devices.locks.map((l) => l.id)).toEqual(['CFG', 'L1', 'OLD']);
    // The doorbell list worked and is used as it is.
    expect(resolved.devices.doorbells.map((d) => d.id)).toEqual(['D1']);
    expect(resolved.problems).toHaveLength(1);
    expect(resolved.problems[0]).toMatch(/list of locks could not be fetched/);
    expect(resolved.discovered.locks).toEqual(lastKnown.locks);
  });

  it('with no last run, a failure keeps the config devices', async () => {
    fx.sim.faults.dropNext(2);
    const resolved = await resolve({ locks: [lock({ id: 'CFG' })], doorbells: [doorbell({ id: 'BELL' })] });
    expect(resolved.devices.locks.map((l) => l.id)).toEqual(['CFG']);
    expect(resolved.devices.doorbells.map((d) => d.id)).toEqual(['BELL']);
    expect(resolved.problems).toHaveLength(2);
  });

  it.each(['not-found', 'no-content', 'empty-array', 'null'] as const)('a lock-only account whose doorbell list answers %s keeps its locks and has no doorbells', async (answer) => {
    fx.sim.answerList('doorbells', answer);
    const lastKnown = { locks: [], doorbells: [{ id: 'GONE', name: 'Old bell' }] };
    const resolved = await resolve({ locks: [], doorbells: [] }, lastKnown);
    expect(resolved.problems).toEqual([]);
    expect(resolved.devices.locks.map((l) => l.id)).toEqual(['L1', 'L2']);
    expect(resolved.devices.doorbells).toEqual([]);
    expect(await discoverDevices(fx.client)).toEqual({ locks: [{ id: 'L1', name: 'Front' }, { id: 'L2', name: 'Garage' }], doorbells: [] });
  });

  it('and the other way round: a doorbell-only account whose lock list answers 404 keeps its doorbells', async () => {
    fx.sim.answerList('locks', 'not-found');
    const resolved = await resolve({ locks: [], doorbells: [] });
    expect(resolved.problems).toEqual([]);
    expect(resolved.devices.locks).toEqual([]);
    expect(resolved.devices.doorbells.map((d) => d.id)).toEqual(['D1']);
  });
});
