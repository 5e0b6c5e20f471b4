// The delivery watch as the plugin wires it: its self-check says plainly when there is no public
// address yet (a tunnel that has not connected) instead of checking an empty address.
import { describe, expect, it } from 'vitest';

import { emptyReport } from '../../src/cloud/registrations/registration-report.js';
import { checkConfig } from '../../src/config.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import { watchDelivery } from '../../src/runtime/delivery.js';
import type { Files, Link, PluginContext } from '../../src/runtime/link-stage.js';
import type { Listener } from '../../src/runtime/listener-stage.js';
import { emptyStatus, type StatusPatch } from '../../src/status/status.js';
import { systemClock } from '../../src/util/clock.js';
import { Shutdown } from '../../src/util/shutdown.js';
import { Signal } from '../../src/util/signal.js';
import { captureLog } from '../homekit/hap-env.js';
import { memoryRecords } from '../model/memory-records.js';

const raw = {
  platform: 'LockAccess', apiKey: 'key', clientId: 'client', clientSecret: 'secret',
  baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com',
  webhook: { tunnel: { authtoken: 'made-up-authtoken-0123456789' }, deliveryCheckMinutes: 60, deliverySensor: false },
};

/** The records of the earlier stages, with only what the delivery watch reads of them. */
function wire(publicUrl: string | undefined) {
  const check = checkConfig(raw);
  if (!check.ok) throw new Error('the test config should be valid');
  const { log } = captureLog();
  const shutdown = new Shutdown();
  const patches: StatusPatch[] = [];
  let selfChecks = 0;
  const context = { config: check.config, log, shutdown } as unknown as PluginContext;
  const files = { status: { status: emptyStatus(0) } } as unknown as Files;
  const link = {
    tokens: { state: 'linked' },
    control: { idle: false, registrar: { sendAllAgain: () => Promise.resolve(emptyReport(false)), status: () => [] } },
    address: { publicUrl },
    publisher: { update: (patch: StatusPatch) => patches.push(patch), registrations: () => undefined },
  } as unknown as Link;
  // A doorbell-only account: the check re-registers and self-checks instead of asking a lock.
  const registry = new DeviceRegistry({ log, clock: systemClock, records: memoryRecords(), operate: () => Promise.resolve(), describeCommandFailure });
  const listener = { registry, receiver: {}, heard: new Signal() } as unknown as Listener;
  let sensorShown: unknown = 'never asked';
  const delivery = watchDelivery(context, files, link, listener, {
    selfChecks: {
      runNow: () => {
        selfChecks += 1;
        return Promise.resolve();
      },
      last: { ok: true, url: `${publicUrl ?? ''}/health`, message: 'The public address reaches this plugin.' },
    },
    showSensor: (feed) => {
      sensorShown = feed;
      return { dispose: () => undefined };
    },
  });
  const lastMessage = () => patches.map((patch) => patch.delivery?.lastCheck?.message).filter((m) => m !== undefined).at(-1) ?? '';
  return { delivery, shutdown, lastMessage, selfChecks: () => selfChecks, sensorShown: () => sensorShown };
}

describe('the delivery wiring', () => {
  it('before a tunnel connects, the self-check says there is no public address and checks nothing', async () => {
    const { delivery, shutdown, lastMessage, selfChecks } = wire(undefined);
    await delivery.checkNow();
    await shutdown.run();
    expect(selfChecks()).toBe(0);
    expect(lastMessage()).toMatch(/tunnel has not connected, so there is no public address/);
  });

  it('with a public address, the self-check runs and its result is in the record', async () => {
    const { delivery, shutdown, lastMessage, selfChecks } = wire('https://name.ngrok-free.app');
    await delivery.checkNow();
    await shutdown.run();
    expect(selfChecks()).toBe(1);
    expect(lastMessage()).toMatch(/self-check passes/);
  });

  it('webhook.deliverySensor false: the sensor is asked to go, whatever the watch says', async () => {
    const { shutdown, sensorShown } = wire(undefined);
    await shutdown.run();
    expect(sensorShown()).toBeUndefined();
  });
});
