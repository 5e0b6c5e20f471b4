// The registrar as its tests build it: against the cloud fixture, with sleeps scaled down and
// written into the event list, and timers the test fires by hand.
import { afterEach, beforeEach, expect } from 'vitest';

import type { ApiClient } from '../../../src/cloud/http/api.js';
import { type RegistrarTimers, WebhookRegistrar, type WantedHooks } from '../../../src/cloud/registrations/registrations.js';
import { WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import type { SimulatorOptions } from '../../sim/index.js';
import { type ClientEvent, type CloudFixture, observedClient, startCloudFixture } from '../cloud-fixture.js';

export type RegistrarEvent = ClientEvent | { type: 'sleep-start' | 'sleep-end'; ms: number };

/** Sleeps 1/100 of the asked time (Retry-After 1 s = 10 ms) and writes each wait into `events`. */
export function scaledSleep(events: RegistrarEvent[]) {
  return async (ms: number) => {
    events.push({ type: 'sleep-start', ms });
    await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 2_000) / 100));
    events.push({ type: 'sleep-end', ms });
  };
}

/** Timers the test fires by hand. */
export function manualTimers() {
  const pending: { callback: () => void; ms: number }[] = [];
  const timers: RegistrarTimers = {
    set: (callback, ms) => {
      const handle = { callback, ms };
      pending.push(handle);
      return handle;
    },
    clear: (handle) => {
      const index = pending.indexOf(handle as (typeof pending)[number]);
      if (index >= 0) pending.splice(index, 1);
    },
  };
  return { timers, pending };
}

export const lockIds = (n: number) => Array.from({ length: n }, (_, i) => `LOCK-${String(i).padStart(3, '0')}`);

/** Two locks, a doorbell and the user: what most registrar tests want registered. */
export const ALL_HOOKS: WantedHooks = { locks: ['LOCK-000', 'LOCK-001'], doorbells: ['BELL-1'], user: true };

export interface RegistrarSetup {
  client?: ApiClient;
  timers?: RegistrarTimers;
  /** null: no public address yet (a tunnel not connected). */
  publicUrl?: string | null;
}

/** A registrar on the fixture's storage and secret, its calls and sleeps written into `events`. */
export async function makeRegistrar(fx: CloudFixture, events: RegistrarEvent[], options: RegistrarSetup = {}) {
  const secret = await WebhookSecret.load(fx.storage);
  /** The public address the registrar reads; a test moves it as a tunnel would. */
  const address = { url: options.publicUrl === null ? undefined : (options.publicUrl ?? fx.target.url) };
  const registrar = new WebhookRegistrar({
    client: options.client ?? observedClient(fx.client, events),
    storage: fx.storage,
    clientId: fx.sim.account.clientId,
    publicUrl: () => address.url,
    secret,
    log: fx.log,
    sleep: scaledSleep(events),
    random: () => 0.5,
    timers: options.timers ?? manualTimers().timers,
  });
  return { registrar, secret, address };
}

export interface RegistrarTestBed {
  /** The current test's fixture. */
  readonly fx: CloudFixture;
  /** The current test's calls and sleeps, in order. */
  readonly events: RegistrarEvent[];
  /** A registrar on the current fixture (see makeRegistrar). */
  registrar(setup?: RegistrarSetup): ReturnType<typeof makeRegistrar>;
  /** Replaces the fixture with one started with other options. */
  restart(options: SimulatorOptions): Promise<void>;
}

/**
 * A fresh fixture (three locks, one doorbell) and event list per test, and after each test the
 * check that nothing was left as an unhandled rejection ("nothing crashes it"). Registers its own
 * beforeEach and afterEach: call it inside the describe.
 */
export function registrarTestBed(): RegistrarTestBed {
  let fx: CloudFixture | undefined;
  let events: RegistrarEvent[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeEach(async () => {
    fx = await startCloudFixture({
      locks: lockIds(3).map((id) => ({ id, name: id })),
      doorbells: [{ id: 'BELL-1', name: 'Front' }],
    });
    events = [];
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(async () => {
    process.off('unhandledRejection', onUnhandled);
    await fx?.close();
    fx = undefined;
    expect(unhandled).toEqual([]);
  });

  const current = (): CloudFixture => {
    if (!fx) throw new Error('no fixture outside a test');
    return fx;
  };

  return {
    get fx() {
      return current();
    },
    get events() {
      return events;
    },
    registrar: (setup) => makeRegistrar(current(), events, setup),
    restart: async (options) => {
      await current().close();
      fx = await startCloudFixture(options);
    },
  };
}
