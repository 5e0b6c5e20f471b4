// The set-up the end-to-end files share: one Homebridge with this plugin (restarted with the same
// storage, port, username and pin, so pairings and the accessory cache survive), a paired HomeKit
// controller when the file wants one, and a poller whose timeout shows the tail of Homebridge's log.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'vitest';

import type { FireOptions, Simulator } from '../sim/index.js';
import { HapController, type HapPairing } from './hap.js';
import { STARTED, startHomebridge, type HomebridgeFlavour, type HomebridgeOptions, type RunningHomebridge } from './homebridge.js';

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
  /** How long to wait for the plugin's "Started" line (the harness's default when left out). */
  listenerTimeoutMs?: number;
  /** The log line that ends the start instead of "Started" (a listener meant to fail, say). */
  readyLog?: RegExp;
  /** Waits (up to 60 s) until the simulator holds at least `atLeast` webhook registrations: callbacks reach the plugin only after. */
  registrations?: { sim: { registrations(): readonly unknown[] }; atLeast: number };
}

/**
 * A pairing made by a session of this test worker: the bridge's identity, HAP-NodeJS's record of
 * it (its key pair and the paired controller, `persist/AccessoryInfo.<id>.json`) and the
 * controller's keys. Pair-setup's SRP costs the two sides about 0.8 s of CPU; a later session's
 * new Homebridge starts with a copy of that record, as after a restart, and its controller only runs
 * pair-verify. One per Homebridge flavour, for sessions on this repository's Homebridge.
 */
interface KnownPairing {
  username: string;
  pin: string;
  recordName: string;
  record: string;
  keys: HapPairing;
}
const knownPairings = new Map<HomebridgeFlavour, KnownPairing>();
/** Bridge ids of the sessions running now: two bridges with one id at once would confuse both. */
const idsInUse = new Set<string>();

/** HAP-NodeJS's file name for a bridge's record (AccessoryInfo.persistKey). */
const recordName = (username: string) => `AccessoryInfo.${username.replace(/:/g, '').toUpperCase()}.json`;

export class E2eSession {
  private current: RunningHomebridge | undefined;
  /** The first run's storage folder; close() removes it. */
  private first: RunningHomebridge | undefined;
  private controller: HapController | undefined;
  /** The worker's earlier pairing this session's bridge was started with. */
  private reused: KnownPairing | undefined;
  private flavour: HomebridgeFlavour = 'homebridge';
  /** This repository's Homebridge, on this Node, as root (whose pairings may be shared). */
  private shareable = false;

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
   * Starts Homebridge, or starts it again with the first run's identity, and waits for the plugin's
   * "Started" line (its devices bound to HomeKit) (and the registrations, when asked).
   */
  async start(options: SessionStart): Promise<RunningHomebridge> {
    const { listenerTimeoutMs, registrations, readyLog, ...homebridge } = options;
    const identity = this.first ? { storagePath: this.first.storagePath, bridgePort: this.first.bridgePort, username: this.first.username, pin: this.first.pin } : await this.firstIdentity(homebridge);
    const hb = await startHomebridge({ ...homebridge, ...identity });
    this.current = hb;
    if (!this.first) {
      this.first = hb;
      idsInUse.add(hb.username);
    }
    await hb.waitForLog(readyLog ?? STARTED, listenerTimeoutMs);
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

  /**
   * Pairs a HomeKit controller with the bridge (pair-setup, or pair-verify with the keys of the
   * worker's earlier pairing this bridge started with) and waits until it lists `accessories`
   * accessories (the bridge is one).
   */
  async pair(accessories: number, what: string): Promise<HapController> {
    const hb = this.current;
    if (!hb) throw new Error('start Homebridge before pairing');
    const bridge = { port: hb.bridgePort, username: hb.username, pin: hb.pin };
    this.controller = this.reused ? HapController.paired(bridge, this.reused.keys) : await HapController.pair(bridge);
    await this.eventually(async () => ((await this.paired().accessories()).length >= accessories ? true : undefined), what);
    if (!this.reused && !knownPairings.has(this.flavour)) await this.keepPairing(hb);
    return this.controller;
  }

  /** Closes the controller (and its subscriptions), stops Homebridge and removes the storage folder. */
  async close(): Promise<void> {
    await this.controller?.close();
    await this.current?.stop();
    if (this.reused) idsInUse.delete(this.reused.username);
    if (this.first) {
      idsInUse.delete(this.first.username);
      await rm(this.first.storagePath, { recursive: true, force: true });
    }
  }

  /**
   * A new bridge's identity: the worker's earlier pairing when there is one for this Homebridge and
   * no running session uses it (a storage folder holding its record), else Homebridge's own.
   */
  private async firstIdentity(options: Omit<HomebridgeOptions, 'storagePath'>): Promise<Partial<HomebridgeOptions>> {
    this.flavour = options.flavour ?? 'homebridge';
    this.shareable = options.homebridgeBin === undefined && options.node === undefined && options.uid === undefined;
    const known = knownPairings.get(this.flavour);
    if (!known || !this.shareable || idsInUse.has(known.username)) return {};
    // Taken before any await: a session of this file starting beside this one must not take it too.
    idsInUse.add(known.username);
    this.reused = known;
    const storagePath = await mkdtemp(join(tmpdir(), 'lock-access-hb-'));
    await mkdir(join(storagePath, 'persist'));
    await writeFile(join(storagePath, 'persist', known.recordName), known.record);
    return { storagePath, username: known.username, pin: known.pin };
  }

  /** Keeps this session's pairing for the worker's later sessions (HAP-NodeJS saved its record when pairing ended). */
  private async keepPairing(hb: RunningHomebridge): Promise<void> {
    const keys = this.controller?.pairingData();
    if (!keys || !this.shareable) return;
    const name = recordName(hb.username);
    const record = await readFile(join(hb.storagePath, 'persist', name), 'utf8').catch(() => undefined);
    // The record names the controller by its id (hex in the keys).
    if (record === undefined || !record.includes(Buffer.from(keys.iOSDevicePairingID, 'hex').toString('utf8'))) return;
    knownPairings.set(this.flavour, { username: hb.username, pin: hb.pin, recordName: name, record, keys });
  }
}
