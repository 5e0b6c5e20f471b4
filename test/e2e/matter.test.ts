// What Google Home, Alexa and other Matter apps see: the built plugin in a real Homebridge 2 with
// Matter on (loopback), against the simulator, checked through a real Matter controller in this
// process (matter.js), commissioned with the QR payload the settings UI shows.
// One Homebridge for the whole file; vitest.config.ts runs it in a forked worker of its own. Its
// restart is an upgrade: the config gains an extra account ("Cabin", which shares Front Door and
// has a lock of its own), and the main account's endpoints must stay as the controller knew them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readMatterPairing } from '../../src/settings-ui/matter-pairing.js';
import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort, type RunningHomebridge } from '../harness/homebridge.js';
import { MatterTestController, pairingFromQr, type MatterEndpointView } from '../harness/matter.js';
import { startSimulator, type FireOptions, type Simulator } from '../sim/index.js';
import { simAccountEntry, simPlatformConfig } from '../sim/plugin-config.js';

/** Matter device type ids (Matter Device Library). */
const DEVICE = { DoorLock: 10, ContactSensor: 21, GenericSwitch: 15, OccupancySensor: 263, PowerSource: 17 } as const;
/** A lock id of 32 characters (as real ones are) with a name longer than Matter allows. */
const LONG_ID = '0123456789ABCDEF0123456789ABCDEF';
const LONG_NAME = 'The Very Long Garden Gate Lock Name';

let sim: Simulator;
const session = new E2eSession();
let controller: MatterTestController | undefined;
let controllerStorage: string;
let listenPort: number;
let matterPort: number;

/** The plugin's block; `withCabin`: the extra account added (the upgrade of the restart case). */
function platformConfig(withCabin = false): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, {
    ...(withCabin ? { accounts: [simAccountEntry(sim, 'cabin', { locks: [{ id: 'CABIN-1', name: 'Cabin Door' }, { id: 'LOCK-1' }] })] } : {}),
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true },
      { id: 'LOCK-2', name: 'Back Door' },
      { id: LONG_ID, name: LONG_NAME, doorSensor: true },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 1 }],
    discoverDevices: false,
    // The user hook carries lock_user_remove, which takes a lock (and its endpoints) away at run time.
    userWebhook: true,
    refreshStateOnStart: true,
  });
}

/** Starts Homebridge (again with the same identity after the first time) and waits for its Matter endpoints. */
async function start(withCabin = false): Promise<RunningHomebridge> {
  const hb = await session.start({
    platforms: [platformConfig(withCabin)],
    // Matter needs an interface name to bind to; 127.0.0.1 makes its server fail to start.
    bridge: { bind: ['lo'], matter: { port: matterPort } },
    listenerTimeoutMs: 60_000,
  });
  await hb.waitForLog(/Matter: \d+ endpoints? ready/, 60_000);
  return hb;
}

function matter(): MatterTestController {
  if (!controller) throw new Error('not commissioned');
  return controller;
}

function endpoint(label: string): MatterEndpointView {
  const found = matter().endpoint(label);
  if (!found) throw new Error(`no endpoint "${label}"; the controller sees ${matter().endpoints().map((e) => e.label).join(', ')}`);
  return found;
}

/** Polls the controller's subscribed copy until the attribute shows `expected`. */
async function expectAttribute(label: string, cluster: string, attribute: string, expected: unknown, what: string): Promise<void> {
  await matter().waitFor(() => JSON.stringify(matter().endpoint(label)?.state(cluster)?.[attribute]) === JSON.stringify(expected), `${what}: ${label} ${cluster}.${attribute} = ${JSON.stringify(expected)}`);
}

const fire = (name: string, options: FireOptions = {}) => fireAccepted(sim, name, options);

