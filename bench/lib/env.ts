// The processes the benchmark parts share within one run, started on first use and stopped at the
// end: the simulator, Homebridge with this plugin ("ours"), and Homebridge with the bare plugin
// ("bare"), each with 100 locks and 20 doorbells and a paired hap-controller.
import { join } from 'node:path';

import { REPO_ROOT, freePort, startHomebridge, type RunningHomebridge } from '../../test/harness/homebridge.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { simPlatformConfig } from '../../test/sim/plugin-config.js';
import { fleet, type Fleet } from './fleet.js';
import { pairBridge, type PairedBridge } from './hap-client.js';
import type { Target } from './post.js';
import { SETTLE_ENV } from './rss.js';
import type { RunOptions } from './types.js';

export const BARE_PLUGIN_PATH = join(REPO_ROOT, 'bench', 'bare-plugin');
export const BARE_API_KEY = 'bench-bare-api-key';
export const SOAK_TOKEN_LIFETIME_SECONDS = 240;
/** The household member with an automation trigger on every lock, as the service names them. */
export const BENCH_PERSON = { UserID: 'bench-person-0001', FirstName: 'Bench', LastName: 'Person', PhoneNo: '+15555550199', Email: 'bench@example.com', imageInfo: null };

export interface Subject {
  label: 'ours' | 'bare';
  /** The current process (the soak restarts it, so these three may change). */
  hb: RunningHomebridge;
  pid: number;
  bridge: PairedBridge;
  readonly fleet: Fleet;
  lockTarget(id: string): Target;
  doorbellTarget(id: string): Target;
  /** performance.now() around start: spawn, ready (listener up / registrations done), paired. */
  timings: { spawnedAt: number; readyAt: number; pairedAt: number };
  stop(): Promise<void>;
}

/** The plugin's platform block against a simulator; listener on 127.0.0.1:port under /lock-access. */
export function oursPlatform(sim: Simulator, port: number, f: Fleet, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return simPlatformConfig(sim, port, {
    refreshToken: sim.issueRefreshToken(),
    locks: f.locks.map((l) => ({ ...l, doorSensor: true })),
    doorbells: f.doorbells.map((d) => ({ ...d, motionTimeoutSeconds: 1 })),
    userWebhook: true,
    discoverDevices: false,
    refreshStateOnStart: false,
    people: [{ userId: BENCH_PERSON.UserID, name: 'Bench Person' }],
    ...extra,
  });
}

export function addFleetToSim(sim: Simulator, f: Fleet): void {
  for (const lock of f.locks) sim.addLock({ id: lock.id, name: lock.name, doorSensor: true });
  for (const bell of f.doorbells) sim.addDoorbell({ id: bell.id, name: bell.name });
}

/** Resolves once the simulator holds a registration for every device (and the user hook). */
export async function waitForRegistrations(sim: Simulator, f: Fleet, timeoutMs: number, pollMs = 5): Promise<number> {
  const wanted = f.locks.length + f.doorbells.length;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const regs = sim.registrations();
    const devices = regs.filter((r) => r.kind === 'lock' || r.kind === 'doorbell').length;
    if (devices >= wanted) return performance.now();
    if (performance.now() > deadline) throw new Error(`only ${devices} of ${wanted} device registrations after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export function registrationTarget(sim: Simulator, kind: 'lock' | 'doorbell', id: string): Target {
  const reg = sim.registrations().find((r) => r.kind === kind && r.scope === id);
  if (!reg) throw new Error(`no ${kind} registration for ${id}`);
  return { url: reg.url, apiKey: sim.account.apiKey, header: { name: reg.header, value: reg.token } };
}

/**
 * Homebridge with the bare plugin. With a simulator it makes the same registrations as this plugin
 * (one refresh grant, a registration with a custom header token per device and the user hook) and
 * receives the same signed callbacks through them; without one it only listens.
 */
export async function startBare(f: Fleet, options: { camera?: boolean | 'secure-video'; sim?: Simulator; listener?: 'http' | 'fastify'; checks?: boolean } = {}): Promise<Subject> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const { sim } = options;
  const cloud = sim === undefined ? undefined : {
    baseUrl: sim.baseUrl,
    authUrl: sim.authUrl,
    clientId: sim.account.clientId,
    clientSecret: sim.account.clientSecret,
    refreshToken: sim.issueRefreshToken(),
  };
  const apiKey = sim === undefined ? BARE_API_KEY : sim.account.apiKey;
  const hb = await startHomebridge({
    pluginPath: BARE_PLUGIN_PATH,
    platforms: [{ platform: 'BenchBare', apiKey, port, locks: f.locks, doorbells: f.doorbells, motionTimeoutSeconds: 1, camera: options.camera ?? true, listener: options.listener ?? 'http', checks: options.checks ?? false, cloud }],
    env: SETTLE_ENV,
  });
  await hb.waitForLog(/is running on port/, 180_000);
  await hb.waitForLog(/bare listener on/, 10_000);
  if (sim !== undefined) {
    await hb.waitForLog(/bare registrations (done|failed)/, 180_000);
    await waitForRegistrations(sim, f, 10_000);
  }
  const readyAt = performance.now();
  const bridge = await pairBridge(hb.username, hb.bridgePort, hb.pin);
  const pairedAt = performance.now();
  const base = `http://127.0.0.1:${port}`;
  const subject: Subject = {
    label: 'bare',
    hb,
    pid: pidOf(hb),
    bridge,
    fleet: f,
    lockTarget: (id) => (sim === undefined ? { url: `${base}/lock/${encodeURIComponent(id)}`, apiKey } : registrationTarget(sim, 'lock', id)),
    doorbellTarget: (id) => (sim === undefined ? { url: `${base}/doorbell/${encodeURIComponent(id)}`, apiKey } : registrationTarget(sim, 'doorbell', id)),
    timings: { spawnedAt, readyAt, pairedAt },
    stop: () => stopSubject(subject, hb),
  };
  return subject;
}

/** Closes the controller and the current process; removes the storage the first process made. */
async function stopSubject(subject: Subject, first: RunningHomebridge): Promise<void> {
  await subject.bridge.close();
  await subject.hb.stop();
  if (first !== subject.hb) await first.stop();
  await first.cleanup();
}

export async function startOurs(sim: Simulator, f: Fleet, extra: Record<string, unknown> = {}): Promise<Subject> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const hb = await startHomebridge({ platforms: [oursPlatform(sim, port, f, extra)], env: SETTLE_ENV, ...pluginOverride() });
  await hb.waitForLog(/is running on port/, 180_000);
  const readyAt = await waitForRegistrations(sim, f, 180_000);
  const bridge = await pairBridge(hb.username, hb.bridgePort, hb.pin);
  const pairedAt = performance.now();
  const subject: Subject = {
    label: 'ours',
    hb,
    pid: pidOf(hb),
    bridge,
    fleet: f,
    lockTarget: (id) => registrationTarget(sim, 'lock', id),
    doorbellTarget: (id) => registrationTarget(sim, 'doorbell', id),
    timings: { spawnedAt, readyAt, pairedAt },
    stop: () => stopSubject(subject, hb),
  };
  return subject;
}

