// Who and how as Apple Home sees it: the built plugin in a real Homebridge 2 against the
// simulator, checked through a paired HomeKit controller (hap-controller over HAP on 127.0.0.1).
import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted, type SessionStart } from '../harness/e2e-session.js';
import { characteristicId, shortType, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { GUEST } from '../sim/events.js';
import { startSimulator, type FireOptions, type Simulator } from '../sim/index.js';
import { lockOperation } from '../sim/payloads.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;
const TIMES_OPENED = 'E863F129-079E-48FF-8F27-9C2605A29F52';
const HISTORY_REQUEST = 'E863F11C-079E-48FF-8F27-9C2605A29F52';
const HISTORY_ENTRIES = 'E863F117-079E-48FF-8F27-9C2605A29F52';

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;
const subscriptions: Subscription[] = [];

function platformConfig(frontDoorSensorOnly: boolean): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, {
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, ...(frontDoorSensorOnly ? { doorSensorOnly: true } : {}) },
      { id: 'LOCK-2', name: 'Back Door', doorSensorOnly: !frontDoorSensorOnly },
    ],
    people: [{ userId: GUEST.UserID, name: 'Jamie' }, { userId: sim.account.userId, name: 'Alex' }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: false,
  });
}

/** Callbacks reach the plugin only once both locks' webhooks are registered. */
const homebridge = (frontDoorSensorOnly = false): SessionStart => ({ platforms: [platformConfig(frontDoorSensorOnly)], registrations: { sim, atLeast: 2 } });

async function restart(frontDoorSensorOnly: boolean): Promise<void> {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
  await session.restart(homebridge(frontDoorSensorOnly));
  await paired().reconnect();
}

const accessory = (name: string): Promise<HapAccessoryInfo> => eventually(() => paired().accessory(name), `accessory ${name}`);
const types = (a: HapAccessoryInfo): string[] => a.services.map((s) => s.type);
const primary = (a: HapAccessoryInfo): string | undefined => a.services.find((s) => s.primary)?.type;

/** LockLastKnownAction of the lock, read through HAP once it shows `expected`. */
async function expectLastAction(name: string, expected: number, what: string): Promise<void> {
  await eventually(async () => {
    const lock = await paired().accessory(name);
    const value = (await paired().readOne(characteristicId(lock, S.LockManagement.UUID, C.LockLastKnownAction.UUID))).value;
    return value === expected ? true : undefined;
  }, `${what}: LockLastKnownAction ${expected}`);
}

const fire = async (name: string, options: FireOptions = {}) => {
  expect((await fireAccepted(sim, name, options)).length).toBeGreaterThan(0);
};

/** The person's ProgrammableSwitchEvent on the lock, subscribed on a connection of its own. */
async function subscribePerson(lockName: string, person: string): Promise<{ id: string; subscription: Subscription }> {
  const lock = await accessory(lockName);
  const id = characteristicId(lock, S.StatelessProgrammableSwitch.UUID, C.ProgrammableSwitchEvent.UUID, person);
  const subscription = await paired().subscribe([id]);
  subscriptions.push(subscription);
  return { id, subscription };
}

