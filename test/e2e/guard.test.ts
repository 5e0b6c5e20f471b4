// Guard the door, as Apple Home sees it: the built plugin in a real Homebridge against the
// simulator, through a paired HomeKit controller. Auto-lock locks once the door is closed (and
// Lock Management says so), AutoSecurityTimeout is written and kept across a restart, the "Left
// Open" / "Left Unlocked" sensors are there, and the doorbell's chime switch mutes presses. The same
// bridge carries the delivery watch's "Lock Access Events Stopped" sensor, read through HAP here and
// gone after a restart with webhook.deliverySensor false (its schedule, on fake time:
// test/runtime/delivery-in-plugin.test.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted, type SessionStart } from '../harness/e2e-session.js';
import { characteristicId, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { readEventLog } from '../../src/status/event-log.js';
import { Storage } from '../../src/storage.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;
const subscriptions: Subscription[] = [];

const SENSOR = 'Lock Access Events Stopped';

const homebridge = (deliverySensor = true): SessionStart => ({
  platforms: [simPlatformConfig(sim, listenPort, {
    webhook: { ...(simPlatformConfig(sim, listenPort).webhook as Record<string, unknown>), deliverySensor },
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, autoLockSeconds: 1, leftOpenSeconds: 300, leftUnlockedSeconds: 600 }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 5 }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: false,
  })],
  registrations: { sim, atLeast: 2 },
});

beforeAll(async () => {
  sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true, lockState: 'locked' }],
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
const read = async (name: string, service: string, characteristic: string, serviceName?: string) =>
  (await paired().readOne(characteristicId(await accessory(name), service, characteristic, serviceName))).value;