/** BENCH_PLUGIN_PATH runs another build of the plugin (e.g. an older release) through the same benchmarks. */
export function pluginOverride(): { pluginPath?: string } {
  const path = process.env.BENCH_PLUGIN_PATH;
  return path ? { pluginPath: path } : {};
}

function pidOf(hb: RunningHomebridge): number {
  const pid = hb.child.pid;
  if (pid === undefined) throw new Error('Homebridge has no pid');
  return pid;
}

/** Lazily started shared processes; parts that need fresh ones start their own. */
export class BenchEnv {
  private simPromise: Promise<Simulator> | undefined;
  private oursPromise: Promise<Subject> | undefined;
  private barePromise: Promise<Subject> | undefined;
  /** The bare plugin's own simulator: the service keeps one registration per user and device, so sharing one would replace this plugin's. */
  private bareSimPromise: Promise<Simulator> | undefined;
  private checkedPromise: Promise<{ sim: Simulator; subject: Subject }> | undefined;
  readonly fleet = fleet();

  constructor(private readonly options: RunOptions) {}

  sim(): Promise<Simulator> {
    this.simPromise ??= (async () => {
      // Access tokens live 4 minutes so the soak sees refresh grants in real time.
      // Each API answer extends the token by a second ("slightly"), so the grant still comes due.
      const sim = await startSimulator({ port: 0, latencyMs: 0, accessTokenLifetimeSeconds: SOAK_TOKEN_LIFETIME_SECONDS, accessTokenExtensionSeconds: 1 });
      addFleetToSim(sim, this.fleet);
      return sim;
    })();
    return this.simPromise;
  }

  ours(): Promise<Subject> {
    this.oursPromise ??= (async () => {
      this.options.log('starting Homebridge with the plugin (100 locks, 20 doorbells) and pairing a controller');
      return startOurs(await this.sim(), this.fleet);
    })();
    return this.oursPromise;
  }

  bareSim(): Promise<Simulator> {
    this.bareSimPromise ??= this.ownSim();
    return this.bareSimPromise;
  }

  private async ownSim(): Promise<Simulator> {
    const sim = await startSimulator({ port: 0, latencyMs: 0, accessTokenLifetimeSeconds: SOAK_TOKEN_LIFETIME_SECONDS, accessTokenExtensionSeconds: 1 });
    addFleetToSim(sim, this.fleet);
    return sim;
  }

  /**
   * The bare plugin on Fastify with the checks every plugin must make (signature and tolerance, a
   * zod payload schema, a duplicate filter) and the two HAP updates: the throughput baseline. On
   * its own simulator, like the plain bare plugin.
   */
  bareChecked(): Promise<Subject> {
    this.checkedPromise ??= (async () => {
      this.options.log('starting Homebridge with the bare plugin on Fastify with checks (same 120 accessories) and pairing a controller');
      const sim = await this.ownSim();
      try {
        return { sim, subject: await startBare(this.fleet, { sim, listener: 'fastify', checks: true }) };
      } catch (error) {
        await sim.close();
        throw error;
      }
    })();
    return this.checkedPromise.then((c) => c.subject);
  }

  bare(): Promise<Subject> {
    this.barePromise ??= (async () => {
      this.options.log('starting Homebridge with the bare plugin (same 120 accessories) and pairing a controller');
      return startBare(this.fleet, { sim: await this.bareSim() });
    })();
    return this.barePromise;
  }

  async close(): Promise<void> {
    const checked = this.checkedPromise?.then((c) => c.subject);
    const subjects = await Promise.allSettled([this.oursPromise, this.barePromise, checked].filter((p) => p !== undefined));
    await Promise.allSettled(subjects.map((s) => (s.status === 'fulfilled' ? s.value.stop() : Promise.resolve())));
    const checkedSim = this.checkedPromise?.then((c) => c.sim);
    for (const promise of [this.simPromise, this.bareSimPromise, checkedSim]) {
      if (promise === undefined) continue;
      const sim = await promise.catch(() => undefined);
      await sim?.close();
    }
  }
}