beforeAll(async () => {
  sim = await startSimulator({
    accounts: [{ id: 'cabin', name: 'Cabin' }],
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true, lockState: 'locked', accounts: ['main', 'cabin'] },
      { id: 'CABIN-1', name: 'Cabin Door', bridge: 'none', accounts: ['cabin'] },
      { id: 'LOCK-2', name: 'Back Door', bridge: 'none' },
      { id: LONG_ID, name: LONG_NAME, bridge: 'none' },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  listenPort = await freePort();
  matterPort = await freePort();
  controllerStorage = await mkdtemp(join(tmpdir(), 'lock-access-matter-ctl-'));
  const running = await start();
  // The settings UI's reader gives the QR payload Homebridge made; pair with exactly that.
  const pairing = await readMatterPairing({ storagePath: running.storagePath, configPath: join(running.storagePath, 'config.json') });
  expect(pairing.active).toBe(true);
  expect(pairing.manualPairingCode).toMatch(/^\d{4}-\d{3}-\d{4}$/);
  controller = await MatterTestController.start(controllerStorage);
  await controller.commission(matterPort, pairingFromQr(pairing.qrCode ?? ''));
}, 180_000);

afterAll(async () => {
  await controller?.close();
  await session.close();
  await sim.close();
  await rm(controllerStorage, { recursive: true, force: true });
}, 60_000);

describe('the endpoints a Matter controller sees', () => {
  it('a DoorLock with a PowerSource per lock, a ContactSensor per door sensor, a GenericSwitch and an OccupancySensor per doorbell', () => {
    const labels = matter().endpoints().map((e) => e.label);
    expect(labels).toEqual(expect.arrayContaining(['Front Door', 'Front Door Door', 'Back Door', 'Front Doorbell', 'Front Doorbell Motion']));
    expect(labels).toHaveLength(7);
    expect(endpoint('Front Door').deviceTypes).toEqual(expect.arrayContaining([DEVICE.DoorLock, DEVICE.PowerSource]));
    expect(endpoint('Front Door Door').deviceTypes).toContain(DEVICE.ContactSensor);
    expect(endpoint('Back Door').deviceTypes).toContain(DEVICE.DoorLock);
    expect(endpoint('Front Doorbell').deviceTypes).toContain(DEVICE.GenericSwitch);
    expect(endpoint('Front Doorbell Motion').deviceTypes).toContain(DEVICE.OccupancySensor);
  });

  it('"names <= 32 characters" and serials <= 32 characters that differ between a device\'s endpoints', () => {
    const long = matter().endpoints().filter((e) => e.label?.startsWith('The Very Long'));
    expect(long.map((e) => e.label)).toEqual(expect.arrayContaining([LONG_NAME.slice(0, 32).trimEnd()]));
    expect(long).toHaveLength(2);
    for (const e of matter().endpoints()) {
      expect(e.label?.length).toBeLessThanOrEqual(32);
      expect(e.serial?.length).toBeLessThanOrEqual(32);
    }
    const serials = matter().endpoints().map((e) => e.serial);
    expect(new Set(serials).size).toBe(serials.length);
    expect(endpoint('Front Door').serial).toBe('LOCK-1');
    expect(endpoint('Front Door Door').serial).toBe('LOCK-1-door');
  });

  it('lockState follows the start-up status (Locked 1); a lock nobody has reported on reads null', async () => {
    await expectAttribute('Front Door', 'doorLock', 'lockState', 1, 'start-up status');
    expect(endpoint('Back Door').state('doorLock')?.lockState).toBeNull();
  });

  it('a door sensor without a real position yet claims none: unreachable', () => {
    expect(endpoint('Front Door Door').reachable).toBe(false);
    expect(endpoint('Front Door').reachable).toBe(true);
  });
});

describe('attribute reports for changes pushed by callbacks', () => {
  it('unlock and lock events report lockState Unlocked (2) and Locked (1)', async () => {
    const lock = endpoint('Front Door').number;
    let since = performance.now();
    await fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await matter().waitForAttribute((r) => r.endpoint === lock && r.attribute === 'lockState' && r.value === 2, since, 'lockState 2');
    since = performance.now();
    await fire('lock', { lockId: 'LOCK-1', by: 'manual' });
    await matter().waitForAttribute((r) => r.endpoint === lock && r.attribute === 'lockState' && r.value === 1, since, 'lockState 1');
  });

  it('door open, closed and ajar report BooleanState stateValue false / true / false, and the sensor becomes reachable', async () => {
    const door = endpoint('Front Door Door').number;
    let since = performance.now();
    await fire('door-closed', { lockId: 'LOCK-1' });
    await matter().waitForAttribute((r) => r.endpoint === door && r.attribute === 'stateValue' && r.value === true, since, 'closed');
    await expectAttribute('Front Door Door', 'bridgedDeviceBasicInformation', 'reachable', true, 'first real door state');
    since = performance.now();
    await fire('door-open', { lockId: 'LOCK-1' });
    await matter().waitForAttribute((r) => r.endpoint === door && r.attribute === 'stateValue' && r.value === false, since, 'open');
    await fire('door-closed', { lockId: 'LOCK-1' });
    await expectAttribute('Front Door Door', 'booleanState', 'stateValue', true, 'closed again');
    await fire('door-ajar', { lockId: 'LOCK-1' });
    await expectAttribute('Front Door Door', 'booleanState', 'stateValue', false, 'ajar');
  });

  it('lock battery 2week / 2day / none and the announced warning: batChargeLevel reported, batPercentRemaining 2 x HomeKit\'s level', async () => {
    const lock = endpoint('Front Door').number;
    for (const [event, options, charge, percent] of [
      ['lock-battery', { level: '2week' }, 1, 30],
      ['lock-battery', { level: '2day' }, 2, 10],
      ['lock-battery', { level: 'none' }, 0, 200],
      ['battery-level', { device: 'lock', level: 'warning' }, 1, 40],
      ['battery-level', { device: 'lock', level: 'none' }, 0, 200],
    ] as const) {
      const since = performance.now();
      await fire(event, { lockId: 'LOCK-1', ...options });
      await matter().waitForAttribute((r) => r.endpoint === lock && r.attribute === 'batChargeLevel' && r.value === charge, since, `${event} ${JSON.stringify(options)}`);
      // Matter reports batPercentRemaining "quieter" (at most every 10 s): read it instead of waiting.
      expect((await endpoint('Front Door').read('powerSource')).batPercentRemaining).toBe(percent);
    }
  });

  it('the lock\'s bridge offline makes the lock unreachable; online makes it reachable again', async () => {
    await fire('bridge-offline', { lockId: 'LOCK-1' });
    await expectAttribute('Front Door', 'bridgedDeviceBasicInformation', 'reachable', false, 'offline');
    await fire('bridge-online', { lockId: 'LOCK-1' });
    await expectAttribute('Front Door', 'bridgedDeviceBasicInformation', 'reachable', true, 'online');
  });
  it('a rename (lock_name_changed) relabels the lock\'s endpoints', async () => {
    await fire('lock-name-changed', { lockId: 'LOCK-1', name: 'Main Entrance' });
    await matter().waitFor(() => matter().endpoint('Main Entrance Door'), 'the door endpoint relabelled');
    expect(endpoint('Main Entrance').deviceTypes).toContain(DEVICE.DoorLock);
    await fire('lock-name-changed', { lockId: 'LOCK-1', name: 'Front Door' });
    await matter().waitFor(() => matter().endpoint('Front Door Door'), 'the old name back');
  });
});

describe('lock and unlock from a Matter controller', () => {
  it('unlockDoor and lockDoor operate the lock through the service; lockState follows', async () => {
    await expectAttribute('Front Door', 'doorLock', 'lockState', 1, 'locked before');
    await endpoint('Front Door').invoke('doorLock', 'unlockDoor');
    expect(sim.lock('LOCK-1')?.lockState).toBe('unlocked');
    await expectAttribute('Front Door', 'doorLock', 'lockState', 2, 'unlocked from Matter');
    await endpoint('Front Door').invoke('doorLock', 'lockDoor');
    expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
    await expectAttribute('Front Door', 'doorLock', 'lockState', 1, 'locked from Matter');
    await session.hb?.waitForLog(/Front Door: locked from a Matter controller/);
  });

  it('a bridge-offline failure (422) answers the controller with FAILURE and leaves lockState as it was', async () => {
    sim.setBridge('LOCK-1', 'offline');
    try {
      await expect(endpoint('Front Door').invoke('doorLock', 'unlockDoor')).rejects.toThrow(/Failure|code 1\b/);
      const line = await session.hb?.waitForLog(/Front Door: could not unlock from a Matter controller/);
      expect(line).toMatch(/offline \(422\)/);
      expect(sim.lock('LOCK-1')?.lockState).toBe('locked');
      expect(endpoint('Front Door').state('doorLock')?.lockState).toBe(1);
    } finally {
      sim.setBridge('LOCK-1', 'online');
    }
  });
});

describe('the doorbell', () => {
  it('a press is one initialPress (then shortRelease) at the switch; the same press redelivered, or a late one, is none', async () => {
    const bell = endpoint('Front Doorbell').number;
    const since = performance.now();
    const presses = () => matter().events.filter((e) => e.endpoint === bell && e.at >= since && e.event === 'initialPress');
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-1' });
    await matter().waitFor(() => matter().events.find((e) => e.endpoint === bell && e.at >= since && e.event === 'shortRelease'), 'shortRelease');
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-1' });
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-late', signature: { skewMs: -90_000 } });
    // Rings reach the switch in order: once the next real press shows, the two before it have been dealt with.
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-2' });
    await matter().waitFor(() => presses().length >= 2, 'the next real press');
    expect(presses()).toHaveLength(2);
    expect(presses().map((e) => e.count)).toEqual([1, 1]);
  });

  it('two real presses in a row are two presses, never one double press', async () => {
    const bell = endpoint('Front Doorbell').number;
    const since = performance.now();
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-3' });
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'dvr-matter-4' });
    const presses = await matter().waitFor(() => {
      const found = matter().events.filter((e) => e.endpoint === bell && e.at >= since && e.event === 'initialPress');
      return found.length >= 2 ? found : undefined;
    }, 'two initialPress events');
    expect(presses).toHaveLength(2);
  });

  it('motion makes the OccupancySensor occupied, and clear after motionTimeoutSeconds', async () => {
    const motion = endpoint('Front Doorbell Motion').number;
    const since = performance.now();
    await fire('motion', { doorbellId: 'BELL-1' });
    await matter().waitForAttribute((r) => r.endpoint === motion && r.attribute === 'occupancy' && (r.value as { occupied?: boolean }).occupied === true, since, 'occupied');
    await matter().waitForAttribute((r) => r.endpoint === motion && r.attribute === 'occupancy' && (r.value as { occupied?: boolean }).occupied === false, since, 'clear');
  });
});