/** Events are applied in order: once the door of `lockId` reads `state`, every callback before it has been handled. */
async function settled(lockId: string, lockName: string, state: 'open' | 'closed'): Promise<void> {
  await fire(state === 'open' ? 'door-open' : 'door-closed', { lockId });
  const lock = await accessory(lockName);
  const id = characteristicId(lock, S.ContactSensor.UUID, C.ContactSensorState.UUID);
  const expected = state === 'open' ? 1 : 0;
  await eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${lockName} door ${state}`);
}

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true, lockState: 'locked' },
      { id: 'LOCK-2', name: 'Back Door', doorSensor: true, keypad: true, lockState: 'locked' },
    ],
  });
  listenPort = await freePort();
  await session.start(homebridge());
  await session.pair(3, 'the bridge and two accessories');
}, 90_000);

afterAll(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
  await session.close();
  await sim.close();
});

describe('LockManagement and LockLastKnownAction, read through HAP', () => {
  it('a controller that reads the accessory database before any operation finds LockLastKnownAction and can read it (0 until the first operation)', async () => {
    // Nothing has been fired yet: this is the database Apple Home caches at pairing.
    const front = await accessory('Front Door');
    const id = characteristicId(front, S.LockManagement.UUID, C.LockLastKnownAction.UUID);
    const read = await paired().readOne(id);
    expect(read.value).toBe(0);
  });

  it('LockManagement (Version "1.0") with the last action after keypad, app, manual, one-touch and Apple Home operations; a status report changes nothing', async () => {
    const front = await accessory('Front Door');
    expect(primary(front)).toBe(shortType(S.LockMechanism.UUID));
    expect((await paired().readOne(characteristicId(front, S.LockManagement.UUID, C.Version.UUID))).value).toBe('1.0');
    await fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await expectLastAction('Front Door', C.LockLastKnownAction.UNSECURED_BY_KEYPAD, 'keypad unlock');
    await fire('lock', { lockId: 'LOCK-1', by: 'app' });
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_REMOTELY, 'app lock');
    await fire('unlock', { lockId: 'LOCK-1', by: 'manual' });
    await expectLastAction('Front Door', C.LockLastKnownAction.UNSECURED_PHYSICALLY, 'manual unlock');
    await fire('onetouchlock', { lockId: 'LOCK-1' });
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_BY_KEYPAD, 'one-touch lock');
    await fire('unlock', { lockId: 'LOCK-1', by: 'manual' });
    await expectLastAction('Front Door', C.LockLastKnownAction.UNSECURED_PHYSICALLY, 'manual unlock');
    await fire('lock', { lockId: 'LOCK-1', by: 'manual' });
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_PHYSICALLY, 'manual lock');
    // A status report of the present state is not an action.
    await fire('status', { lockId: 'LOCK-1' });
    await settled('LOCK-1', 'Front Door', 'open');
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_PHYSICALLY, 'after a status report');
    // Apple Home: the controller writes LockTargetState; the service carries it out.
    const target = characteristicId(await accessory('Front Door'), S.LockMechanism.UUID, C.LockTargetState.UUID);
    expect(await paired().write(target, C.LockTargetState.UNSECURED)).toBe(0);
    await expectLastAction('Front Door', C.LockLastKnownAction.UNSECURED_REMOTELY, 'unlock from Apple Home');
    expect(await paired().write(target, C.LockTargetState.SECURED)).toBe(0);
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_REMOTELY, 'lock from Apple Home');
    expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
  }, 120_000);
});

describe('a person\'s trigger reaches a subscribed controller once per real event', () => {
  it('Jamie\'s switch: SINGLE_PRESS for her unlock, DOUBLE_PRESS for her lock; never for a redelivery, a status report, a late event or Alex', async () => {
    const jamie = await subscribePerson('Front Door', 'Jamie');
    const alex = await subscribePerson('Front Door', 'Alex');
    // The same delivery twice: the second is a redelivery (answered 200, dropped as a duplicate).
    const unlock = lockOperation({ lockId: 'LOCK-1', event: 'unlock', device: 'keypad', user: GUEST, eventId: 'e2e-jamie-unlock' });
    await fire('raw', { lockId: 'LOCK-1', payload: unlock });
    await jamie.subscription.waitFor((e) => e.id === jamie.id && e.value === 0, 'Jamie unlocks');
    await fire('raw', { lockId: 'LOCK-1', payload: unlock });
    await fire('lock', { lockId: 'LOCK-1', by: 'keypad' });
    await jamie.subscription.waitFor((e) => e.id === jamie.id && e.value === 1, 'Jamie locks');
    // A status report (asked by Alex) and a keypad unlock of Jamie's signed 90 s ago (no event time) press nothing.
    await fire('status', { lockId: 'LOCK-1' });
    const { Timestamp: _t, timeStamp: _s, ...untimed } = lockOperation({ lockId: 'LOCK-1', event: 'unlock', device: 'keypad', user: GUEST, eventId: 'e2e-jamie-late' });
    await fire('raw', { lockId: 'LOCK-1', payload: untimed, signature: { skewMs: -90_000 } });
    await session.hb?.waitForLog(/Front Door: Jamie's automation trigger stays quiet: it arrived more than 60 seconds late/);
    // Alex unlocks from the app: only Alex's switch.
    await fire('unlock', { lockId: 'LOCK-1', by: 'app' });
    await alex.subscription.waitFor((e) => e.id === alex.id && e.value === 0, 'Alex unlocks');
    await settled('LOCK-1', 'Front Door', 'closed');
    expect(jamie.subscription.events.filter((e) => e.id === jamie.id).map((e) => e.value)).toEqual([0, 1]);
    expect(alex.subscription.events.filter((e) => e.id === alex.id).map((e) => e.value)).toEqual([0]);
  }, 120_000);
});

describe('doorSensorOnly', () => {
  it('a door-sensor-only lock has no lock services, its contact sensor leads, batteries stay, door and person events still arrive', async () => {
    const back = await accessory('Back Door');
    expect(types(back)).not.toContain(shortType(S.LockMechanism.UUID));
    expect(types(back)).not.toContain(shortType(S.LockManagement.UUID));
    expect(primary(back)).toBe(shortType(S.ContactSensor.UUID));
    expect(types(back)).toContain(shortType(S.Battery.UUID));
    await settled('LOCK-2', 'Back Door', 'open');
    await settled('LOCK-2', 'Back Door', 'closed');
    const jamie = await subscribePerson('Back Door', 'Jamie');
    await fire('unlock', { lockId: 'LOCK-2', by: 'keypad' });
    await jamie.subscription.waitFor((e) => e.id === jamie.id && e.value === 0, 'Jamie unlocks the back door');
  }, 120_000);

  it('the Eve app\'s door history: the opening count, and a history request answered from the reference record on', async () => {
    const back = await accessory('Back Door');
    const opened = characteristicId(back, S.ContactSensor.UUID, TIMES_OPENED);
    expect((await paired().readOne(opened)).value).toBe(1);
    await settled('LOCK-2', 'Back Door', 'open');
    expect((await paired().readOne(opened)).value).toBe(2);
    const history = back.services.find((s) => s.characteristics.some((c) => c.type === HISTORY_REQUEST));
    const request = history?.characteristics.find((c) => c.type === HISTORY_REQUEST);
    const entries = history?.characteristics.find((c) => c.type === HISTORY_ENTRIES);
    if (!request || !entries) throw new Error('no Eve history service on the Back Door');
    expect(await paired().write(`${request.aid}.${request.iid}`, Buffer.from('000001000000', 'hex').toString('base64'))).toBe(0);
    const chunk = Buffer.from(String((await paired().readOne(`${entries.aid}.${entries.iid}`)).value), 'base64');
    // The reference record, then one 11-byte contact record per change (open, closed, open).
    expect(chunk.readUInt8(0)).toBe(21);
    expect(chunk.subarray(21).length % 11).toBe(0);
    expect(chunk.subarray(21).length / 11).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('switching it on and off converges the cached accessories (services added and pruned) without a re-pair', async () => {
    const frontAid = (await accessory('Front Door')).aid;
    await restart(true);
    const front = await accessory('Front Door');
    expect(front.aid).toBe(frontAid);
    expect(types(front)).not.toContain(shortType(S.LockMechanism.UUID));
    expect(types(front)).not.toContain(shortType(S.LockManagement.UUID));
    expect(primary(front)).toBe(shortType(S.ContactSensor.UUID));
    const back = await accessory('Back Door');
    expect(primary(back)).toBe(shortType(S.LockMechanism.UUID));
    expect(types(back)).toContain(shortType(S.LockManagement.UUID));
    await restart(false);
    const again = await accessory('Front Door');
    expect(primary(again)).toBe(shortType(S.LockMechanism.UUID));
    // A new LockManagement has LockLastKnownAction from its first publication.
    const management = again.services.find((s) => s.type === shortType(S.LockManagement.UUID));
    expect(management?.characteristics.map((c) => c.type)).toContain(shortType(C.LockLastKnownAction.UUID));
    expect(primary(await accessory('Back Door'))).toBe(shortType(S.ContactSensor.UUID));
    const jamie = await subscribePerson('Front Door', 'Jamie');
    await fire('lock', { lockId: 'LOCK-1', by: 'keypad' });
    await jamie.subscription.waitFor((e) => e.id === jamie.id && e.value === 1, 'Jamie locks after the switch back');
    await expectLastAction('Front Door', C.LockLastKnownAction.SECURED_BY_KEYPAD, 'keypad lock after switching back');
    // HAP-NodeJS accepted every service and characteristic without a warning, in every run.
    expect(session.hb?.logs.filter((line) => /characteristic/i.test(line) && /warn|illegal|not in required/i.test(line))).toEqual([]);
  }, 180_000);
});
