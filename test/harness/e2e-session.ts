// The set-up the end-to-end files share: one Homebridge with this plugin (restarted with the same
// storage, port, username and pin, so pairings and the accessory cache survive), a paired HomeKit
// controller when the file wants one, and a poller whose timeout shows the tail of Homebridge's log.
import { expect } from 'vitest';

import type { FireOptions, Simulator } from '../sim/index.js';
import { HapController } from './hap.js';
import { startHomebridge, type HomebridgeOptions, type RunningHomebridge } from './homebridge.js';

/** Lines of the Homebridge log a timeout message ends with. */
const LOG_TAIL = 30;

/**
 * Polls until the probe gives a value (the plugin works after acknowledging callbacks); not a timing
 * assertion. A probe that throws counts as "not yet"; its last error and the tail of `logs` go into
 * the timeout message.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000, logs: () => readonly string[] = () => []): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${String(last)})\n${logs().slice(-LOG_TAIL).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Fires a simulator event and expects every delivery of it answered 200 (the plugin accepted it). */
export async function fireAccepted(sim: Pick<Simulator, 'fire'>, name: string, options: FireOptions = {}): ReturnType<Simulator['fire']> {
  const results = await sim.fire(name, options);
  expect(results.every((r) => r.status === 200)).toBe(true);
  return results;
}

export interface SessionStart extends Omit<HomebridgeOptions, 'storagePath' | 'bridgePort' | 'username' | 'pin'> {
  /** How long to wait for "Webhook listener ready" (the harness's default when left out). */
  listenerTimeoutMs?: number;
  /** The log line that ends the start instead of "Webhook listener ready" (a listener meant to fail). */
  readyLog?: RegExp;
  /** Waits (up to 60 s) until the simulator holds at least `atLeast` webhook registrations: callbacks reach the plugin only after. */
  registrations?: { sim: { registrations(): readonly unknown[] }; atLeast: number };
}

export class E2eSession {
  private current: RunningHomebridge | undefined;
  /** The first run made the storage folder; its cleanup removes it. */
  private first: RunningHomebridge | undefined;
  private controller: HapController | undefined;

  /** The Homebridge running now (a restart replaces it). */
  get hb(): RunningHomebridge | undefined {
    return this.current;
  }

  /** `eventually` with this Homebridge's log tail in the timeout message. */
  readonly eventually = <T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> =>
    eventually(probe, what, timeoutMs, () => this.current?.logs ?? []);

  /** The paired controller; throws before `pair`. */
  readonly paired = (): HapController => {
    if (!this.controller) throw new Error('not paired');
    return this.controller;
  };

  /**
   * Starts Homebridge, or starts it again with the first run's identity, and waits for the webhook
   * listener (and the registrations, when asked).
   */
  async start(options: SessionStart): Promise<RunningHomebridge> {
    const { listenerTimeoutMs, registrations, readyLog, ...homebridge } = options;
    const identity = this.first && { storagePath: this.first.storagePath, bridgePort: this.first.bridgePort, username: this.first.username, pin: this.first.pin };
    const hb = await startHomebridge({ ...homebridge, ...identity });
    this.current = hb;
    this.first ??= hb;
    await hb.waitForLog(readyLog ?? /Webhook listener ready/, listenerTimeoutMs);
    if (registrations) {
      const { sim, atLeast } = registrations;
      await this.eventually(() => Promise.resolve(sim.registrations().length >= atLeast ? true : undefined), `${atLeast} webhook registrations`, 60_000);
    }
    return hb;
  }

  /** Stops Homebridge and starts it again with the same identity. */
  async restart(options: SessionStart): Promise<RunningHomebridge> {
    await this.current?.stop();
    return this.start(options);
  }

  /** Pairs a new HomeKit controller with the bridge and waits until it lists `accessories` accessories (the bridge is one). */
  async pair(accessories: number, what: string): Promise<HapController> {
    const hb = this.current;
    if (!hb) throw new Error('start Homebridge before pairing');
    this.controller = await HapController.pair({ port: hb.bridgePort, username: hb.username, pin: hb.pin });
    await this.eventually(async () => ((await this.paired().accessories()).length >= accessories ? true : undefined), what);
    return this.controller;
  }

  /** Closes the controller (and its subscriptions), stops Homebridge and removes the storage folder. */
  async close(): Promise<void> {
    await this.controller?.close();
    await this.current?.stop();
    await this.first?.cleanup();
  }
}