describe('restarts and removal', () => {
  it('after a restart that adds an extra account the controller reconnects without commissioning; the main account\'s endpoints keep their numbers, labels and serials, the shared lock stays one endpoint, and commands work', async () => {
    const seen = () => new Map(matter().endpoints().map((e) => [e.label, `${String(e.number)} ${e.serial ?? ''}`]));
    const before = seen();
    await session.hb?.stop();
    await start(true);
    await matter().reconnect();
    await matter().waitFor(() => matter().endpoint('Cabin Door') !== undefined, 'Cabin\'s own lock to appear');
    expect(session.hb?.logs.find((line) => /Matter: \d+ endpoints? ready/.test(line))).toMatch(/Matter: [78] endpoints ready .*\(7 kept from the last run\)/);
    const after = seen();
    expect(after.get('Cabin Door')).toMatch(/^\d+ CABIN-1$/);
    after.delete('Cabin Door');
    expect(after).toEqual(before);
    expect(matter().endpoints().filter((e) => e.serial === 'LOCK-1')).toHaveLength(1);
    await expectAttribute('Front Door', 'doorLock', 'lockState', 1, 'last state after the restart');
    // Handlers are attached again: a command works (a restored endpoint without them answers FAILURE).
    await endpoint('Front Door').invoke('doorLock', 'unlockDoor');
    await expectAttribute('Front Door', 'doorLock', 'lockState', 2, 'unlocked after the restart');
    expect(sim.lock('LOCK-1')?.lockState).toBe('unlocked');
  });

  it('a lock that leaves the account (lock_user_remove on the user hook) loses its endpoint', async () => {
    await fire('lock-user-remove', { lockId: 'LOCK-2', subject: 'me' });
    await session.hb?.waitForLog(/Matter: removed Back Door/);
    await matter().waitFor(() => matter().endpoint('Back Door') === undefined, 'the Back Door endpoint to go');
    expect(matter().endpoint('Front Door')).toBeDefined();
  });
});
