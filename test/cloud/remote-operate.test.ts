import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { BridgeError, RequestRejectedError, TransientError } from '../../src/cloud/http/errors.js';
import { WebhookRegistrar } from '../../src/cloud/registrations/registrations.js';
import { operateLock } from '../../src/cloud/remote-operate.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import { type CloudFixture, startCloudFixture } from './cloud-fixture.js';

describe('remote operate (PUT /remoteoperate/{lockID}/{action})', () => {
  let fx: CloudFixture;
  beforeEach(async () => {
    fx = await startCloudFixture({ locks: [{ id: 'L1', lockState: 'locked' }], doorbells: [{ id: 'D1' }] });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('unlock and lock change the lock at the service', async () => {
    await operateLock(fx.client, 'L1', 'unlock');
    expect(fx.sim.lock('L1')?.lockState).toBe('unlocked');
    await operateLock(fx.client, 'L1', 'lock');
    expect(fx.sim.lock('L1')?.lockState).toBe('locked');
    expect(fx.sim.stats.byRoute['PUT /api/remoteoperate/:lockID/:operation']).toBe(2);
  });

  it('status makes the service send a status callback (without our custom header) to every listener', async () => {
    const registrar = new WebhookRegistrar({
      client: fx.client,
      storage: fx.storage,
      clientId: fx.sim.account.clientId,
      publicUrl: () => fx.target.url,
      secret: await WebhookSecret.load(fx.storage),
      log: fx.log,
      timers: { set: () => undefined, clear: () => undefined },
    });
    await registrar.reconcile({ locks: ['L1'], doorbells: [], user: false });
    await operateLock(fx.client, 'L1', 'status');
    await fx.sim.idle();
    const callback = fx.target.received.find((cb) => cb.path === '/lock-access/lock/L1');
    expect(JSON.parse(callback?.body ?? '{}')).toMatchObject({ EventType: 'status', Event: 'lock', LockID: 'L1' });
    expect(callback?.headers['x-lock-access-token']).toBeUndefined();
  });

  it.each([
    ['offline', 'offline', 422],
    ['busy', 'busy', 423],
    ['timeout', 'timeout', 408],
    ['none', 'noBridge', 409],
  ] as const)('"errors stay typed": bridge %s gives BridgeError %s (%i)', async (bridge, problem, status) => {
    fx.sim.setBridge('L1', bridge);
    const error: unknown = await operateLock(fx.client, 'L1', 'unlock').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BridgeError);
    expect(error).toMatchObject({ problem, status });
    expect(fx.sim.lock('L1')?.lockState).toBe('locked');
  });

  it('an unknown lock is a rejected request, a 5xx a transient error: never retried here', async () => {
    await expect(operateLock(fx.client, 'NOPE', 'lock')).rejects.toBeInstanceOf(RequestRejectedError);
    fx.sim.faults.failNext(1, 502);
    await expect(operateLock(fx.client, 'L1', 'unlock')).rejects.toBeInstanceOf(TransientError);
    expect(fx.sim.lock('L1')?.lockState).toBe('locked');
  });
});
