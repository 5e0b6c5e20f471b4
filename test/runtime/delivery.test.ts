// The delivery watch as the plugin wires it: its self-check says plainly when there is no public
// address yet (a tunnel that has not connected) instead of checking an empty address; a way in that
// failed before the watch existed (the listener, the tunnel) is "not arriving" from the start.
import { describe, expect, it, vi } from 'vitest';

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

function wire(publicUrl: string | undefined, way: { listening?: boolean; brokenWayIn?: () => string | undefined } = {}) {
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
    listening: () => way.listening ?? true,
    publicUrl: () => publicUrl,
    brokenWayIn: way.brokenWayIn ?? (() => undefined),
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
  const lastState = () => patches.map((patch) => patch.delivery?.state).filter((state) => state !== undefined).at(-1);
  return { delivery, lastMessage, lastState, selfChecks: () => selfChecks };
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

  it('a tunnel that failed before the watch started: "not arriving" from the start, with the tunnel\'s reason', () => {
    const { delivery, lastMessage, lastState, selfChecks } = wire(undefined, { brokenWayIn: () => 'ngrok cannot be reached from this machine.' });
    expect(lastState()).toBe('notArriving');
    expect(lastMessage()).toBe('Events cannot arrive: ngrok cannot be reached from this machine.');
    expect(selfChecks()).toBe(0);
    delivery.stop();
  });

  it('a listener that did not start: "not arriving" from the start', () => {
    const { delivery, lastMessage, lastState } = wire('https://home.example.net/lock-access', { listening: false });
    expect(lastState()).toBe('notArriving');
    expect(lastMessage()).toMatch(/^Events cannot arrive: the webhook listener did not start/);
    delivery.stop();
  });

  it('a way in that works at the start is not yet known: "unknown"; one that drops later (reconnecting) is checked at once', async () => {
    const tunnel: { broken?: string } = {};
    const { delivery, lastMessage, lastState, selfChecks } = wire('https://name.ngrok-free.app', { brokenWayIn: () => tunnel.broken });
    expect(lastState()).toBe('unknown');
    delivery.wayInChanged();
    await vi.waitFor(() => {
      expect(lastMessage()).toMatch(/self-check passes/);
    });
    expect(selfChecks()).toBe(1);
    tunnel.broken = 'the ngrok tunnel could not connect.';
    delivery.wayInChanged();
    expect(lastState()).toBe('notArriving');
    delivery.stop();
  });
});
