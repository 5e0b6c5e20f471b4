// Design "Reach": registrations follow the tunnel's address. A real registrar against the service
// simulator, a scripted tunnel (the real one needs the internet): nothing is registered before the
// tunnel connects, everything at once when it does, and a restart at a new address (ngrok without
// a domain) re-registers everything there. The callbacks then reach the listener through it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { WebhookRegistrar } from '../../../src/cloud/registrations/registrations.js';
import { WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import type { WebhookConfig } from '../../../src/config.js';
import type { PublicAddressStatus } from '../../../src/status/status.js';
import { loopbackFor, type SessionEvents } from '../../../src/cloud/tunnel/tunnel-adapter.js';
import { Reach } from '../../../src/cloud/tunnel/reach.js';
import { type CloudFixture, startCloudFixture } from '../cloud-fixture.js';
import { ScriptedAdapter, type Scripted } from './scripted-adapter.js';
import { until } from '../../harness/until.js';

const WANTED = { locks: ['LOCK-1'], doorbells: ['BELL-1'], user: true };
const AUTHTOKEN = '2abcDEFghiJKLmnoPQRstuVWX_1234567890abcdefghij';

describe('design "Reach": the registrations follow the tunnel', () => {
  let fx: CloudFixture;
  beforeEach(async () => {
    fx = await startCloudFixture({ locks: [{ id: 'LOCK-1', name: 'Front' }], doorbells: [{ id: 'BELL-1', name: 'Bell' }] });
  });
  afterEach(async () => {
    await fx.close();
  });

  /** One plugin start: its registrar and its Reach with a scripted tunnel, wired as the runtime wires them. */
  async function start(script: Scripted[], wayInLost?: () => void) {
    const webhook: WebhookConfig = { listenHost: '0.0.0.0', listenPort: 8582, toleranceSeconds: 300, deliveryCheckMinutes: 360, deliverySensor: true, tunnel: { provider: 'ngrok', authtoken: AUTHTOKEN } };
    const published: PublicAddressStatus[] = [];
    const adapter = new ScriptedAdapter(script);
    const wired: { registrar?: WebhookRegistrar; run?: Promise<unknown> } = {};
    /** The SDK's session events (dropped, back), as the real adapter reports them. */
    const session: { events?: SessionEvents } = {};
    const reach = new Reach({
      webhook,
      log: fx.log,
      publish: (address) => published.push(address),
      adapter: (_tunnel, events) => {
        session.events = events;
        return adapter;
      },
    });
    reach.newAddress.follow(() => {
      wired.run = wired.registrar?.addressChanged();
    });
    if (wayInLost !== undefined) reach.wayInLost.follow(wayInLost);
    const registrar = new WebhookRegistrar({ client: fx.client, storage: fx.storage, clientId: fx.sim.account.clientId, publicUrl: () => reach.publicUrl, secret: await WebhookSecret.load(fx.storage), log: fx.log });
    wired.registrar = registrar;
    /** Waits for the run the address started (its ledger writes), then stops the tunnel. */
    const stop = async () => {
      await wired.run;
      await reach.stop();
      registrar.stop();
    };
    return { reach, registrar, adapter, published, session, stop };
  }

  const atService = () => fx.sim.registrations().map((r) => r.url).sort();
  const origin = () => new URL(fx.target.url).origin;
  const port = () => Number(new URL(fx.target.url).port);

  it('before the tunnel connects nothing is registered; when it does, every registration goes to its address at once, and callbacks arrive through it', async () => {
    const plugin = await start([{ fail: 'network', detail: 'failed to connect session' }, { origin: origin() }]);
    expect(plugin.reach.publicUrl).toBeUndefined();
    expect((await plugin.registrar.reconcile(WANTED)).skipped).toBe(true);
    expect(fx.sim.registrations()).toEqual([]);
    plugin.reach.listenerReady(port(), false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(fx.sim.registrations()).toEqual([]);
    expect(plugin.published.at(-1)).toMatchObject({ via: 'ngrok', tunnel: { state: 'failed' } });
    expect(plugin.published.at(-1)?.url).toBeUndefined();
    expect(fx.log.text('error').join('\n')).toMatch(/ngrok cannot be reached/);
    await plugin.stop();

    // The next try (here: the next start) connects: the address is adopted and registered at once.
    const again = await start([{ origin: origin() }]);
    await again.registrar.reconcile(WANTED);
    again.reach.listenerReady(port(), false);
    await waitFor(() => fx.sim.registrations().length === 3);
    expect(atService()).toEqual([`${origin()}/doorbell/BELL-1`, `${origin()}/lock/LOCK-1`, `${origin()}/user`]);
    expect(again.published.at(-1)).toMatchObject({ via: 'ngrok', url: origin(), tunnel: { state: 'connected' } });
    // The service's callbacks reach the listener through the adopted address.
    await fx.sim.fire('lock', { lockId: 'LOCK-1' });
    await fx.sim.idle();
    expect(fx.target.received.some((cb) => cb.path === '/lock/LOCK-1')).toBe(true);
    await again.stop();
    expect(again.adapter.calls).toEqual(['open', 'close']);
    expect(again.published.at(-1)?.tunnel?.state).toBe('closed');
  });

  it('a tunnel that fails tells the delivery check once per failure, not at every retry', async () => {
    let lost = 0;
    const plugin = await start([{ fail: 'network', detail: 'failed to connect session' }], () => {
      lost += 1;
    });
    plugin.reach.listenerReady(port(), false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(plugin.published.at(-1)).toMatchObject({ tunnel: { state: 'failed' } });
    expect(lost).toBe(1);
    await plugin.stop();
    const connected = await start([{ origin: origin() }], () => {
      lost += 1;
    });
    connected.reach.listenerReady(port(), false);
    await waitFor(() => connected.published.at(-1)?.tunnel?.state === 'connected');
    expect(lost).toBe(1);
    await connected.stop();
  });

  it('the ngrok SDK missing on this platform is a broken way in from the first try, and the delivery check hears of it', async () => {
    let lost = 0;
    const plugin = await start([{ fail: 'sdkMissing', detail: "Cannot find package '@ngrok/ngrok'" }], () => {
      lost += 1;
    });
    plugin.reach.listenerReady(port(), false);
    await waitFor(() => plugin.published.at(-1)?.tunnel?.state === 'failed');
    expect(plugin.reach.brokenWayIn).toMatchObject({ code: 'tunnel.failed.sdkMissing', text: expect.stringMatching(/ngrok/) as unknown });
    expect(lost).toBe(1);
    await plugin.stop();
  });

  it('a failed tunnel is a broken way in (with its reason); one that drops and reconnects tells the delivery check at once', async () => {
    let lost = 0;
    const failed = await start([{ fail: 'network', detail: 'failed to connect session' }], () => {
      lost += 1;
    });
    failed.reach.listenerReady(port(), false);
    await waitFor(() => failed.published.at(-1)?.tunnel?.state === 'failed');
    expect(failed.reach.brokenWayIn).toMatchObject({ code: 'tunnel.failed.network', params: {}, text: expect.stringMatching(/ngrok cannot be reached/) as unknown });
    await failed.stop();
    lost = 0;
    const plugin = await start([{ origin: origin() }], () => {
      lost += 1;
    });
    plugin.reach.listenerReady(port(), false);
    await waitFor(() => plugin.published.at(-1)?.tunnel?.state === 'connected');
    expect(plugin.reach.brokenWayIn).toBeUndefined();
    expect(lost).toBe(0);
    plugin.session.events?.('lost', undefined);
    expect(plugin.published.at(-1)?.tunnel?.state).toBe('reconnecting');
    expect(lost).toBe(1);
    // Reconnecting may come back: not broken, but checked.
    expect(plugin.reach.brokenWayIn).toBeUndefined();
    await plugin.stop();
  });

  it('a restart without a domain gets a new address, and every registration follows it in that start', async () => {
    const first = await start([{ origin: origin() }]);
    first.reach.listenerReady(port(), false);
    await first.registrar.reconcile(WANTED);
    await waitFor(() => fx.sim.registrations().length === 3);
    await first.stop();

    const moved = origin().replace('127.0.0.1', 'localhost');
    const second = await start([{ origin: moved }]);
    second.reach.listenerReady(port(), false);
    await second.registrar.reconcile(WANTED);
    await waitFor(() => atService().every((url) => url.startsWith(moved)));
    expect(atService()).toEqual([`${moved}/doorbell/BELL-1`, `${moved}/lock/LOCK-1`, `${moved}/user`]);
    expect(second.registrar.status().every((row) => row.state === 'registered' && row.url.startsWith(moved))).toBe(true);
    await second.stop();
  });

  it('the authtoken is in nothing the status file gets', async () => {
    const plugin = await start([{ fail: 'authtoken', detail: 'ERR_NGROK_107' }]);
    plugin.reach.listenerReady(8582, false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(JSON.stringify(plugin.published)).not.toContain(AUTHTOKEN);
    expect(fx.log.lines.some((line) => line.message.includes(AUTHTOKEN))).toBe(false);
    await plugin.stop();
  });

  it('a listener that did not start: no tunnel is opened, and the status says why', async () => {
    const plugin = await start([{ origin: origin() }]);
    plugin.reach.listenerFailed();
    expect(plugin.adapter.calls).toEqual([]);
    expect(plugin.published.at(-1)).toMatchObject({ via: 'ngrok', tunnel: { state: 'failed', message: { code: 'tunnel.noListener', text: expect.stringMatching(/listener did not start/) as unknown } } });
    await plugin.stop();
  });

  it('the tunnel reaches a listener bound to every address through this machine\'s loopback', () => {
    expect(loopbackFor('0.0.0.0')).toBe('127.0.0.1');
    expect(loopbackFor('::')).toBe('[::1]');
    expect(loopbackFor('192.168.1.20')).toBe('192.168.1.20');
    expect(loopbackFor('fe80::1')).toBe('[fe80::1]');
  });
});

const waitFor = (condition: () => boolean): Promise<void> => until(condition, String(condition));
