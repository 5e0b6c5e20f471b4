// End to end against the service simulator: every payload builder of test/sim/payloads.ts is
// delivered by the simulator's signed delivery engine to a real listener on 127.0.0.1:0.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { DedupeStore } from '../../src/callbacks/dedupe.js';
import { startReceiver } from '../../src/callbacks/receiver.js';
import type { CallbackContext, Receiver } from '../../src/callbacks/receiver.js';
import { callbackUrls } from '../../src/config.js';
import type { DeviceEvent } from '../../src/model/events.js';
import { CALLBACK_TOKEN_HEADER, DOORBELL_NOTIFICATION_TYPES, LOCK_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';
import { ManualClock, RETRY_DELAYS_MS, startSimulator } from '../sim/index.js';
import type { Simulator } from '../sim/index.js';
import * as p from '../sim/payloads.js';
import { makeHarness } from './helpers.js';
import type { Harness } from './helpers.js';

const LOCK = 'SIM-LOCK-1';
const DOORBELL = 'SIM-DB-1';
const TOKEN = 'sim-callback-token-0123456789abcdef';

let clock: ManualClock;
let sim: Simulator;
let h: Harness;
let receiver: Receiver;
let ready: boolean;
const sunk: { events: DeviceEvent[]; context: CallbackContext }[] = [];

async function register(path: string, notificationTypes: readonly string[], url: string): Promise<void> {
  const res = await fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-api-key': sim.account.apiKey, 'x-svc-access-token': sim.mintAccessToken() },
    body: JSON.stringify({ url, method: 'POST', clientID: sim.account.clientId, header: CALLBACK_TOKEN_HEADER, token: TOKEN, notificationTypes }),
  });
  expect(res.status).toBe(200);
}

// One simulator and one listener for the file (a shared 2-core machine); each test resets the sink.
beforeAll(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  sim = await startSimulator({ clock, locks: [{ id: LOCK, name: 'Front Door' }], doorbells: [{ id: DOORBELL, name: 'Front Doorbell' }] });
  ready = true;
  h = await makeHarness();
  const dedupe = await DedupeStore.open({ storage: new Storage(h.dir), now: () => clock.now() });
  receiver = await startReceiver({
    ...h.options,
    apiKey: sim.account.apiKey,
    callbackToken: () => TOKEN,
    dedupe,
    now: () => clock.now(),
    isReady: () => ready,
    onEvents: (events, context) => sunk.push({ events, context }),
  });
  const urls = callbackUrls(`http://127.0.0.1:${receiver.port}/lock-access`);
  await register(`/webhook/${LOCK}`, LOCK_NOTIFICATION_TYPES, urls.lock(LOCK));
  await register(`/webhook/doorbell/${DOORBELL}`, DOORBELL_NOTIFICATION_TYPES, urls.doorbell(DOORBELL));
  await register('/webhook/user', USER_NOTIFICATION_TYPES, urls.user());
});

beforeEach(async () => {
  await sim.idle();
  expect(sim.pendingRetries()).toBe(0);
  sunk.length = 0;
  ready = true;
});

afterAll(async () => {
  await sim.close();
  await receiver.close();
  await h.cleanup();
});

const userId = () => sim.account.userId;
const somebody = p.person({ UserID: 'user-sim-7' });

