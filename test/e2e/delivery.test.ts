// Push that never goes silently deaf, end to end: the built plugin in a real Homebridge against the
// simulator, through a paired HomeKit controller. The service loses every registration; within the
// check period (1 minute, the shortest a user can set) plus the 30 s wait, the log says events are
// not arriving, "Lock Access Events Stopped" opens and every registration has been sent again; one
// verified callback closes the sensor again within a second. With webhook.deliverySensor false
// the sensor's accessory is gone.
import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted, type SessionStart } from '../harness/e2e-session.js';
import { characteristicId, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

const SENSOR = 'Lock Access Events Stopped';

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;
const subscriptions: Subscription[] = [];

const homebridge = (deliverySensor = true): SessionStart => {
  const base = simPlatformConfig(sim, listenPort);
  return {
    platforms: [simPlatformConfig(sim, listenPort, {
      webhook: { ...(base.webhook as Record<string, unknown>), deliveryCheckMinutes: 1, deliverySensor },
      locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
      doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
      discoverDevices: false,
      userWebhook: true,
      refreshStateOnStart: false,
    })],
    registrations: { sim, atLeast: 3 },
  };
};

beforeAll(async () => {
  sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, lockState: 'locked' }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  listenPort = await freePort();
  await session.start(homebridge());
  await session.pair(4, 'the bridge, the lock, the doorbell and "Lock Access"');
}, 90_000);

afterAll(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
  await session.close();
  await sim.close();
});

const accessory = (name: string): Promise<HapAccessoryInfo> => eventually(() => paired().accessory(name), `accessory ${name}`);
const sensorId = async () => characteristicId(await accessory('Lock Access'), S.ContactSensor.UUID, C.ContactSensorState.UUID, SENSOR);

describe('the delivery watch through a real Homebridge and a paired controller', () => {
  it('"Lock Access Events Stopped" is on a bridge-level accessory "Lock Access" and reads 0 (closed) before anything is known', async () => {
    expect((await paired().readOne(await sensorId())).value).toBe(0);
  });

  it('the service lost the registrations: within the period plus 30 s the log says not arriving, the sensor reads 1, and every registration was sent again', async () => {
    const id = await sensorId();
    // One connection per subscription: hap-controller spins on a second subscribe of one connection.
    const subscription = await paired().subscribe([id]);
    subscriptions.push(subscription);
    const lostAt = Date.now();
    expect(sim.loseRegistrations()).toBe(3);
    // The first check comes a minute after the start, its wait 30 s later, and the warning within 15 s of that.
    const warning = await session.hb?.waitForLog(/Events from Lock Access are not arriving/, 150_000);
    expect(warning).toMatch(/a status request for Front Door brought no callback within 30 s/);
    expect(warning).toMatch(/Checked: every webhook registration was sent again \(3 confirmed\); the public address self-check passes/);
    expect(warning).toMatch(/Send a test event from the plugin settings/);
    await subscription.waitFor((event) => event.id === id && event.value === 1, 'the sensor opening');
    expect((await paired().readOne(id)).value).toBe(1);
    const again = sim.registrations();
    expect(again.map((r) => `${r.kind}:${r.kind === 'user' ? 'account' : r.scope}`).sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-1', 'user:account']);
    expect(again.every((r) => r.updatedAt >= lostAt)).toBe(true);
  }, 180_000);

  it('one verified callback sets it back to 0 within a second, with one info line', async () => {
    const id = await sensorId();
    const subscription = subscriptions[0];
    if (!subscription) throw new Error('no subscription');
    const firedAt = Date.now();
    await fireAccepted(sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    const event = await subscription.waitFor((e) => e.id === id && e.value === 0, 'the sensor closing', 1_000);
    expect(event.value).toBe(0);
    expect(Date.now() - firedAt).toBeLessThan(2_000);
    const line = await session.hb?.waitForLog(/Events from Lock Access arrive again/);
    expect(line).toMatch(/arrive again \(a callback for Front Door\)/);
  }, 30_000);

  it('webhook.deliverySensor false: after a restart the "Lock Access" accessory is gone', async () => {
    for (const subscription of subscriptions.splice(0)) await subscription.close();
    await session.restart(homebridge(false));
    await paired().reconnect();
    await eventually(async () => ((await paired().accessories()).some((a) => a.name === 'Lock Access') ? undefined : true), 'the accessory removed');
    expect((await paired().accessories()).map((a) => a.name)).toEqual(expect.arrayContaining(['Front Door', 'Front Doorbell']));
  }, 90_000);
});
