// The same plugin on Homebridge 1.x (HAP-NodeJS 0.x): the HomeKit side works there too, on one
// Homebridge for the whole file. Shorter runs than homekit.test.ts and who-and-how.test.ts: one row
// of each kind, No Response, control, the doorbell and its picture; then who and how, one of each:
// the last action, a person's trigger (once, not for a redelivery), a door-sensor-only lock.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession } from '../harness/e2e-session.js';
import { characteristicId, shortType, type Subscription } from '../harness/hap.js';
import { freePort, REPO_ROOT } from '../harness/homebridge.js';
import { GUEST } from '../sim/events.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { lockOperation } from '../sim/payloads.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
const subscriptions: Subscription[] = [];
const session = new E2eSession();
const { eventually, paired } = session;

const readValue = async (id: string, expected: unknown, what: string) =>
  eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${what} = ${String(expected)}`);

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', keypad: true, lockState: 'locked' },
      { id: 'LOCK-2', name: 'Back Door', doorSensor: true },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  const listenPort = await freePort();
  await session.start({
    flavour: 'homebridge1',
    platforms: [
      simPlatformConfig(sim, listenPort, {
        locks: [{ id: 'LOCK-1', name: 'Front Door' }, { id: 'LOCK-2', name: 'Back Door', doorSensorOnly: true }],
        doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
        people: [{ userId: GUEST.UserID, name: 'Jamie' }],
        discoverDevices: false,
        userWebhook: false,
        refreshStateOnStart: false,
      }),
    ],
    // The first events are fired as soon as the controller is paired; they reach the plugin only once every webhook is registered.
    registrations: { sim, atLeast: 3 },
  });
  await session.pair(4, 'the bridge and three accessories');
}, 90_000);

afterAll(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
  await session.close();
  await sim.close();
});

// The HomeKit rows first: the lock's first test needs its state untouched.
describe('Homebridge 1.x shows the same HomeKit accessories', () => {
  it('a lock starts UNKNOWN (3), then follows operation events', async () => {
    const front = await paired().accessory('Front Door');
    const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    expect((await paired().readOne(current)).value).toBe(3);
    await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await readValue(current, 0, 'unlocked');
  });

  it('offline gives -70402 (No Response) on reads, online reads again', async () => {
    const front = await paired().accessory('Front Door');
    const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    await sim.fire('bridge-offline', { lockId: 'LOCK-1' });
    await eventually(async () => ((await paired().readOne(current)).status === -70402 ? true : undefined), 'No Response');
    await sim.fire('bridge-online', { lockId: 'LOCK-1' });
    await readValue(current, 0, 'readable again');
  });

  it('locking from the controller operates the lock', async () => {
    const front = await paired().accessory('Front Door');
    expect(await paired().write(characteristicId(front, S.LockMechanism.UUID, C.LockTargetState.UUID), 1)).toBe(0);
    await readValue(characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID), 1, 'locked');
    expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
  });

  it('a doorbell press reaches the subscribed controller once, and the camera gives the placeholder picture', async () => {
    const bell = await paired().accessory('Front Doorbell');
    const press = characteristicId(bell, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    const subscription = await paired().subscribe([press]);
    subscriptions.push(subscription);
    await sim.fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'hb1-press' });
    await subscription.waitFor((e) => e.id === press && e.value === 0, 'the press');
    await sim.fire('video-available', { doorbellId: 'BELL-1', dvrId: 'hb1-press' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(1);
    const image = await paired().image(bell.aid, 640, 360);
    expect(image.equals(await readFile(join(REPO_ROOT, 'dist', 'assets', 'placeholder.jpg')))).toBe(true);
  });
});

describe('who and how on Homebridge 1.x', () => {
  it('a keypad unlock sets LockLastKnownAction UNSECURED_BY_KEYPAD (5) and presses Jamie\'s switch once, not again for a redelivery; a manual lock sets SECURED_PHYSICALLY (9)', async () => {
    const front = await paired().accessory('Front Door');
    expect((await paired().readOne(characteristicId(front, S.LockManagement.UUID, C.Version.UUID))).value).toBe('1.0');
    const press = characteristicId(front, S.StatelessProgrammableSwitch.UUID, C.ProgrammableSwitchEvent.UUID, 'Jamie');
    const subscription = await paired().subscribe([press]);
    subscriptions.push(subscription);
    const unlock = lockOperation({ lockId: 'LOCK-1', event: 'unlock', device: 'keypad', user: GUEST, eventId: 'hb1-jamie-unlock' });
    await sim.fire('raw', { lockId: 'LOCK-1', payload: unlock });
    await subscription.waitFor((e) => e.id === press && e.value === 0, 'Jamie unlocks');
    await eventually(async () => {
      const lock = await paired().accessory('Front Door');
      const value = (await paired().readOne(characteristicId(lock, S.LockManagement.UUID, C.LockLastKnownAction.UUID))).value;
      return value === C.LockLastKnownAction.UNSECURED_BY_KEYPAD ? true : undefined;
    }, 'LockLastKnownAction after the keypad unlock');
    await sim.fire('raw', { lockId: 'LOCK-1', payload: unlock });
    await sim.fire('lock', { lockId: 'LOCK-1', by: 'manual' });
    await eventually(async () => {
      const lock = await paired().accessory('Front Door');
      const value = (await paired().readOne(characteristicId(lock, S.LockManagement.UUID, C.LockLastKnownAction.UUID))).value;
      return value === C.LockLastKnownAction.SECURED_PHYSICALLY ? true : undefined;
    }, 'LockLastKnownAction after the manual lock');
    expect(subscription.events.filter((e) => e.id === press).map((e) => e.value)).toEqual([0]);
    // HAP-NodeJS 0.x accepts every service and characteristic without a warning.
    expect(session.hb?.logs.filter((line) => /characteristic/i.test(line) && /warn|illegal|not in required/i.test(line))).toEqual([]);
  });

  it('a door-sensor-only lock: no LockMechanism or LockManagement, the contact sensor leads and follows door events', async () => {
    const back = await paired().accessory('Back Door');
    const types = back.services.map((s) => s.type);
    expect(types).not.toContain(shortType(S.LockMechanism.UUID));
    expect(types).not.toContain(shortType(S.LockManagement.UUID));
    expect(back.services.find((s) => s.primary)?.type).toBe(shortType(S.ContactSensor.UUID));
    await sim.fire('door-open', { lockId: 'LOCK-2' });
    const contact = characteristicId(back, S.ContactSensor.UUID, C.ContactSensorState.UUID);
    await eventually(async () => ((await paired().readOne(contact)).value === 1 ? true : undefined), 'the back door open');
  });
});
