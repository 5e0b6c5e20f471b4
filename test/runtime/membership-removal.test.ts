// lock_user_remove on the user webhook, through the real router, device registry, account setup and
// registrar against the simulator: only the account's own user (the id GET /users/me answers)
// loses the lock (it leaves, its webhook is deleted); another person's removal is an event for the
// event log and the people list, and the lock stays.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { EventRouter, type RoutedEvent } from '../../src/callbacks/event-router.js';
import { normalise } from '../../src/callbacks/normalise.js';
import { classifyPayload } from '../../src/callbacks/callback-kinds.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { WebhookRegistrar } from '../../src/cloud/registrations/registrations.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import { AccountSetup } from '../../src/cloud/account-setup.js';
import { systemClock } from '../../src/util/clock.js';
import { type CloudFixture, startCloudFixture } from '../cloud/cloud-fixture.js';
import { memoryRecords } from '../model/memory-records.js';
import { userLockMembership } from '../sim/payloads.js';
import { runtimeConfig } from './config-fixture.js';
import { until as waitUntil } from '../harness/until.js';

const GUEST = 'guest-4711';

const until = (what: string, ok: () => boolean): Promise<void> => waitUntil(ok, what);

describe('lock_user_remove on the user webhook takes the lock away only for the account\'s own user', () => {
  let fx: CloudFixture;
  let registrar: WebhookRegistrar;
  let registry: DeviceRegistry;
  let router: EventRouter;
  let recorded: RoutedEvent[];
  beforeEach(async () => {
    fx = await startCloudFixture({ locks: [{ id: 'L1', name: 'Front Door' }, { id: 'L2', name: 'Back Door' }] });
    recorded = [];
    registrar = new WebhookRegistrar({ client: fx.client, storage: fx.storage, clientId: fx.sim.account.clientId, publicUrl: () => fx.target.url, secret: await WebhookSecret.load(fx.storage), log: fx.log });
    registry = new DeviceRegistry({ log: fx.log, clock: systemClock, records: memoryRecords(), operate: () => Promise.resolve(), describeCommandFailure });
    const setup = new AccountSetup({
      config: runtimeConfig({ discoverDevices: true, userWebhook: true, refreshStateOnStart: false }),
      log: fx.log,
      client: fx.client,
      registry,
      status: { registrations: () => undefined, knownFrom: () => undefined },
      isIdle: () => false,
      isStopped: () => false,
      registrar: () => registrar,
      listening: () => false,
      selfCheck: () => Promise.resolve(),
    });
    // Followed as the watchers stage follows the router.
    router = new EventRouter(registry, fx.log);
    router.routed.follow((routed) => recorded.push(routed));
    router.accountChanged.follow((change) => {
      if (change.kind === 'membership') setup.membershipChanged(change.lockId, change.change, change.userId);
    });
    setup.request();
    await until('the registrations', () => fx.sim.registrations().length === 3);
  });
  afterEach(async () => {
    registrar.stop();
    registry.disposeAll();
    await fx.close();
  });

  /** The callbacks the service sent to the user webhook since `from`, through the plugin's own parsing, to the router. */
  function deliverUserCallbacks(from: number): void {
    for (const callback of fx.target.received.slice(from).filter((cb) => cb.path.endsWith('/user'))) {
      const classified = classifyPayload(JSON.parse(callback.body));
      if (!classified.ok || classified.payload === undefined) throw new Error('the simulator sent a callback the plugin does not read');
      router.route(normalise(classified.payload, 'user'), { receivedAt: Date.now(), signedAt: Date.now() });
    }
  }

  const lockHooks = () => fx.sim.registrations().filter((reg) => reg.kind === 'lock').map((reg) => reg.scope).sort();

  it('another person removed from a lock: an event with their id for the event log and the people list; the lock and its webhook stay', async () => {
    const from = fx.target.received.length;
    await fx.sim.send(userLockMembership({ userId: GUEST, lockId: 'L1', event: 'lock_user_remove' }), { user: true });
    await fx.sim.idle();
    deliverUserCallbacks(from);
    const removal = recorded.find((routed) => routed.event.kind === 'membership');
    expect(removal).toMatchObject({ deviceKind: 'lock', deviceId: 'L1', event: { change: 'removed', user: { userId: GUEST } } });
    // Give a wrong removal every chance to happen.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await registrar.reconcile({ locks: registry.lockIds(), doorbells: [], user: true });
    expect(registry.lock('L1')).toBeDefined();
    expect(lockHooks()).toEqual(['L1', 'L2']);
    expect(fx.sim.stats.byRoute['DELETE /api/webhook/:lockID/:clientID']).toBeUndefined();
  });

  it('the account\'s own user removed from a lock: the lock leaves at once and its webhook is deleted', async () => {
    const from = fx.target.received.length;
    await fx.sim.fire('lock-user-remove', { subject: 'me', lockId: 'L1' });
    await fx.sim.idle();
    deliverUserCallbacks(from);
    await until('the lock to leave', () => registry.lock('L1') === undefined);
    await until('its webhook to be deleted', () => lockHooks().join() === 'L2');
    expect(registry.lock('L2')).toBeDefined();
  });
});
