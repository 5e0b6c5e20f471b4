// A tunnel that connects late and later drops, end to end: the built plugin in a real Homebridge
// whose ngrok SDK is a stand-in (test/harness/fake-ngrok/) that connects 4 s after the start and
// reports its session lost 8 s later. refreshStateOnStart asks the locks for their state only once
// their webhooks are registered at the tunnel's address, so both show the service's state in
// HomeKit, not "Unknown" until their next event (the delivery check's own status request, run when
// the address arrives, answers for the first lock only). The drop ("reconnecting") starts a
// delivery check at once, not after the 6-hour check period.
import { fileURLToPath } from 'node:url';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, it } from 'vitest';

import { E2eSession } from '../harness/e2e-session.js';
import { characteristicId } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;
const FAKE_NGROK = fileURLToPath(new URL('../harness/fake-ngrok/register.mjs', import.meta.url));
const TUNNEL_DELAY_MS = 4_000;
const DROP_AFTER_MS = 8_000;
const statusRequests = () => sim.stats.byRoute['PUT /api/remoteoperate/:lockID/:operation'] ?? 0;

let sim: Simulator;
let listenPort: number;
const session = new E2eSession();
const { eventually, paired } = session;

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', lockState: 'locked' },
      { id: 'LOCK-2', name: 'Back Door', lockState: 'unlocked' },
    ],
  });
  listenPort = await freePort();
  const config = simPlatformConfig(sim, listenPort, {
    webhook: { listenHost: '127.0.0.1', listenPort, deliveryCheckMinutes: 360, tunnel: { provider: 'ngrok', authtoken: '2madeUpAuthtoken_0123456789abcdefghijklmnopqrstu' } },
    locks: [{ id: 'LOCK-1', name: 'Front Door' }, { id: 'LOCK-2', name: 'Back Door' }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: true,
  });
  await session.start({ platforms: [config], nodeArgs: ['--import', FAKE_NGROK], env: { FAKE_NGROK_DELAY_MS: String(TUNNEL_DELAY_MS), FAKE_NGROK_DROP_AFTER_MS: String(DROP_AFTER_MS) } });
  await session.pair(3, 'the bridge and both locks');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('refreshStateOnStart waits for the first registrations at the tunnel\'s address', () => {
  it('no lock is asked for its state before the tunnel connects; afterwards every lock is, and HomeKit shows each one\'s state', async () => {
    await eventually(() => Promise.resolve(sim.registrations().length === 2 ? true : undefined), 'both locks registered at the tunnel\'s address');
    await eventually(() => Promise.resolve(statusRequests() >= 2 ? true : undefined), 'both locks asked for their state');
    const front = await eventually(() => paired().accessory('Front Door'), 'the front door in HomeKit');
    const back = await eventually(() => paired().accessory('Back Door'), 'the back door in HomeKit');
    const frontState = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    const backState = characteristicId(back, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    await eventually(async () => ((await paired().readOne(frontState)).value === C.LockCurrentState.SECURED ? true : undefined), 'the front door shown locked');
    await eventually(async () => ((await paired().readOne(backState)).value === C.LockCurrentState.UNSECURED ? true : undefined), 'the back door shown unlocked');
  });

  it('a tunnel that drops and reconnects starts a delivery check at once', async () => {
    const before = statusRequests();
    await session.hb?.waitForLog(/tunnel lost its connection to ngrok; it reconnects on its own/, 30_000);
    await eventually(() => Promise.resolve(statusRequests() > before ? true : undefined), 'a status request of the delivery check after the drop');
  });
});
