// The Matter lifecycle as a view of the device registry beside HomeKit's: a real AccessoryRegistry on
// Homebridge 2's API, with an in-memory Matter server behind `api.matter` (the real one:
// test/e2e/matter.test.ts).
import type { API, MatterAccessory } from 'homebridge';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { LockAction } from '../../src/model/lock-commands.js';
import { BridgeError } from '../../src/cloud/http/errors.js';
import { AccessoryRegistry } from '../../src/homekit/accessory-registry.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import { systemClock } from '../../src/util/clock.js';
import { memoryRecords } from '../model/memory-records.js';
import { RING_SPACING_MS } from '../../src/matter/matter-publisher.js';
import { matterView } from '../../src/matter/matter-view.js';
import { matterOf } from '../../src/matter/matter-on-bridge.js';
import { MATTER_RETRY_FIRST_MS, MatterRegistry } from '../../src/matter/matter-registry.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { captureLog, hapEnvs } from '../homekit/hap-env.js';
import { FakeFailure, FakeMatter } from './fake-matter.js';

const [hb2, hb1] = hapEnvs;
if (!hb2 || !hb1) throw new Error('no Homebridge environments');
const api = hb2.api;
const api1 = hb1.api;
const NOW = 1_700_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };

const FRONT: DeviceEntry = { kind: 'lock', id: 'LOCK-1', name: 'Front Door', doorSensor: true };
const BACK: DeviceEntry = { kind: 'lock', id: 'LOCK-2', name: 'Back Door', doorSensor: false };
const BELL: DeviceEntry = { kind: 'doorbell', id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 30 };

const running: { stop(): void }[] = [];
afterEach(() => {
  for (const thing of running.splice(0)) thing.stop();
  vi.useRealTimers();
});

interface Setup {
  fake: FakeMatter;
  registry: DeviceRegistry;
  /** The device registry, which HomeKit's and Matter's views follow. */
  publishers: DeviceRegistry;
  matter: MatterRegistry | undefined;
  captured: ReturnType<typeof captureLog>;
  operations: { action: LockAction; resolve: () => void; reject: (error: unknown) => void }[];
}

function setup(options: { api?: API; fake?: FakeMatter; cached?: MatterAccessory[]; wanted?: boolean; enabled?: boolean } = {}): Setup {
  const fake = options.fake ?? new FakeMatter(api);
  const captured = captureLog();
  const operations: Setup['operations'] = [];
  const registry = new DeviceRegistry({
    log: captured.log,
    clock: systemClock,
    records: memoryRecords(),
    describeCommandFailure,
    operate: (_id, action) =>
      new Promise<void>((resolve, reject) => {
        operations.push({ action, resolve, reject });
      }),
  });
  const publishers = registry;
  registry.attach(new AccessoryRegistry({ api, log: captured.log, devices: registry, fetchImage: () => Promise.resolve(Buffer.from('jpeg')), pluginName: 'homebridge-lock-access', platformName: 'LockAccess', cached: [] }));
  const publisher = matterView({
    api: options.api ?? fake.apiWithMatter(options.enabled ?? true),
    log: captured.log,
    registry,
    cached: options.cached ?? [],
    wanted: options.wanted ?? true,
    pluginName: 'homebridge-lock-access',
    platformName: 'LockAccess',
  });
  registry.attach(publisher);
  running.push({
    stop: () => {
      publishers.disposeAll();
    },
  });
  const matter = publisher instanceof MatterRegistry ? publisher : undefined;
  return { fake, registry, publishers, matter, captured, operations };
}

async function settled(s: Setup): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await s.matter?.settled();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const uuid = (seed: string) => api.hap.uuid.generate(seed);
const labels = (fake: FakeMatter, kind: 'register' | 'unregister') => fake.of(kind).map((c) => c.label);

describe('only when the bridge runs Matter and the plugin wants it', () => {
  it('Homebridge 1.x (no isMatterEnabled): nothing is published and nothing logged above debug', () => {
    const s = setup({ api: api1 });
    expect(s.matter).toBeUndefined();
    expect(matterOf(api1)).toBeUndefined();
    s.publishers.sync([FRONT], true);
    expect(s.fake.calls).toHaveLength(0);
    expect(s.captured.lines.filter((l) => l.level !== 'debug' && /matter/i.test(l.message))).toEqual([]);
  });

  it('Homebridge 2 without Matter on this bridge: the same', () => {
    const s = setup({ enabled: false });
    expect(s.matter).toBeUndefined();
    s.publishers.sync([FRONT], true);
    expect(s.fake.calls).toHaveLength(0);
    expect(s.captured.lines.filter((l) => l.level !== 'debug' && /matter/i.test(l.message))).toEqual([]);
  });

  it('"matter": false removes the endpoints an earlier run published, and publishes none', async () => {
    const fake = new FakeMatter(api);
    const cached = [FakeMatter.cached({ UUID: uuid('matter:lock:LOCK-1'), displayName: 'Front Door', deviceType: { name: 'DoorLock' } as never, serialNumber: 'LOCK-1', manufacturer: 'Lock Access', model: 'Smart Lock', context: { lockAccess: { device: 'lock:LOCK-1' } } })];
    const s = setup({ fake, cached, wanted: false });
    expect(s.matter).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(labels(fake, 'unregister')).toEqual(['Front Door']);
    expect(labels(fake, 'register')).toEqual([]);
    expect(s.captured.text('info')).toMatch(/Matter is off for Lock Access \("matter": false\): removed 1 Matter endpoint/);
  });
});

