// What Apple Home sees: the built plugin in a real Homebridge against the simulator, checked through
// a real paired HomeKit controller (hap-controller over HAP on 127.0.0.1).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted, type SessionStart } from '../harness/e2e-session.js';
import { characteristicId, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { freePort, REPO_ROOT } from '../harness/homebridge.js';
import { startSimulator, type FireOptions, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;

function platformConfig(): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, {
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true },
      { id: 'LOCK-2', name: 'Back Door' },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 1 }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: true,
  });
}

/** Callbacks reach the plugin only once both locks' and the doorbell's webhooks are registered. */
const homebridge = (): SessionStart => ({ platforms: [platformConfig()], registrations: { sim, atLeast: 3 } });

async function accessory(name: string): Promise<HapAccessoryInfo> {
  return eventually(() => paired().accessory(name), `accessory ${name}`);
}

/** Reads until the characteristic shows `expected`. */
async function expectValue(id: string, expected: unknown, what: string): Promise<void> {
  await eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${what} = ${String(expected)}`);
}

const fire = (name: string, options: FireOptions = {}) => fireAccepted(sim, name, options);

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true, lockState: 'locked' },
      // no bridge: the start-up status request fails, so this lock stays UNKNOWN
      { id: 'LOCK-2', name: 'Back Door', bridge: 'none' },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  listenPort = await freePort();
  await session.start(homebridge());
  await session.pair(4, 'the bridge and three accessories');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('accessories as Apple Home sees them', () => {
  it('a lock is a LockMechanism (primary) with ContactSensor and Battery; a doorbell a camera with Doorbell primary and MotionSensor', async () => {
    const lock = await accessory('Front Door');
    expect(lock.services.find((s) => s.primary)?.type).toBe('45');
    for (const type of [S.ContactSensor.UUID, S.Battery.UUID]) expect(lock.services.some((s) => s.type === characteristicType(type))).toBe(true);
    // The camera is set up once start-up's ffmpeg check has answered, which may be after pairing.
    const camera = characteristicType(S.CameraRTPStreamManagement.UUID);
    const doorbell = await eventually(async () => {
      const found = await paired().accessory('Front Doorbell');
      return found.services.some((s) => s.type === camera) ? found : undefined;
    }, 'the Front Doorbell with its camera');
    expect(doorbell.services.find((s) => s.primary)?.type).toBe(characteristicType(S.Doorbell.UUID));
    for (const type of [S.MotionSensor.UUID, S.CameraRTPStreamManagement.UUID]) expect(doorbell.services.some((s) => s.type === characteristicType(type))).toBe(true);
  });

  it('"LockCurrentState is UNKNOWN (3) before any event" (the Back Door has no bridge to report its state)', async () => {
    const back = await accessory('Back Door');
    expect((await paired().readOne(characteristicId(back, S.LockMechanism.UUID, C.LockCurrentState.UUID))).value).toBe(3);
  });

  it('start-up status callbacks set the Front Door\'s current and target state (refreshStateOnStart)', async () => {
    const front = await accessory('Front Door');
    await expectValue(characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID), 1, 'LockCurrentState');
    await expectValue(characteristicId(front, S.LockMechanism.UUID, C.LockTargetState.UUID), 1, 'LockTargetState');
  });
});

describe('every row of the mapping table, read through HAP', () => {
  it('operation unlock / lock / onetouchlock and status set LockCurrentState and LockTargetState', async () => {
    const front = await accessory('Front Door');
    const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    const target = characteristicId(front, S.LockMechanism.UUID, C.LockTargetState.UUID);
    await fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await expectValue(current, 0, 'unlock: current');
    await expectValue(target, 0, 'unlock: target');
    await fire('lock', { lockId: 'LOCK-1', by: 'manual' });
    await expectValue(current, 1, 'lock: current');
    await expectValue(target, 1, 'lock: target');
    await fire('unlock', { lockId: 'LOCK-1', by: 'app' });
    await expectValue(current, 0, 'unlock again');
    await fire('onetouchlock', { lockId: 'LOCK-1' });
    await expectValue(current, 1, 'onetouchlock: current');
    await expectValue(target, 1, 'onetouchlock: target');
  });

  it('door closed: CONTACT_DETECTED (0); open and ajar: CONTACT_NOT_DETECTED (1); init/unknown change nothing', async () => {
    const front = await accessory('Front Door');
    const contact = characteristicId(front, S.ContactSensor.UUID, C.ContactSensorState.UUID);
    await fire('door-closed', { lockId: 'LOCK-1' });
    await expectValue(contact, 0, 'closed');
    await fire('door-open', { lockId: 'LOCK-1' });
    await expectValue(contact, 1, 'open');
    await fire('door-closed', { lockId: 'LOCK-1' });
    await expectValue(contact, 0, 'closed again');
    await fire('door-ajar', { lockId: 'LOCK-1' });
    await expectValue(contact, 1, 'ajar');
    await fire('door-init', { lockId: 'LOCK-1' });
    await fire('door-unknown', { lockId: 'LOCK-1' });
    await session.hb?.waitForLog(/Front Door: Door state unknown/);
    expect((await paired().readOne(contact)).value).toBe(1);
  });

  it('lock battery none / 2week / 1week / 2day: BatteryLevel 100 / 15 / 10 / 5, low except for none', async () => {
    // No level is shown before the lock reports one (nothing unknown is shown as known).
    await fire('lock-battery', { lockId: 'LOCK-1', level: '2week' });
    const front = await eventually(async () => {
      const found = await paired().accessory('Front Door');
      characteristicId(found, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Battery');
      return found;
    }, 'the lock BatteryLevel');
    const level = characteristicId(front, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Battery');
    const low = characteristicId(front, S.Battery.UUID, C.StatusLowBattery.UUID, 'Front Door Battery');
    for (const [name, percent, isLow] of [['2week', 15, 1], ['1week', 10, 1], ['2day', 5, 1], ['none', 100, 0]] as const) {
      await fire('lock-battery', { lockId: 'LOCK-1', level: name });
      await expectValue(level, percent, `lock battery ${name}`);
      await expectValue(low, isLow, `lock battery ${name} low`);
    }
  });

  it('keypad battery none / warning / critical: a Battery service for the keypad appears, 100 / 20 / 5', async () => {
    await fire('keypad-battery', { lockId: 'LOCK-1', level: 'warning' });
    const front = await eventually(async () => {
      const found = await paired().accessory('Front Door');
      return found.services.filter((s) => s.type === characteristicType(S.Battery.UUID)).length === 2 ? found : undefined;
    }, 'the keypad Battery service');
    const level = characteristicId(front, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Keypad Battery');
    const low = characteristicId(front, S.Battery.UUID, C.StatusLowBattery.UUID, 'Front Door Keypad Battery');
    await expectValue(level, 20, 'keypad warning');
    await expectValue(low, 1, 'keypad warning low');
    await fire('keypad-battery', { lockId: 'LOCK-1', level: 'critical' });
    await expectValue(level, 5, 'keypad critical');
    await fire('keypad-battery', { lockId: 'LOCK-1', level: 'none' });
    await expectValue(level, 100, 'keypad none');
    await expectValue(low, 0, 'keypad none low');
  });

  it('announced battery_level_* events map like the keypad row, on the matching Battery service', async () => {
    const front = await accessory('Front Door');
    const lockLevel = characteristicId(front, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Battery');
    const keypadLevel = characteristicId(front, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Keypad Battery');
    await fire('battery-level', { lockId: 'LOCK-1', device: 'lock', level: 'warning' });
    await expectValue(lockLevel, 20, 'announced lock warning');
    await fire('battery-level', { lockId: 'LOCK-1', device: 'keypad', level: 'critical' });
    await expectValue(keypadLevel, 5, 'announced keypad critical');
    await fire('battery-level', { lockId: 'LOCK-1', device: 'lock', level: 'none' });
    await expectValue(lockLevel, 100, 'announced lock none');
  });
});

describe('systemstatus offline gives No Response', () => {
  it('while offline every read of the lock fails with -70402; after online it reads again', async () => {
    const front = await accessory('Front Door');
    const ids = front.services.flatMap((s) => s.characteristics.filter((c) => c.perms.includes('pr')).map((c) => `${c.aid}.${c.iid}`));
    await fire('bridge-offline', { lockId: 'LOCK-1' });
    await eventually(async () => {
      const results = await paired().read(ids);
      return [...results.values()].every((r) => r.status === -70402) ? true : undefined;
    }, 'every read failing with -70402');
    await fire('bridge-online', { lockId: 'LOCK-1' });
    await eventually(async () => {
      const results = await paired().read(ids);
      return [...results.values()].every((r) => r.status === undefined) ? true : undefined;
    }, 'reads working again');
  });
});

describe('control from Apple Home', () => {
  it('unlock and lock written by the controller operate the lock, and current state follows', async () => {
    const front = await accessory('Front Door');
    const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    const target = characteristicId(front, S.LockMechanism.UUID, C.LockTargetState.UUID);
    expect(await paired().write(target, 0)).toBe(0);
    await expectValue(current, 0, 'unlocked from the controller');
    expect(sim.lock('LOCK-1')?.lockState).toBe('unlocked');
    expect(await paired().write(target, 1)).toBe(0);
    await expectValue(current, 1, 'locked from the controller');
    expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
    await session.hb?.waitForLog(/Front Door: locked from Apple Home/);
  });

  it('a bridge-offline failure (422) reverts the target and the log says why', async () => {
    const front = await accessory('Front Door');
    const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    const target = characteristicId(front, S.LockMechanism.UUID, C.LockTargetState.UUID);
    sim.setBridge('LOCK-1', 'offline');
    try {
      expect(await paired().write(target, 0)).toBe(0);
      const line = await session.hb?.waitForLog(/Front Door: could not unlock from Apple Home/);
      expect(line).toMatch(/offline \(422\)/);
      await expectValue(target, 1, 'target reverted');
      expect((await paired().readOne(current)).value).toBe(1);
      expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
    } finally {
      sim.setBridge('LOCK-1', 'online');
    }
  });
});

describe('the doorbell', () => {
  let subscription: Subscription | undefined;
  afterAll(async () => {
    await subscription?.close();
  });

  it('a press arrives at the subscribed controller as one ProgrammableSwitchEvent SINGLE_PRESS event', async () => {
    const bell = await accessory('Front Doorbell');
    const press = characteristicId(bell, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    const motion = characteristicId(bell, S.MotionSensor.UUID, C.MotionDetected.UUID);
    subscription = await paired().subscribe([press, motion]);
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-1' });
    await subscription.waitFor((e) => e.id === press && e.value === 0, 'the press');
    // the same press again (a retry the dedupe let through, or the sender's duplicate) rings nothing
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-1' });
    // callbacks are handled in order: once a later one shows, the duplicate has been dealt with
    await fire('video-available', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-1' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(1);
  });

  it('a press signed more than 60 s ago is recorded but rings nothing', async () => {
    const bell = await accessory('Front Doorbell');
    const press = characteristicId(bell, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    const before = subscription?.events.filter((e) => e.id === press).length ?? 0;
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-late', signature: { skewMs: -90_000 } });
    await session.hb?.waitForLog(/Front Doorbell: Doorbell pressed, but it arrived more than 60 seconds late/);
    expect(subscription?.events.filter((e) => e.id === press)).toHaveLength(before);
  });

  it('the snapshot is the bundled placeholder before any motion', async () => {
    const bell = await accessory('Front Doorbell');
    const image = await paired().image(bell.aid, 640, 360);
    expect(image.equals(await readFile(join(REPO_ROOT, 'dist', 'assets', 'placeholder.jpg')))).toBe(true);
  });

  it('motion turns MotionDetected on and, after motionTimeoutSeconds, off; its still becomes the snapshot', async () => {
    const bell = await accessory('Front Doorbell');
    const motion = characteristicId(bell, S.MotionSensor.UUID, C.MotionDetected.UUID);
    const url = `${sim.url}/media/motion/BELL-1/e2e.jpg`;
    // The simulator's still host speaks plain http, so both addresses point there.
    await fire('raw', { doorbellId: 'BELL-1', payload: { EventType: 'doorbell_motion_detected', DoorbellID: 'BELL-1', Url: url, SecureURL: url, Width: 320, Height: 240 } });
    // HAP sends booleans as 1/0 on the wire
    await subscription?.waitFor((e) => e.id === motion && (e.value === true || e.value === 1), 'motion on');
    const on = subscription?.events.findIndex((e) => e.id === motion && (e.value === true || e.value === 1)) ?? -1;
    await subscription?.waitFor((e) => e.id === motion && (e.value === false || e.value === 0) && (subscription?.events.indexOf(e) ?? 0) > on, 'motion off');
    const still = await readFile(join(REPO_ROOT, 'test', 'sim', 'assets', 'motion.jpg'));
    const image = await paired().image(bell.aid, 640, 360);
    expect(image.equals(still)).toBe(true);
  });
});

describe('state survives a Homebridge restart', () => {
  it('after a restart the controller reads the last known state at once, from the cache', async () => {
    const before = await accessory('Front Door');
    const current = characteristicId(before, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    await fire('door-open', { lockId: 'LOCK-1' });
    await expectValue(characteristicId(before, S.ContactSensor.UUID, C.ContactSensorState.UUID), 1, 'door open before restart');
    await expectValue(current, 1, 'locked before restart');
    // no bridge after the restart, so the start-up status request cannot be what restores the state
    sim.setBridge('LOCK-1', 'none');
    await session.restart(homebridge());
    // Homebridge keeps its pairings: the same controller connects again without pairing anew.
    await paired().reconnect();
    const after = await accessory('Front Door');
    expect((await paired().readOne(characteristicId(after, S.LockMechanism.UUID, C.LockCurrentState.UUID))).value).toBe(1);
    expect((await paired().readOne(characteristicId(after, S.ContactSensor.UUID, C.ContactSensorState.UUID))).value).toBe(1);
    expect((await paired().readOne(characteristicId(after, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Keypad Battery'))).value).toBe(5);
    sim.setBridge('LOCK-1', 'online');
  });
});

/** Service and characteristic types in the short form HAP uses on the wire. */
function characteristicType(uuid: string): string {
  return uuid.toUpperCase().slice(0, 8).replace(/^0+/, '');
}
