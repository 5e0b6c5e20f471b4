// A full bridge: HomeKit allows 149 accessories per bridge, counting every plugin on it. The
// devices that do not fit still get their webhooks and their events; the log names them and
// suggests a child bridge, and nothing else stops.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

/** Two more than the bridge holds. */
const COUNT = 151;
const id = (n: number) => `LOCK-${String(n).padStart(3, '0')}`;

let sim: Simulator;
const session = new E2eSession();

beforeAll(async () => {
  const locks = Array.from({ length: COUNT }, (_, i) => ({ id: id(i + 1), name: `Door ${i + 1}`, lockState: 'locked' as const }));
  sim = await startSimulator({ locks });
  const listenPort = await freePort();
  await session.start({
    platforms: [simPlatformConfig(sim, listenPort, {
      locks: locks.map((l) => ({ id: l.id, name: l.name })),
      discoverDevices: false,
      userWebhook: false,
      refreshStateOnStart: false,
    })],
    listenerTimeoutMs: 60_000,
    registrations: { sim, atLeast: COUNT },
  });
}, 180_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('a full bridge never stops registrations or the event log', () => {
  it('names the devices not shown in HomeKit and suggests a child bridge', async () => {
    const line = await session.hb?.waitForLog(/The Homebridge bridge is full/, 60_000);
    expect(line).toMatch(/not shown in HomeKit: Door 150, Door 151\. They still get their webhooks and their events/);
    expect(line).toMatch(/run Lock Access as a child bridge/);
    expect(session.hb?.logs.join('\n')).not.toMatch(/could not finish setting up with the service/);
  });

  it('registers a webhook for every device, the unseen ones included', () => {
    const scopes = new Set(sim.registrations().filter((r) => r.kind === 'lock').map((r) => r.scope));
    expect(scopes.size).toBe(COUNT);
    expect(scopes.has(id(151))).toBe(true);
  });

  it('an unseen device\'s callbacks are accepted and reach the event log', async () => {
    await fireAccepted(sim, 'unlock', { lockId: id(151), by: 'keypad' });
    const storage = session.hb?.storagePath ?? '';
    const logged = await session.eventually(async () => {
      const file = JSON.parse(await readFile(join(storage, 'lock-access', 'events.json'), 'utf8')) as { entries: { deviceId: string }[] };
      return file.entries.some((e) => e.deviceId === id(151)) ? true : undefined;
    }, 'the event in the event log');
    expect(logged).toBe(true);
  });
});