describe('publishing follows the HAP registry', () => {
  it('every served device gets its endpoints, registered one per call', async () => {
    const s = setup();
    s.publishers.sync([FRONT, BACK, BELL], true);
    await settled(s);
    expect(labels(s.fake, 'register')).toEqual(['Front Door', 'Front Door Door', 'Back Door', 'Front Doorbell', 'Front Doorbell Motion']);
    expect(s.matter?.publishedUuids()).toHaveLength(5);
    expect(s.captured.text('info')).toMatch(/Matter: 5 endpoints ready for Google Home, Alexa and other Matter apps\./);
  });

  it('a door-sensor-only lock is only its ContactSensor, carrying the lock battery', async () => {
    const s = setup();
    s.publishers.sync([{ ...FRONT, doorSensorOnly: true }], true);
    await settled(s);
    expect(labels(s.fake, 'register')).toEqual(['Front Door Door']);
    const door = s.fake.endpoints.get(uuid('matter:lock:LOCK-1:door-battery'));
    expect(Object.keys(door?.clusters ?? {})).toEqual(['booleanState', 'powerSource']);
    expect(door?.handlers).toBeUndefined();
  });

  it('a registered endpoint is given its whole state, names and reachability included', async () => {
    const s = setup();
    s.publishers.sync([FRONT], true);
    await settled(s);
    const door = s.fake.updates(uuid('matter:lock:LOCK-1:door'));
    expect(door).toContainEqual(expect.objectContaining({ cluster: 'bridgedDeviceBasicInformation', attributes: { reachable: false, nodeLabel: 'Front Door Door' } }));
  });

  it('state changes push only what changed, to the endpoint that shows it', async () => {
    const s = setup();
    s.publishers.sync([FRONT], true);
    await settled(s);
    const before = s.fake.updates().length;
    s.registry.lock('LOCK-1')?.apply({ lockId: 'LOCK-1', at: 1, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'unknown' } }, ctx);
    await settled(s);
    expect(s.fake.updates().slice(before).map((c) => [c.uuid, c.cluster, c.attributes])).toEqual([[uuid('matter:lock:LOCK-1'), 'doorLock', { lockState: 2 }]]);
  });

  it('a first door event on a lock without doorSensor publishes its ContactSensor', async () => {
    const s = setup();
    s.publishers.sync([BACK], true);
    await settled(s);
    s.registry.lock('LOCK-2')?.apply({ lockId: 'LOCK-2', at: undefined, kind: 'doorState', state: 'open' }, ctx);
    await settled(s);
    expect(labels(s.fake, 'register')).toEqual(['Back Door', 'Back Door Door']);
    expect(s.fake.updates(uuid('matter:lock:LOCK-2:door'))).toContainEqual(expect.objectContaining({ cluster: 'booleanState', attributes: { stateValue: false } }));
  });

  it('a ring HomeKit rang is one press at the doorbell\'s switch', async () => {
    const s = setup();
    s.publishers.sync([BELL], true);
    await settled(s);
    vi.useFakeTimers();
    s.registry.doorbell('BELL-1')?.apply({ doorbellId: 'BELL-1', at: undefined, kind: 'doorbellPress', dvrId: 'dvr-1' }, ctx);
    s.registry.doorbell('BELL-1')?.apply({ doorbellId: 'BELL-1', at: undefined, kind: 'doorbellPress', dvrId: 'dvr-1' }, ctx);
    // A second press would come RING_SPACING_MS after the first: wait well past it.
    await vi.advanceTimersByTimeAsync(5 * RING_SPACING_MS);
    vi.useRealTimers();
    expect(s.fake.of('switch').map((c) => [c.uuid, c.action])).toEqual([
      [uuid('matter:doorbell:BELL-1'), 'press'],
      [uuid('matter:doorbell:BELL-1'), 'release'],
    ]);
  });
});