/** Every builder of test/sim/payloads.ts, with where it is delivered and the event kind it becomes. */
const cases: { name: string; build: () => object; target: () => Parameters<Simulator['send']>[1]; kind: DeviceEvent['kind'] }[] = [
  { name: 'lockOperation (app)', build: () => p.lockOperation({ lockId: LOCK, event: 'unlock', device: 'lock', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'lockState' },
  { name: 'lockOperation (keypad)', build: () => p.lockOperation({ lockId: LOCK, event: 'lock', device: 'keypad', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'lockState' },
  { name: 'manualOperation', build: () => p.manualOperation({ lockId: LOCK, event: 'lock' }), target: () => ({ lockId: LOCK }), kind: 'lockState' },
  { name: 'oneTouchLock', build: () => p.oneTouchLock({ lockId: LOCK }), target: () => ({ lockId: LOCK }), kind: 'lockState' },
  ...(['open', 'closed', 'ajar', 'init', 'unknown'] as const).map((state) => ({
    name: `doorState ${state}`, build: () => p.doorState({ lockId: LOCK, state }), target: () => ({ lockId: LOCK }), kind: 'doorState' as const,
  })),
  { name: 'lockStatus (no custom header)', build: () => p.lockStatus({ lockId: LOCK, state: 'lock', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'lockState' },
  { name: 'lockNameChanged', build: () => p.lockNameChanged({ lockId: LOCK, name: 'Back Door', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'lockName' },
  { name: 'privacyMode', build: () => p.privacyMode({ lockId: LOCK, value: true }), target: () => ({ lockId: LOCK }), kind: 'configFlag' },
  { name: 'vacationMode', build: () => p.vacationMode({ lockId: LOCK, value: true }), target: () => ({ lockId: LOCK }), kind: 'configFlag' },
  { name: 'keypadEnabled', build: () => p.keypadEnabled({ lockId: LOCK, value: false }), target: () => ({ lockId: LOCK }), kind: 'configFlag' },
  { name: 'keypadPinManaged (no custom header)', build: () => p.keypadPinManaged({ lockId: LOCK, lockName: 'Front Door', state: 'load', pinUser: somebody, user: somebody }), target: () => ({ lockId: LOCK }), kind: 'pinManaged' },
  { name: 'masterPinChanged (no custom header)', build: () => p.masterPinChanged({ lockId: LOCK, lockName: 'Front Door' }), target: () => ({ lockId: LOCK }), kind: 'pinManaged' },
  { name: 'keypadBattery', build: () => p.keypadBattery({ lockId: LOCK, event: 'keypad_battery_critical', serialNumber: 'K-1' }), target: () => ({ lockId: LOCK }), kind: 'battery' },
  { name: 'lockBatteryAlert', build: () => p.lockBatteryAlert({ lockId: LOCK, warningLevel: 'lock_state_battery_warning_2day', userId: userId() }), target: () => ({ lockId: LOCK }), kind: 'battery' },
  { name: 'batteryLevel (lock)', build: () => p.batteryLevel({ lockId: LOCK, deviceType: 'lock', event: 'battery_level_warning', userId: userId() }), target: () => ({ lockId: LOCK }), kind: 'battery' },
  { name: 'batteryLevel (keypad)', build: () => p.batteryLevel({ lockId: LOCK, deviceType: 'keypad', event: 'battery_level_none', userId: userId() }), target: () => ({ lockId: LOCK }), kind: 'battery' },
  { name: 'systemStatus offline', build: () => p.systemStatus({ lockId: LOCK, event: 'offline' }), target: () => ({ lockId: LOCK }), kind: 'online' },
  { name: 'systemStatus online', build: () => p.systemStatus({ lockId: LOCK, event: 'online' }), target: () => ({ lockId: LOCK }), kind: 'online' },
  { name: 'clockDrift', build: () => p.clockDrift({ lockId: LOCK, driftedTo: Date.UTC(2030, 0, 1) }), target: () => ({ lockId: LOCK }), kind: 'clockDrift' },
  { name: 'lockUserAdd', build: () => p.lockUserAdd({ lockId: LOCK, lockName: 'Front Door', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'membership' },
  { name: 'lockUserRemove', build: () => p.lockUserRemove({ lockId: LOCK, lockName: 'Front Door', user: somebody }), target: () => ({ lockId: LOCK }), kind: 'membership' },
  { name: 'lockUserTypeChanged', build: () => p.lockUserTypeChanged({ lockId: LOCK, lockName: 'Front Door', user: somebody, userType: 'superuser' }), target: () => ({ lockId: LOCK }), kind: 'membership' },
  { name: 'lockAccessTypeChanged', build: () => p.lockAccessTypeChanged({ lockId: LOCK, lockName: 'Front Door', user: somebody, accessType: 'rule_access_temporary' }), target: () => ({ lockId: LOCK }), kind: 'membership' },
  { name: 'doorbellMotion', build: () => p.doorbellMotion({ doorbellId: DOORBELL, url: 'http://img.example/m.jpg', width: 640, height: 480 }), target: () => ({ doorbellId: DOORBELL }), kind: 'motion' },
  { name: 'doorbellButtonPush', build: () => p.doorbellButtonPush({ doorbellId: DOORBELL }), target: () => ({ doorbellId: DOORBELL }), kind: 'doorbellPress' },
  { name: 'doorbellVideoAvailable', build: () => p.doorbellVideoAvailable({ doorbellId: DOORBELL, cause: 'buttonpush' }), target: () => ({ doorbellId: DOORBELL }), kind: 'videoAvailable' },
  { name: 'userLockMembership', build: () => p.userLockMembership({ userId: userId(), lockId: LOCK, event: 'lock_user_add' }), target: () => ({ user: true }), kind: 'membership' },
  { name: 'userLockUserTypeChanged', build: () => p.userLockUserTypeChanged({ userId: userId(), lockId: LOCK, userType: 'user' }), target: () => ({ user: true }), kind: 'membership' },
  { name: 'userLockAccessTypeChanged', build: () => p.userLockAccessTypeChanged({ userId: userId(), lockId: LOCK, accessType: 'rule_access_always' }), target: () => ({ user: true }), kind: 'membership' },
  { name: 'userLifecycle', build: () => p.userLifecycle({ userId: userId() }), target: () => ({ user: true }), kind: 'accountDeleted' },
];

const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('spec Events: every simulator payload builder, delivered end to end', () => {
  it.each(cases)('$name is accepted (200) and normalised to $kind', async ({ build, target, kind }) => {
    const results = await sim.send(build(), target());
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 200, outcome: 'delivered' });
    await settle();
    expect(sunk).toHaveLength(1);
    expect(sunk[0]?.events.map((e) => e.kind)).toEqual([kind]);
  });

  it('base64 signatures and millisecond t from the simulator are accepted too', async () => {
    const base64 = await sim.send(p.privacyMode({ lockId: LOCK, value: false }), { lockId: LOCK, signature: { encoding: 'base64', timestampUnit: 'ms' } });
    expect(base64[0]?.status).toBe(200);
  });

  it('a delivery whose signature is 301 s old is refused with 401', async () => {
    const results = await sim.send(p.privacyMode({ lockId: LOCK, value: false }), { lockId: LOCK, signature: { skewMs: -301_000 } });
    expect(results[0]?.status).toBe(401);
  });
});

describe('spec Limits: retries follow our answers', () => {
  it('a 503 from us is retried on the spec schedule until accepted, with one effect', async () => {
    ready = false;
    const start = clock.now();
    const before = sim.deliveries.length;
    const mine = () => sim.deliveries.slice(before);
    const [result] = await sim.send(p.doorbellButtonPush({ doorbellId: DOORBELL }), { doorbellId: DOORBELL });
    expect(result).toMatchObject({ status: 503, willRetry: true });

    clock.advance((RETRY_DELAYS_MS[0] ?? 0) - 1);
    await sim.idle();
    expect(mine()).toHaveLength(1);
    clock.advance(1);
    await sim.idle();
    expect(mine()).toHaveLength(2);
    expect(mine()[1]).toMatchObject({ status: 503, at: start + 30_000 });

    ready = true;
    clock.advance(RETRY_DELAYS_MS[1] ?? 0);
    await sim.idle();
    expect(mine().map((d) => [d.attempt, d.at - start, d.status])).toEqual([[1, 0, 503], [2, 30_000, 503], [3, 90_000, 200]]);
    expect(await result?.done).toBe('delivered');
    await settle();
    expect(sunk).toHaveLength(1);
    expect(sunk[0]?.events[0]).toMatchObject({ kind: 'doorbellPress', doorbellId: DOORBELL });
  });

  it('a 401 from us is not retried', async () => {
    const before = sim.deliveries.length;
    const [result] = await sim.send(p.privacyMode({ lockId: LOCK, value: true }), { lockId: LOCK, signature: { secret: 'not-the-api-key' } });
    expect(result).toMatchObject({ status: 401, willRetry: false, outcome: 'rejected' });
    clock.advance(25 * 60 * 60 * 1000);
    await sim.idle();
    expect(sim.deliveries.length - before).toBe(1);
    expect(sim.pendingRetries()).toBe(0);
    expect(sunk).toHaveLength(0);
  });

  it('a delivery without the custom header on a kind that needs it is 401 and not retried', async () => {
    const [result] = await sim.send(p.keypadBattery({ lockId: LOCK, event: 'keypad_battery_none', serialNumber: 'K-1' }), { lockId: LOCK, noCustomHeader: true });
    expect(result).toMatchObject({ status: 401, willRetry: false });
  });
});
