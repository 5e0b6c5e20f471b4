// The delivery watch as the plugin wires it: its self-check says plainly when there is no public
// address yet (a tunnel that has not connected) instead of checking an empty address; a way in that
// failed before the watch existed (the listener, the tunnel) is "not arriving" from the start.
import { describe, expect, it, vi } from 'vitest';

import { tunnelMessage } from '../../src/cloud/tunnel/tunnel-messages.js';
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
import { uiMessage, type UiMessage } from '../../src/util/ui-message.js';
import { captureLog } from '../homekit/hap-env.js';
import { memoryRecords } from '../model/memory-records.js';

const raw = {
  platform: 'LockAccess', apiKey: 'key', clientId: 'client', clientSecret: 'secret',
  baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com',
  webhook: { tunnel: { authtoken: 'made-up-authtoken-0123456789' }, deliveryCheckMinutes: 60, deliverySensor: false },
};

/** The records of the earlier stages, with only what the delivery watch reads of them. */
function wire(publicUrl: string | undefined, way: { listening?: boolean; brokenWayIn?: () => UiMessage | undefined } = {}) {
  const check = checkConfig(raw);
  if (!check.ok) throw new Error('the test config should be valid');
  const { log } = captureLog();
  const shutdown = new Shutdown();
  const patches: StatusPatch[] = [];
  let selfChecks = 0;
  const wayInLost = new Signal();
  const context = { config: check.config, log, shutdown } as unknown as PluginContext;
  const files = { status: { status: emptyStatus(0) } } as unknown as Files;
  const control = { idle: false, registrar: { sendAllAgain: () => Promise.resolve(emptyReport(false)), status: () => [] } };
  const main = { account: { id: 'main', name: 'main account', main: true }, tokens: { state: 'linked' }, control, log };
  const link = {
    main,
    extras: [],
    tokens: main.tokens,
    control,
    address: { publicUrl, get brokenWayIn() { return way.brokenWayIn?.(); }, wayInLost },
    publisher: { update: (patch: StatusPatch) => patches.push(patch), registrations: () => undefined },
  } as unknown as Link;
  // A doorbell-only account: the check re-registers and self-checks instead of asking a lock.
  const registry = new DeviceRegistry({ log, clock: systemClock, records: memoryRecords(), operate: () => Promise.resolve(), describeCommandFailure });
  const listener = { registry, receiver: way.listening === false ? undefined : {}, heard: new Signal(), accounts: { holdings: undefined, isStopped: () => false } } as unknown as Listener;
  let sensorShown: unknown = 'never asked';
  const delivery = watchDelivery(context, files, link, listener, {
    selfChecks: {
      runNow: () => {
        selfChecks += 1;
        return Promise.resolve();
      },
      last: { ok: true, url: `${publicUrl ?? ''}/health`, message: uiMessage('selfCheck.ok', {}, 'The public address reaches this plugin.') },
    },
    showSensor: (feed) => {
      sensorShown = feed;
      return { dispose: () => undefined };
    },
  });
  const lastMessage = () => patches.map((patch) => patch.delivery?.lastCheck?.message).filter((m) => m !== undefined).at(-1);
  const lastState = () => patches.map((patch) => patch.delivery?.state).filter((state) => state !== undefined).at(-1);
  return { delivery, shutdown, wayInLost, lastMessage, lastState, selfChecks: () => selfChecks, sensorShown: () => sensorShown };
}

describe('the delivery wiring', () => {
  it('before a tunnel connects, the self-check says there is no public address and checks nothing', async () => {
    const { delivery, shutdown, lastMessage, selfChecks } = wire(undefined);
    await delivery.checkNow();
    await shutdown.run();
    expect(selfChecks()).toBe(0);
    expect(lastMessage()?.text).toMatch(/tunnel has not connected, so there is no public address/);
    expect(lastMessage()).toMatchObject({ code: 'deliveryCheck.noLockToAsk', params: { selfCheck: { code: 'deliveryCheck.selfCheck.noAddress' } } });
  });

  it('with a public address, the self-check runs and its result is in the record', async () => {
    const { delivery, shutdown, lastMessage, selfChecks } = wire('https://name.ngrok-free.app');
    await delivery.checkNow();
    await shutdown.run();
    expect(selfChecks()).toBe(1);
    expect(lastMessage()?.text).toMatch(/self-check passes/);
    expect(lastMessage()).toMatchObject({ params: { selfCheck: { code: 'deliveryCheck.selfCheck.passes', params: { result: { code: 'selfCheck.ok' } } } } });
  });

  it('webhook.deliverySensor false: the sensor is asked to go, whatever the watch says', async () => {
    const { shutdown, sensorShown } = wire(undefined);
    await shutdown.run();
    expect(sensorShown()).toBeUndefined();
  });

  it('a tunnel that failed before the watch started: "not arriving" from the start, with the tunnel\'s reason', async () => {
    const { shutdown, lastMessage, lastState, selfChecks } = wire(undefined, { brokenWayIn: () => tunnelMessage('tunnel.failed.network') });
    expect(lastState()).toBe('notArriving');
    expect(lastMessage()).toEqual({ code: 'deliveryCheck.cannotArrive', params: { reason: tunnelMessage('tunnel.failed.network') }, text: expect.stringMatching(/^Events cannot arrive: The ngrok tunnel could not connect: ngrok cannot be reached from this machine\./) as unknown });
    expect(selfChecks()).toBe(0);
    await shutdown.run();
  });

  it('a listener that did not start: "not arriving" from the start', async () => {
    const { shutdown, lastMessage, lastState } = wire('https://home.example.net/lock-access', { listening: false });
    expect(lastState()).toBe('notArriving');
    expect(lastMessage()?.text).toMatch(/^Events cannot arrive: the webhook listener did not start/);
    expect(lastMessage()).toMatchObject({ code: 'deliveryCheck.cannotArrive', params: { reason: { code: 'deliveryCheck.noListener' } } });
    await shutdown.run();
  });

  it('a way in that works at the start is not yet known: "unknown"; one that drops later (reconnecting) is checked at once', async () => {
    const tunnel: { broken?: UiMessage } = {};
    const { delivery, shutdown, wayInLost, lastMessage, lastState, selfChecks } = wire('https://name.ngrok-free.app', { brokenWayIn: () => tunnel.broken });
    expect(lastState()).toBe('unknown');
    delivery.wayInChanged();
    await vi.waitFor(() => {
      expect(lastMessage()?.text).toMatch(/self-check passes/);
    });
    expect(selfChecks()).toBe(1);
    // The public address announces the lost way in; the watch follows it.
    tunnel.broken = tunnelMessage('tunnel.failed.other');
    wayInLost.emit();
    expect(lastState()).toBe('notArriving');
    await shutdown.run();
  });
});