describe('guard the door, read through HAP', () => {
  it('"Lock Access Events Stopped" is on a bridge-level accessory "Lock Access" and reads 0 (closed) before anything is known', async () => {
    expect(await read('Lock Access', S.ContactSensor.UUID, C.ContactSensorState.UUID, SENSOR)).toBe(0);
  });

  it('"Left Open" and "Left Unlocked" contact sensors are there, named for the lock, not tripped', async () => {
    expect(await read('Front Door', S.ContactSensor.UUID, C.ContactSensorState.UUID, 'Front Door Left Open')).toBe(0);
    expect(await read('Front Door', S.ContactSensor.UUID, C.ContactSensorState.UUID, 'Front Door Left Unlocked')).toBe(0);
  });

  it('auto-lock: unlocked with the door closed, the plugin locks it by itself; Lock Management says "secured by auto-secure timeout"', async () => {
    expect(await read('Front Door', S.LockManagement.UUID, C.LockManagementAutoSecurityTimeout.UUID)).toBe(1);
    const before = sim.stats.byRoute['PUT /api/remoteoperate/:lockID/:operation'] ?? 0;
    await fireAccepted(sim, 'door-closed', { lockId: 'LOCK-1' });
    await fireAccepted(sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await eventually(async () => ((await read('Front Door', S.LockMechanism.UUID, C.LockCurrentState.UUID)) === 1 ? true : undefined), 'locked by auto-lock', 20_000);
    await eventually(async () => ((await read('Front Door', S.LockManagement.UUID, C.LockLastKnownAction.UUID)) === 8 ? true : undefined), 'LockLastKnownAction 8');
    expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
    expect((sim.stats.byRoute['PUT /api/remoteoperate/:lockID/:operation'] ?? 0) - before).toBe(1);
    // The service's callback for that lock names the account owner; the plugin words it as its own auto-lock.
    await session.hb?.waitForLog(/Front Door: Locked by auto-lock \(the door was closed for 1 s\)\./);
    const storagePath = session.hb?.storagePath ?? '';
    const autoLockEntry = await eventually(async () => (await readEventLog(Storage.under(storagePath))).find((e) => e.text.startsWith('Locked by auto-lock')), 'the event log line', 20_000);
    expect(autoLockEntry).toMatchObject({ deviceName: 'Front Door', text: 'Locked by auto-lock (the door was closed for 1 s)' });
    expect(autoLockEntry.userId).toBeUndefined();
  });

  it('never with the door open: unlocked with the door open stays unlocked', async () => {
    await fireAccepted(sim, 'door-open', { lockId: 'LOCK-1' });
    await fireAccepted(sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await eventually(async () => ((await read('Front Door', S.LockMechanism.UUID, C.LockCurrentState.UUID)) === 0 ? true : undefined), 'unlocked');
    // Three times the delay: the door is open, so nothing is sent.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await read('Front Door', S.LockMechanism.UUID, C.LockCurrentState.UUID)).toBe(0);
    expect(sim.lock('LOCK-1')?.lockState).toBe('unlocked');
    await fireAccepted(sim, 'lock', { lockId: 'LOCK-1', by: 'keypad' });
  });

  it('AutoSecurityTimeout written from HomeKit is kept across a restart', async () => {
    const id = characteristicId(await accessory('Front Door'), S.LockManagement.UUID, C.LockManagementAutoSecurityTimeout.UUID);
    await paired().write(id, 0);
    await eventually(async () => ((await paired().readOne(id)).value === 0 ? true : undefined), 'auto-lock off');
    for (const subscription of subscriptions.splice(0)) await subscription.close();
    await session.restart(homebridge());
    await paired().reconnect();
    expect(await read('Front Door', S.LockManagement.UUID, C.LockManagementAutoSecurityTimeout.UUID)).toBe(0);
  });

  it('the doorbell chime switch: On by default; Off mutes a press (no ProgrammableSwitchEvent), On rings again', async () => {
    const bell = await accessory('Front Doorbell');
    const chime = characteristicId(bell, S.Switch.UUID, C.On.UUID, 'Front Doorbell Chime');
    expect(Boolean((await paired().readOne(chime)).value)).toBe(true);
    const press = characteristicId(bell, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    const subscription = await paired().subscribe([press]);
    subscriptions.push(subscription);
    await paired().write(chime, false);
    await fireAccepted(sim, 'doorbell-press', { doorbellId: 'BELL-1', dvrId: 'muted-press' });
    await session.hb?.waitForLog(/Front Doorbell: doorbell pressed; the chime is off/);
    await paired().write(chime, true);
    await fireAccepted(sim, 'doorbell-press', { doorbellId: 'BELL-1', dvrId: 'ringing-press' });
    await subscription.waitFor((e) => e.id === press, 'the press after the chime is on again');
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(1);
  });

  it('an earlier version\'s accessory cache moves to lock-access/devices.json on the first start: the state, the delay chosen in HomeKit and the chime are kept, and the cache keeps none of it', async () => {
    for (const subscription of subscriptions.splice(0)) await subscription.close();
    const hb = session.hb;
    if (!hb) throw new Error('Homebridge is not running');
    await hb.stop();
    // What versions before devices.json kept in each accessory's context.
    const cacheFile = join(hb.storagePath, 'accessories', 'cachedAccessories');
    const cache = JSON.parse(await readFile(cacheFile, 'utf8')) as { displayName: string; context: Record<string, unknown> }[];
    const state = { version: 1, lock: 'unlocked', door: 'open', doorSensorSeen: true, battery: null, keypadBattery: null, keypadSeen: false, online: true, flags: {}, lastAt: {}, recent: [] };
    for (const cached of cache) {
      if (cached.displayName === 'Front Door') {
        cached.context = { lockAccessDevice: { kind: 'lock', id: 'LOCK-1', name: 'Front Door', doorSensor: true, autoLockSeconds: 1, leftOpenSeconds: 300, leftUnlockedSeconds: 600 }, lockAccess: state, lockAccessGuard: { configSeconds: 1, homekitSeconds: 77 } };
      }
      if (cached.displayName === 'Front Doorbell') cached.context = { lockAccessDevice: { kind: 'doorbell', id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 5 }, lockAccessChime: false };
    }
    await writeFile(cacheFile, JSON.stringify(cache));
    const storage = Storage.under(hb.storagePath);
    await storage.remove('devices.json');

    await session.start(homebridge());
    await paired().reconnect();
    expect(await read('Front Door', S.LockMechanism.UUID, C.LockCurrentState.UUID)).toBe(C.LockCurrentState.UNSECURED);
    expect(await read('Front Door', S.ContactSensor.UUID, C.ContactSensorState.UUID, 'Front Door Door')).toBe(C.ContactSensorState.CONTACT_NOT_DETECTED);
    expect(await read('Front Door', S.LockManagement.UUID, C.LockManagementAutoSecurityTimeout.UUID)).toBe(77);
    expect(Boolean(await read('Front Doorbell', S.Switch.UUID, C.On.UUID, 'Front Doorbell Chime'))).toBe(false);
    const devices = await storage.readText('devices.json');
    expect(devices).toContain('"homekitSeconds":77');

    // Homebridge saves its cache at shutdown: the moved values are gone from it. (This restart also
    // turns the delivery sensor off, for the next test: one restart less.)
    await session.restart(homebridge(false));
    await paired().reconnect();
    const after = await readFile(join(hb.storagePath, 'accessories', 'cachedAccessories'), 'utf8');
    expect(after).not.toContain('lockAccessGuard');
    expect(after).not.toContain('lockAccessChime');
    expect(await read('Front Door', S.LockManagement.UUID, C.LockManagementAutoSecurityTimeout.UUID)).toBe(77);
  });

  it('webhook.deliverySensor false: after a restart the "Lock Access" accessory is gone', async () => {
    // The restart with the sensor off was the previous test's last.
    await eventually(async () => ((await paired().accessories()).some((a) => a.name === 'Lock Access') ? undefined : true), 'the accessory removed');
    expect((await paired().accessories()).map((a) => a.name)).toEqual(expect.arrayContaining(['Front Door', 'Front Doorbell']));
  });
});
