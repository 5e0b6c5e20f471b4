// The delivery watch as the plugin wires it: its self-check says plainly when there is no public
// address yet (a tunnel that has not connected) instead of checking an empty address.
import { describe, expect, it } from 'vitest';

import type { ApiClient } from '../../src/cloud/http/api.js';
import { emptyReport } from '../../src/cloud/registrations/registration-report.js';
import { checkConfig } from '../../src/config.js';
import { startDelivery } from '../../src/runtime/delivery.js';
import type { SelfCheckWatch } from '../../src/status/self-check-watch.js';
import type { StatusPublisher } from '../../src/status/status-publisher.js';
import { emptyStatus, type StatusPatch } from '../../src/status/status.js';
import { captureLog, hapEnvs } from '../homekit/hap-env.js';

const raw = {
  platform: 'LockAccess', apiKey: 'key', clientId: 'client', clientSecret: 'secret',
  baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com',
  webhook: { tunnel: { authtoken: 'made-up-authtoken-0123456789' }, deliveryCheckMinutes: 60, deliverySensor: false },
};

function wire(publicUrl: string | undefined) {
  const check = checkConfig(raw);
  if (!check.ok) throw new Error('the test config should be valid');
  const patches: StatusPatch[] = [];
  let selfChecks = 0;
  const delivery = startDelivery({
    api: hapEnvs[0]?.api ?? (undefined as never),
    log: captureLog().log,
    config: check.config,
    pluginName: 'homebridge-lock-access',
    platformName: 'LockAccess',
    cached: undefined,
    client: {} as ApiClient,
    // A doorbell-only account: the check re-registers and self-checks instead of asking a lock.
    locks: () => [],
    nameOf: (_kind, id) => id,
    registrar: () => ({ sendAllAgain: () => Promise.resolve(emptyReport(false)), status: () => [] }),
    linked: () => true,
    listening: () => true,
    publicUrl: () => publicUrl,
    selfCheckWatch: () => ({
      runNow: () => {
        selfChecks += 1;
        return Promise.resolve();
      },
      last: { at: 0, ok: true, url: `${publicUrl ?? ''}/health`, message: 'The public address reaches this plugin.' },
    }) as unknown as SelfCheckWatch,
    eventsMayBeMissed: () => undefined,
    publisher: { update: (patch: StatusPatch) => patches.push(patch), registrations: () => undefined } as unknown as StatusPublisher,
    status: emptyStatus(0),
  });
  const lastMessage = () => patches.map((patch) => patch.delivery?.lastCheck?.message).filter((m) => m !== undefined).at(-1) ?? '';
  return { delivery, lastMessage, selfChecks: () => selfChecks };
}

describe('the delivery wiring', () => {
  it('before a tunnel connects, the self-check says there is no public address and checks nothing', async () => {
    const { delivery, lastMessage, selfChecks } = wire(undefined);
    await delivery.checkNow();
    delivery.stop();
    expect(selfChecks()).toBe(0);
    expect(lastMessage()).toMatch(/tunnel has not connected, so there is no public address/);
  });

  it('with a public address, the self-check runs and its result is in the record', async () => {
    const { delivery, lastMessage, selfChecks } = wire('https://name.ngrok-free.app');
    await delivery.checkNow();
    delivery.stop();
    expect(selfChecks()).toBe(1);
    expect(lastMessage()).toMatch(/self-check passes/);
  });
});
