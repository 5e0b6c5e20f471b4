import { afterEach, describe, expect, it, vi } from 'vitest';

import { doorbellEndpoints, lockEndpoints } from '../../src/matter/matter-endpoints.js';
import { CONFIRM_TIMEOUT_MS, MatterPublisher, RING_SPACING_MS } from '../../src/matter/matter-publisher.js';
import { initialLockState } from '../../src/model/lock-state.js';
import { captureLog, hapEnvs } from '../homekit/hap-env.js';
import { FakeMatter } from './fake-matter.js';

const [hb2] = hapEnvs;
if (!hb2) throw new Error('no Homebridge 2 environment');
const { api } = hb2;

function setup() {
  const fake = new FakeMatter(api);
  const captured = captureLog();
  const publisher = new MatterPublisher({ matter: fake.matter, log: captured.log, pluginName: 'homebridge-lock-access', platformName: 'LockAccess' });
  const [lockPlan] = lockEndpoints({ id: 'LOCK-1', name: 'Front Door', doorSensor: false }, { ...initialLockState(), lock: 'locked' });
  const [bellPlan] = doorbellEndpoints({ id: 'BELL-1', name: 'Front Doorbell' }, false);
  if (!lockPlan || !bellPlan) throw new Error('no plans');
  return { fake, captured, publisher, lockPlan, bellPlan };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a plan as a Homebridge Matter accessory', () => {
  it('UUID from the seed, the label as its name, serial, model, manufacturer, and configuration plus state as its clusters', () => {
    const { publisher, lockPlan } = setup();
    const accessory = publisher.accessoryOf(lockPlan);
    expect(accessory.UUID).toBe(api.hap.uuid.generate('matter:lock:LOCK-1'));
    expect(accessory).toMatchObject({ displayName: 'Front Door', serialNumber: 'LOCK-1', model: 'Smart Lock', manufacturer: 'Lock Access' });
    expect(accessory.clusters?.doorLock).toEqual({ lockType: 0, actuatorEnabled: true, operatingMode: 0, lockState: 1 });
    expect(accessory.clusters?.powerSource).toEqual({ batChargeLevel: 0, batPercentRemaining: 200, batReplacementNeeded: false });
    expect(accessory.context).toEqual({ lockAccess: { device: 'lock:LOCK-1', seed: 'matter:lock:LOCK-1' } });
  });
});

describe('registration, one endpoint per call, confirmed', () => {
  it('resolves true once Homebridge has the endpoint (it registers after the call returns)', async () => {
    const { fake, publisher, lockPlan } = setup();
    fake.registrationDelayMs = 30;
    await expect(publisher.register(publisher.accessoryOf(lockPlan), lockPlan)).resolves.toBe(true);
    expect(fake.of('register')).toHaveLength(1);
    expect(fake.endpoints.has(publisher.uuidOf(lockPlan))).toBe(true);
  });

  it('an endpoint Homebridge silently failed to register resolves false after the confirmation time', async () => {
    vi.useFakeTimers();
    const { fake, publisher, lockPlan } = setup();
    fake.failing.add('Front Door');
    const result = publisher.register(publisher.accessoryOf(lockPlan), lockPlan);
    await vi.advanceTimersByTimeAsync(CONFIRM_TIMEOUT_MS + 100);
    await expect(result).resolves.toBe(false);
  });

  it('a refused call ("still starting") resolves false with a warning, never a throw', async () => {
    const { fake, publisher, lockPlan, captured } = setup();
    fake.rejectRegistrations = new Error('the Matter server for this bridge is still starting');
    await expect(publisher.register(publisher.accessoryOf(lockPlan), lockPlan)).resolves.toBe(false);
    expect(captured.text('warn')).toMatch(/Matter: Front Door could not be published \(the Matter server for this bridge is still starting\)/);
  });
});

describe('pushing state', () => {
  it('each changed cluster is one update; reachable and the label go to the bridged-device information', async () => {
    const { fake, publisher, lockPlan } = setup();
    await publisher.register(publisher.accessoryOf(lockPlan), lockPlan);
    const uuid = publisher.uuidOf(lockPlan);
    await publisher.update(uuid, 'Front Door', { doorLock: { lockState: 2 } }, { reachable: false });
    expect(fake.updates(uuid).map((c) => [c.cluster, c.attributes])).toEqual([
      ['doorLock', { lockState: 2 }],
      ['bridgedDeviceBasicInformation', { reachable: false }],
    ]);
  });

  it('a refused update is logged at debug level and never thrown', async () => {
    const { publisher, captured } = setup();
    await expect(publisher.update('not-registered', 'Ghost', { doorLock: { lockState: 1 } })).resolves.toBeUndefined();
    expect(captured.text('debug')).toMatch(/Matter: Ghost did not take doorLock/);
  });
});

describe('one press per real ring', () => {
  it('a ring is a press then a release', async () => {
    const { fake, publisher, bellPlan } = setup();
    vi.useFakeTimers();
    const uuid = publisher.uuidOf(bellPlan);
    const ring = publisher.ring(uuid, 'Front Doorbell');
    await vi.advanceTimersByTimeAsync(RING_SPACING_MS);
    await ring;
    expect(fake.of('switch').map((c) => c.action)).toEqual(['press', 'release']);
  });

  it('two rings in a row are spaced past the multi-press window, so they never read as one double press', async () => {
    vi.useFakeTimers();
    const { fake, publisher, bellPlan } = setup();
    const uuid = publisher.uuidOf(bellPlan);
    void publisher.ring(uuid, 'Front Doorbell');
    void publisher.ring(uuid, 'Front Doorbell');
    await vi.advanceTimersByTimeAsync(RING_SPACING_MS - 50);
    expect(fake.of('switch').map((c) => c.action)).toEqual(['press', 'release']);
    await vi.advanceTimersByTimeAsync(100);
    expect(fake.of('switch').map((c) => c.action)).toEqual(['press', 'release', 'press', 'release']);
    expect(RING_SPACING_MS).toBeGreaterThan(300);
  });
});
