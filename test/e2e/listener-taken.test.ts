// A webhook listener that cannot start, end to end: the built plugin in a real Homebridge whose
// webhook.listenPort is already taken. Nothing can arrive, so the delivery watch says "not
// arriving" from the start (the status file, "Lock Access Events Stopped" open in HomeKit) instead
// of "unknown" for the whole check period; Homebridge keeps running.
import { createServer, type Server } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession } from '../harness/e2e-session.js';
import { characteristicId } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let taken: Server;
const session = new E2eSession();
const { eventually, paired } = session;

async function deliveryState(): Promise<{ state?: string; lastCheck?: { message?: { code: string; params: Record<string, unknown>; text: string } } } | undefined> {
  try {
    const status = JSON.parse(await readFile(join(session.hb?.storagePath ?? '', 'lock-access', 'status.json'), 'utf8')) as { delivery?: { state?: string } };
    return status.delivery;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }] });
  const listenPort = await freePort();
  // Whatever calls it (the plugin's self-check) is hung up on: the port is only held.
  taken = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => taken.listen(listenPort, '127.0.0.1', resolve));
  const config = simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1', name: 'Front Door' }], discoverDevices: false, userWebhook: false });
  await session.start({ platforms: [config], readyLog: /The webhook listener could not start/ });
  await session.pair(3, 'the bridge, the lock and "Lock Access"');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
  await new Promise((resolve) => taken.close(resolve));
});

describe('a webhook listener that cannot start: events are "not arriving" from the start', () => {
  it('the log says why the listener did not start, and Homebridge keeps running', () => {
    expect(session.hb?.logs.join('\n')).toMatch(/The webhook listener could not start on 127\.0\.0\.1:\d+ \(.*\)\. Choose a free webhook\.listenPort/);
    expect(session.hb?.running).toBe(true);
  });

  it('the status file says "not arriving" with the reason, and "Lock Access Events Stopped" is open', async () => {
    const delivery = await eventually(async () => {
      const record = await deliveryState();
      return record?.state === 'notArriving' ? record : undefined;
    }, 'delivery "not arriving" in status.json');
    expect(delivery.lastCheck?.message).toMatchObject({ code: 'deliveryCheck.cannotArrive', params: { reason: { code: 'deliveryCheck.noListener' } }, text: expect.stringMatching(/webhook listener did not start/) as unknown });
    const lockAccess = await eventually(() => paired().accessory('Lock Access'), 'the "Lock Access" accessory');
    const sensor = characteristicId(lockAccess, S.ContactSensor.UUID, C.ContactSensorState.UUID, 'Lock Access Events Stopped');
    expect((await paired().readOne(sensor)).value).toBe(1);
  });
});