describe('lockDoor and unlockDoor', () => {
  async function handlerOf(s: Setup, command: 'lockDoor' | 'unlockDoor'): Promise<() => Promise<void>> {
    s.publishers.sync([BACK], true);
    await settled(s);
    const accessory = s.fake.endpoints.get(uuid('matter:lock:LOCK-2'));
    const handler = accessory?.handlers?.doorLock?.[command];
    if (!handler) throw new Error('no handler');
    return () => Promise.resolve((handler as () => Promise<void>)());
  }

  it('run the lock\'s remote command and resolve when it worked', async () => {
    const s = setup();
    const unlock = (await handlerOf(s, 'unlockDoor'))();
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.operations.map((o) => o.action)).toEqual(['unlock']);
    s.operations[0]?.resolve();
    await expect(unlock).resolves.toBeUndefined();
  });

  it('answer Matter\'s Failure status when the command failed', async () => {
    const s = setup();
    const lock = (await handlerOf(s, 'lockDoor'))();
    await new Promise((resolve) => setImmediate(resolve));
    s.operations[0]?.reject(new BridgeError('offline', 422));
    await expect(lock).rejects.toBeInstanceOf(FakeFailure);
    await expect(lock).rejects.toThrow(/offline \(422\)/);
  });

  it('answer Failure for a lock that is no longer served', async () => {
    const s = setup();
    const lock = await handlerOf(s, 'lockDoor');
    s.publishers.remove('lock', 'LOCK-2');
    await expect(lock()).rejects.toBeInstanceOf(FakeFailure);
  });
});

describe('restarts and removal', () => {
  function cachedFrom(fake: FakeMatter): MatterAccessory[] {
    return [...fake.endpoints.values()].map((a) => FakeMatter.cached(a));
  }

  it('cached endpoints of served devices are registered again (handlers attached) and counted as kept', async () => {
    const first = setup();
    first.publishers.sync([FRONT, BELL], true);
    await settled(first);
    const fake = new FakeMatter(api);
    for (const accessory of cachedFrom(first.fake)) fake.endpoints.set(accessory.UUID, accessory);
    const s = setup({ fake, cached: cachedFrom(first.fake) });
    s.publishers.sync([FRONT, BELL], false);
    await settled(s);
    expect(labels(fake, 'register')).toEqual(['Front Door', 'Front Door Door', 'Front Doorbell', 'Front Doorbell Motion']);
    expect(fake.of('register').every((c) => c.uuid !== '')).toBe(true);
    expect(s.captured.text('info')).toMatch(/Matter: 4 endpoints ready .*\(4 kept from the last run\)/);
    expect(fake.endpoints.get(uuid('matter:lock:LOCK-1'))?.handlers?.doorLock).toBeDefined();
  });

  it('a cached endpoint of a device not served yet stays until the device set is authoritative, then goes', async () => {
    const first = setup();
    first.publishers.sync([FRONT, BACK], true);
    await settled(first);
    const fake = new FakeMatter(api);
    const s = setup({ fake, cached: cachedFrom(first.fake) });
    s.publishers.sync([FRONT], false);
    await settled(s);
    expect(labels(fake, 'unregister')).toEqual([]);
    s.publishers.sync([FRONT], true);
    await settled(s);
    expect(labels(fake, 'unregister')).toEqual(['Back Door']);
    expect(s.captured.text('info')).toMatch(/Matter: removed Back Door\./);
  });

  it('a device removed at run time (lock_user_remove) loses its endpoints at once', async () => {
    const s = setup();
    s.publishers.sync([FRONT, BACK], false);
    await settled(s);
    s.publishers.remove('lock', 'LOCK-1');
    await settled(s);
    expect(labels(s.fake, 'unregister')).toEqual(['Front Door', 'Front Door Door']);
    expect(s.matter?.isPublished(uuid('matter:lock:LOCK-2'))).toBe(true);
  });

  it('a door sensor switched off in the config loses its endpoint; the lock keeps its own', async () => {
    const s = setup();
    s.publishers.sync([FRONT], true);
    await settled(s);
    s.publishers.sync([{ ...FRONT, doorSensor: false }], true);
    await settled(s);
    expect(labels(s.fake, 'unregister')).toEqual(['Front Door Door']);
    expect(s.matter?.isPublished(uuid('matter:lock:LOCK-1'))).toBe(true);
  });

  it('a config rename relabels the endpoints and the cached copies', async () => {
    const s = setup();
    s.publishers.sync([BELL], true);
    await settled(s);
    s.publishers.sync([{ ...BELL, name: 'Gate Bell' }], true);
    await settled(s);
    expect(s.fake.updates(uuid('matter:doorbell:BELL-1:motion'))).toContainEqual(expect.objectContaining({ cluster: 'bridgedDeviceBasicInformation', attributes: expect.objectContaining({ nodeLabel: 'Gate Bell Motion' }) as unknown }));
    expect(s.fake.of('cache').map((c) => c.label)).toEqual(expect.arrayContaining(['Gate Bell', 'Gate Bell Motion']));
  });
});

describe('an endpoint that does not register', () => {
  it('is named once in a warning and tried again later; success is logged', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: false });
    const fake = new FakeMatter(api);
    fake.failing.add('Back Door');
    const s = setup({ fake });
    s.publishers.sync([BACK], true);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(s.captured.text('warn')).toMatch(/Matter: Back Door could not be published .* trying again in 30 s/);
    fake.failing.clear();
    await vi.advanceTimersByTimeAsync(MATTER_RETRY_FIRST_MS);
    expect(s.captured.text('info')).toMatch(/Matter: Back Door is published now\./);
    expect(s.matter?.isPublished(uuid('matter:lock:LOCK-2'))).toBe(true);
    expect(s.captured.text('warn').match(/could not be published/g)).toHaveLength(1);
  });
});
