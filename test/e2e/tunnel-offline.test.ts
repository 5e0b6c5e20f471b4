// The built-in ngrok tunnel that cannot connect, end to end: the built plugin in a real Homebridge
// with the real @ngrok/ngrok SDK and a made-up authtoken. These machines have no internet, so the
// SDK's forward() fails at once ("failed to connect session"). The plugin says so in one error
// naming ngrok, the cause and the fix; Homebridge stays up, HomeKit is served and a lock command
// still reaches the service; nothing is registered at a made-up address; the status file says
// why; events are "not arriving" from the start (the status file, the "Lock Access Events Stopped"
// sensor open), not unknown for the whole check period; the authtoken is nowhere; and Homebridge
// stops cleanly.
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
const AUTHTOKEN = '2madeUpAuthtoken_0123456789abcdefghijklmnopqrstu';

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;

async function statusFile(): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await readFile(join(session.hb?.storagePath ?? '', 'lock-access', 'status.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'unlocked' }] });
  listenPort = await freePort();
  const config = simPlatformConfig(sim, listenPort, {
    // No publicUrl: the tunnel is the only way in.
    webhook: { listenHost: '127.0.0.1', listenPort, tunnel: { provider: 'ngrok', authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' } },
    locks: [{ id: 'LOCK-1', name: 'Front Door' }],
    discoverDevices: false,
    userWebhook: false,
  });
  await session.start({ platforms: [config] });
  await session.pair(3, 'the bridge, the lock and "Lock Access"');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('design "Reach": an ngrok tunnel that cannot connect fails clearly and harms nothing (real SDK, offline)', () => {
  it('one error names ngrok, the cause and the fix, and never the authtoken', async () => {
    const line = await session.hb?.waitForLog(/The ngrok tunnel could not connect/, 30_000);
    expect(line).toMatch(/ngrok cannot be reached from this machine\..*\(ngrok: failed to connect session/);
    expect(line).toMatch(/Check the Homebridge machine's internet connection/);
    expect(line).toMatch(/tries again on its own/);
    const logs = session.hb?.logs ?? [];
    expect(logs.filter((l) => /ngrok tunnel could not connect/.test(l))).toHaveLength(1);
    expect(logs.join('\n')).not.toContain(AUTHTOKEN);
    expect(logs.join('\n')).toMatch(/reachable as the ngrok tunnel, once it connects/);
  });

  it('Homebridge stays up: HomeKit is served and a lock command still reaches the service', async () => {
    expect(session.hb?.running).toBe(true);
    const lock = await eventually(() => paired().accessory('Front Door'), 'the lock in HomeKit');
    const target = characteristicId(lock, S.LockMechanism.UUID, C.LockTargetState.UUID);
    await paired().write(target, 1);
    await eventually(() => Promise.resolve(sim.lock('LOCK-1')?.lockState === 'locked' ? true : undefined), 'the lock locked at the service');
  });

  it('nothing is registered at a made-up address, and the status file says why (without the authtoken)', async () => {
    const status = await eventually(async () => {
      const file = await statusFile();
      const address = file?.publicAddress as { tunnel?: { state?: string } } | undefined;
      return address?.tunnel?.state === 'failed' ? file : undefined;
    }, 'the failed tunnel in status.json');
    expect(status.publicAddress).toMatchObject({ via: 'ngrok', tunnel: { state: 'failed', message: { code: 'tunnel.failed.network', params: {}, text: expect.stringMatching(/ngrok cannot be reached/) as unknown } } });
    expect((status.publicAddress as { url?: string }).url).toBeUndefined();
    expect(typeof (status.publicAddress as { tunnel: { nextTryAt?: number } }).tunnel.nextTryAt).toBe('number');
    expect(JSON.stringify(status)).not.toContain(AUTHTOKEN);
    // The link and the start-up work are done (the lock was asked for its state), yet no registration.
    await eventually(async () => ((await statusFile())?.link as { state?: string } | undefined)?.state === 'linked' ? true : undefined, 'linked');
    expect(sim.registrations()).toEqual([]);
    // The listener itself runs: a tunnel that connects later has something to forward to.
    const health = await fetch(`http://127.0.0.1:${listenPort}/health`);
    expect(health.status).toBe(200);
  });

  it('a way in that cannot be built is "not arriving" from the start: the status file says so and "Lock Access Events Stopped" is open', async () => {
    const delivery = await eventually(async () => {
      const file = await statusFile();
      const record = file?.delivery as { state?: string; lastCheck?: { message?: { code: string; text: string } } } | undefined;
      return record?.state === 'notArriving' ? record : undefined;
    }, 'delivery "not arriving" in status.json');
    expect(delivery.lastCheck?.message).toMatchObject({ code: 'deliveryCheck.cannotArrive', text: expect.stringMatching(/ngrok/) as unknown });
    const lockAccess = await eventually(() => paired().accessory('Lock Access'), 'the "Lock Access" accessory');
    const sensor = characteristicId(lockAccess, S.ContactSensor.UUID, C.ContactSensorState.UUID, 'Lock Access Events Stopped');
    expect((await paired().readOne(sensor)).value).toBe(1);
  });

  it('Homebridge stops cleanly with the tunnel configured', async () => {
    const ended = await session.hb?.stop();
    expect(ended?.signal === 'SIGKILL').toBe(false);
  });
});
