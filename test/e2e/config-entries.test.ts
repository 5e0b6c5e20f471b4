// One bad entry in the config disables that entry alone: the plugin, its listener, the other
// devices and their webhooks run, as a user sees it in a real Homebridge against the simulator.
// A mistake never widens what the user asked for: discovery lists every device here, and still
// brings back none whose entry was refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

let sim: Simulator;
const session = new E2eSession();

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, lockState: 'locked' },
      { id: 'LOCK-2', name: 'Back Door', lockState: 'locked' },
      { id: 'LOCK-3', name: 'Garage Lock', lockState: 'locked' },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Bell' }],
  });
  const listenPort = await freePort();
  await session.start({
    platforms: [simPlatformConfig(sim, listenPort, {
      // A trimmed id, a doorbell with a motion time of 0, a person without a userId, a hidden in
      // quotes, and a door-sensor-only lock with a left-open time below 10 s.
      locks: [{ id: '  LOCK-1 ', name: 'Front Door', doorSensor: true }, { id: 'LOCK-2', hidden: 'true' }, { id: 'LOCK-3', name: 'Garage', doorSensorOnly: true, leftOpenSeconds: 5 }],
      doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 0 }, { id: 'BELL-2', name: 'Side Bell' }],
      people: [{ name: 'Nobody' }],
      discoverDevices: true,
      userWebhook: false,
      refreshStateOnStart: false,
    })],
    registrations: { sim, atLeast: 3 },
  });
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('config: a mistake inside one entry disables that entry alone', () => {
  it('names the entry, the field and the fix in the log', async () => {
    const line = await session.hb?.waitForLog(/Doorbell 1 of doorbells/);
    expect(line).toMatch(/\(id "BELL-1", Front Doorbell\) is left out until you fix it in the plugin settings: motionTimeoutSeconds must be at least 1\. Everything else runs\./);
    expect(await session.hb?.waitForLog(/Person 1 of people/)).toMatch(/userId/);
    expect(await session.hb?.waitForLog(/Lock 2 of locks/)).toMatch(/\(id "LOCK-2"\) stays hidden until you fix it in the plugin settings: hidden must be true or false/);
    expect(await session.hb?.waitForLog(/Lock 3 of locks/)).toMatch(/\(id "LOCK-3", Garage\) shows only its door sensor until you fix it in the plugin settings: leftOpenSeconds/);
    expect(session.hb?.logs.join('\n')).not.toMatch(/is not configured/);
  });

  it('registers the other devices (the trimmed lock id included) and never a refused or hidden one, though discovery lists them', async () => {
    // The summary line comes after every registration of the run.
    await session.hb?.waitForLog(/Webhooks: /);
    const scopes = sim.registrations().map((r) => `${r.kind}:${r.scope}`).sort();
    expect(scopes).toEqual(['doorbell:BELL-2', 'lock:LOCK-1', 'lock:LOCK-3']);
  });

  it('HomeKit shows the devices that run, the refused door-sensor-only lock as its door sensor alone', async () => {
    const controller = await session.pair(5, 'the bridge, three devices and the Lock Access accessory');
    const names = (await controller.accessories()).filter((a) => a.aid !== 1).map((a) => a.name).sort();
    // "Lock Access" carries the events-stopped sensor; no refused device is there.
    expect(names).toEqual(['Front Door', 'Garage', 'Lock Access', 'Side Bell']);
    const garage = await controller.accessory('Garage');
    expect(garage.services.some((s) => s.type === '45')).toBe(false);
    expect(garage.services.some((s) => s.type === '80')).toBe(true);
  });

  it('callbacks for the devices that run are accepted', async () => {
    await fireAccepted(sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await session.hb?.waitForLog(/Front Door: Unlocked/);
  });
});
