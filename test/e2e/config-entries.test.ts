// One bad entry in the config disables that entry alone: the plugin, its listener, the other
// devices and their webhooks run, as a user sees it in a real Homebridge against the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

let sim: Simulator;
const session = new E2eSession();

beforeAll(async () => {
  sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, lockState: 'locked' }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Bell' }],
  });
  const listenPort = await freePort();
  await session.start({
    platforms: [simPlatformConfig(sim, listenPort, {
      // A trimmed id, a doorbell with a motion time of 0, and a person without a userId.
      locks: [{ id: '  LOCK-1 ', name: 'Front Door', doorSensor: true }],
      doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 0 }, { id: 'BELL-2', name: 'Side Bell' }],
      people: [{ name: 'Nobody' }],
      discoverDevices: false,
      userWebhook: false,
      refreshStateOnStart: false,
    })],
    registrations: { sim, atLeast: 2 },
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
    expect(session.hb?.logs.join('\n')).not.toMatch(/is not configured/);
  });

  it('registers the other devices (the trimmed lock id included) and never the disabled one', async () => {
    const scopes = await session.eventually(() => {
      const found = sim.registrations().map((r) => `${r.kind}:${r.scope}`).sort();
      return Promise.resolve(found.length >= 2 ? found : undefined);
    }, 'two registrations');
    expect(scopes).toEqual(['doorbell:BELL-2', 'lock:LOCK-1']);
  });

  it('callbacks for the devices that run are accepted', async () => {
    await fireAccepted(sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await session.hb?.waitForLog(/Front Door: Unlocked/);
  });
});
