// Who and how on Homebridge 1.x (HAP-NodeJS 0.x): a shorter run than who-and-how.test.ts,
// one of each: the last action, a person's trigger (once, not for a redelivery), a door-sensor-only lock.
import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession } from '../harness/e2e-session.js';
import { characteristicId, shortType, type Subscription } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { GUEST } from '../sim/events.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { lockOperation } from '../sim/payloads.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let subscription: Subscription | undefined;
const session = new E2eSession();
const { eventually, paired } = session;

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', keypad: true, lockState: 'locked' },
      { id: 'LOCK-2', name: 'Back Door', doorSensor: true },
    ],
  });
  const listenPort = await freePort();
  await session.start({
    flavour: 'homebridge1',
    platforms: [
      simPlatformConfig(sim, listenPort, {
        locks: [{ id: 'LOCK-1', name: 'Front Door' }, { id: 'LOCK-2', name: 'Back Door', doorSensorOnly: true }],
        people: [{ userId: GUEST.UserID, name: 'Jamie' }],
        discoverDevices: false,
        userWebhook: false,
        refreshStateOnStart: false,
      }),
    ],
    // Callbacks reach the plugin only once both locks' webhooks are registered.
    registrations: { sim, atLeast: 2 },
  });
  await session.pair(3, 'the bridge and two accessories');
}, 90_000);

afterAll(async () => {
  await subscription?.close();
  await session.close();
  await sim.close();
});

describe('who and how on Homebridge 1.x', () => {
  it('a keypad unlock sets LockLastKnownAction UNSECURED_BY_KEYPAD (5) and presses Jamie\'s switch once, not again for a redelivery; a manual lock sets SECURED_PHYSICALLY (9)', async () => {
    const front = await paired().accessory('Front Door');
    expect((await paired().readOne(characteristicId(front, S.LockManagement.UUID, C.Version.UUID))).value).toBe('1.0');
    const press = characteristicId(front, S.StatelessProgrammableSwitch.UUID, C.ProgrammableSwitchEvent.UUID, 'Jamie');
    subscription = await paired().subscribe([press]);
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
