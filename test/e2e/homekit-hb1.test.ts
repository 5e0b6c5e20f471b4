// The same plugin on Homebridge 1.x (HAP-NodeJS 0.x): the HomeKit side works there too. A shorter
// run than homekit.test.ts: one row of each kind, No Response, control, the doorbell and its picture.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession } from '../harness/e2e-session.js';
import { characteristicId, type Subscription } from '../harness/hap.js';
import { freePort, REPO_ROOT } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let subscription: Subscription | undefined;
const session = new E2eSession();
const { eventually, paired } = session;

const readValue = async (id: string, expected: unknown, what: string) =>
  eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${what} = ${String(expected)}`);

beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }], doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }] });
  const listenPort = await freePort();
  await session.start({
    flavour: 'homebridge1',
    platforms: [
      simPlatformConfig(sim, listenPort, {
        locks: [{ id: 'LOCK-1', name: 'Front Door' }],
        doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
        discoverDevices: false,
        userWebhook: false,
        refreshStateOnStart: false,
      }),
    ],
    // The first events are fired as soon as the controller is paired; they reach the plugin only once both webhooks are registered.
    registrations: { sim, atLeast: 2 },
  });
  await session.pair(3, 'the bridge and two accessories');
}, 90_000);

afterAll(async () => {
  await subscription?.close();
  await session.close();
  await sim.close();
});

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
    subscription = await paired().subscribe([press]);
    await sim.fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'hb1-press' });
    await subscription.waitFor((e) => e.id === press && e.value === 0, 'the press');
    await sim.fire('video-available', { doorbellId: 'BELL-1', dvrId: 'hb1-press' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(1);
    const image = await paired().image(bell.aid, 640, 360);
    expect(image.equals(await readFile(join(REPO_ROOT, 'dist', 'assets', 'placeholder.jpg')))).toBe(true);
  });
});
