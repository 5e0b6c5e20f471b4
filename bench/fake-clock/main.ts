// Part 6b, run in its own process (fake timers are global): 30 simulated days of the plugin's
// platform, in process on Homebridge's own API object, against the simulator, with Date and timers
// faked by @sinonjs/fake-timers (what vitest's fake timers are built on). Network and disk I/O stay
// real; after every timer the run waits (in real time) until no HTTP call is in flight.
//
// Through the month: token refreshes (6-day access tokens, each API answer extending them by a
// minute), daily keep-alives, registration refreshes, callbacks every 20 minutes with duplicates and
// reordered deliveries, and faults: 5xx, 429, dropped connections, refresh grants the service
// refuses (503, token not rotated), and listener restarts (the platform shut down and started again
// from its accessory cache). On three locks of their own, the state episodes of
// bench/lib/state-episodes.ts (flapping bridges and batteries, lock clocks reset or jumped ahead),
// and a signature clock a little off. Prints one JSON line with the counts.
//
// A grant answer lost after the service rotated the token is not part of the month: the spec makes
// a refresh token single-use, so nothing can get that token back, and the plugin's answer (drop it,
// never resend it, keep using the access token and say so) is covered by the token tests.
//
//   node --expose-gc --import tsx bench/fake-clock/main.ts [days] [lockCount] [doorbellCount]
import { createHook } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as realImmediate, setTimeout as realSleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import FakeTimers from '@sinonjs/fake-timers';
import type { API, DynamicPlatformPlugin, Logging, PlatformAccessory as Accessory, PlatformConfig } from 'homebridge';

import { REPO_ROOT, freePort } from '../../test/harness/homebridge.js';
import { startSimulator } from '../../test/sim/index.js';
import { doorbellButtonPush, doorState, manualOperation } from '../../test/sim/payloads.js';
import { addFleetToSim, oursPlatform } from '../lib/env.js';
import { fleet } from '../lib/fleet.js';
import { StateEpisodes } from '../lib/state-episodes.js';

const DAY = 24 * 60 * 60 * 1000;
const days = Number(process.argv[2] ?? 30);
const f = fleet(Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 5));

let unhandled = 0;
let uncaught = 0;
process.on('unhandledRejection', (reason) => {
  unhandled += 1;
  process.stderr.write(`unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}\n`);
});
process.on('uncaughtException', (error) => {
  uncaught += 1;
  process.stderr.write(`uncaught exception: ${error.stack ?? error.message}\n`);
});

// Count HTTP calls in flight (plugin to simulator and simulator to listener) so the run can wait
// for them in real time before advancing the fake clock.
let inflight = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  inflight += 1;
  try {
    return await realFetch(input, init);
  } finally {
    inflight -= 1;
  }
};

// Count short-lived I/O requests (disk, connects, writes) the same way, through async_hooks, so a
// token file write or a lock-file retry finishes before the clock moves on.
const IO_TYPES = new Set(['FSREQCALLBACK', 'FSREQPROMISE', 'FILEHANDLECLOSEREQ', 'TCPCONNECTWRAP', 'WRITEWRAP', 'SHUTDOWNWRAP', 'GETADDRINFOREQWRAP']);
const pendingIo = new Set<number>();
createHook({
  init(id, type) {
    if (IO_TYPES.has(type)) pendingIo.add(id);
  },
  destroy(id) {
    pendingIo.delete(id);
  },
}).enable();

async function settle(): Promise<void> {
  let quiet = 0;
  // Quiet for a few consecutive checks: no fetch and no disk or socket request in flight.
  while (quiet < 3) {
    const busy = inflight > 0 || pendingIo.size > 0;
    if (busy) await realSleep(1);
    else await realImmediate();
    quiet = busy ? 0 : quiet + 1;
  }
}

const clock = FakeTimers.install({
  now: Date.now(),
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  loopLimit: 1_000_000,
});

const homebridgeDist = join(REPO_ROOT, 'node_modules', 'homebridge', 'dist');
const { HomebridgeAPI } = (await import(pathToFileURL(join(homebridgeDist, 'api.js')).href)) as { HomebridgeAPI: new () => API & NodeJS.EventEmitter & { signalFinished(): void; signalShutdown(): void } };
const { User } = (await import(pathToFileURL(join(homebridgeDist, 'user.js')).href)) as { User: { setStoragePath(...parts: string[]): void } };
const { PlatformAccessory } = (await import(pathToFileURL(join(homebridgeDist, 'platformAccessory.js')).href)) as {
  PlatformAccessory: { serialize(a: Accessory): unknown; deserialize(json: unknown): Accessory };
};
// The platform from src/ (this runs under tsx). BENCH_PLATFORM_MODULE: another build's module exporting
// LockAccessPlatform (e.g. an older release).
const { LockAccessPlatform } = (await import(pathToFileURL(process.env.BENCH_PLATFORM_MODULE ?? join(REPO_ROOT, 'src', 'platform.ts')).href)) as {
  LockAccessPlatform: new (log: Logging, config: PlatformConfig, api: API) => DynamicPlatformPlugin;
};

const storage = await mkdtemp(join(tmpdir(), 'bench-fake-clock-'));
User.setStoragePath(storage);

const sim = await startSimulator({
  port: 0,
  accessTokenLifetimeSeconds: 6 * 24 * 60 * 60,
  // Each API answer's token extends validity "slightly": a minute.
  accessTokenExtensionSeconds: 60,
});
addFleetToSim(sim, f);
const listenPort = await freePort();
const config = oursPlatform(sim, listenPort, f, { discoverDevices: true, refreshStateOnStart: true }) as PlatformConfig;

const logLines: { level: string; text: string }[] = [];
function makeLog(): Logging {
  const at = (level: string) => (message: string, ...params: unknown[]) => {
    logLines.push({ level, text: [message, ...params.map(String)].join(' ') });
    if (process.env.BENCH_FAKE_DEBUG) process.stderr.write(`${new Date().toISOString()} [${level}] ${message}\n`);
    if (logLines.length > 5000) logLines.splice(0, 2500);
  };
  return Object.assign(at('info'), { prefix: 'Lock Access', info: at('info'), success: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), log: (level: string, message: string) => { at(level)(message); } });
}

// One "Homebridge run": a fresh API object, the cached accessories restored, then launched.
let cache: unknown[] = [];
let accessories = new Map<string, Accessory>();
let api: (API & NodeJS.EventEmitter & { signalFinished(): void; signalShutdown(): void }) | undefined;
let rings = 0;
const watched = new WeakSet<object>();

function watchRings(accessory: Accessory, hap: API['hap']): void {
  const service = accessory.getService(hap.Service.Doorbell);
  const characteristic = service?.getCharacteristic(hap.Characteristic.ProgrammableSwitchEvent);
  if (!characteristic || watched.has(characteristic)) return;
  watched.add(characteristic);
  characteristic.on('change', () => {
    rings += 1;
  });
}

async function launch(): Promise<void> {
  const next = new HomebridgeAPI();
  api = next;
  accessories = new Map();
  next.on('registerPlatformAccessories', (list: Accessory[]) => {
    for (const a of list) {
      accessories.set(a.UUID, a);
      watchRings(a, next.hap);
    }
  });
  next.on('unregisterPlatformAccessories', (list: Accessory[]) => {
    for (const a of list) accessories.delete(a.UUID);
  });
  const platform = new LockAccessPlatform(makeLog(), config, next);
  for (const json of cache) {
    const restored = PlatformAccessory.deserialize(json);
    accessories.set(restored.UUID, restored);
    platform.configureAccessory(restored);
    watchRings(restored, next.hap);
  }
  next.signalFinished();
  await settle();
}

async function shutdown(): Promise<void> {
  if (!api) return;
  api.signalShutdown();
  await settle();
  cache = [...accessories.values()].map((a) => JSON.parse(JSON.stringify(PlatformAccessory.serialize(a))) as unknown);
  api.removeAllListeners();
  api = undefined;
}

/** Advances fake time to `until`, one timer at a time, letting real I/O finish after each. */
async function advanceTo(until: number): Promise<void> {
  for (;;) {
    const timers = clock.countTimers();
    const nextAt = timers > 0 ? peekNext() : undefined;
    if (nextAt === undefined || nextAt > until) {
      // No timer due before `until`: moving the clock fires nothing.
      await clock.tickAsync(Math.max(0, until - clock.now));
      await settle();
      return;
    }
    await clock.nextAsync();
    await settle();
  }
}

function peekNext(): number | undefined {
  // fake-timers keeps its timers in clock.timers (a Map of id -> { callAt }).
  const timers = (clock as unknown as { timers?: Map<number, { callAt: number }> }).timers;
  let next: number | undefined;
  for (const t of timers?.values() ?? []) next = next === undefined ? t.callAt : Math.min(next, t.callAt);
  return next;
}

const stats = {
  days, locks: f.locks.length, doorbells: f.doorbells.length,
  presses: 0, lockEvents: 0, doorEvents: 0, duplicates: 0, reordered: 0,
  deliveries: 0, delivered: 0, rejected: 0, exhausted: 0, cancelled: 0,
  faults: { fail5xx: 0, rateLimit429: 0, dropped: 0, grantRefused: 0, listenerRestarts: 0 },
  grants: 0, apiCalls: 0, keepAliveDays: 0,
  rings: 0, wrongLock: 0, wrongDoor: 0, wrongReachability: 0, wrongBattery: 0, tokenState: 'unknown', linkProblems: 0,
  episodes: {} as StateEpisodes['counts'],
  unhandled: 0, uncaught: 0, heapMiB: [] as { day: number; heapMiB: number; rssMiB: number }[],
  realSeconds: 0,
};
const outcomes: Promise<string>[] = [];
const newestLock = new Map<string, { at: number; state: 0 | 1 }>();
const newestDoor = new Map<string, { at: number; state: 0 | 1 }>();
let lastStamp = 0;
const stamp = () => (lastStamp = Math.max(Date.now(), lastStamp + 1));

/**
 * The episode locks at the end: reads fail exactly for those left offline; then, with all of them
 * back online, each shows its last lock state and battery level.
 */
async function checkEpisodes(hap: API['hap']): Promise<void> {
  const lockOf = (id: string) => accessories.get(hap.uuid.generate(`lock:${id}`));
  for (const [lockId, online] of episodes.expected.online) {
    const characteristic = lockOf(lockId)?.getService(hap.Service.LockMechanism)?.getCharacteristic(hap.Characteristic.LockCurrentState);
    const failed = await Promise.resolve(characteristic?.handleGetRequest()).then(() => false, () => true);
    if (failed === online) stats.wrongReachability += 1;
  }
  await episodes.allOnline();
  for (const [lockId, want] of episodes.expected.lock) {
    if (Number(lockOf(lockId)?.getService(hap.Service.LockMechanism)?.getCharacteristic(hap.Characteristic.LockCurrentState).value) !== want) stats.wrongLock += 1;
  }
  for (const [lockId, want] of episodes.expected.batteryLevel) {
    const battery = lockOf(lockId)?.services.find((s) => s.UUID === hap.Service.Battery.UUID && (s.subtype ?? '') === '');
    const level = battery?.testCharacteristic(hap.Characteristic.BatteryLevel) === true ? battery.getCharacteristic(hap.Characteristic.BatteryLevel).value : undefined;
    if (Number(level) !== want) stats.wrongBattery += 1;
  }
}

async function send(payload: object, target: { lockId?: string; doorbellId?: string }): Promise<void> {
  const results = await sim.send(payload, target);
  for (const r of results) {
    stats.deliveries += 1;
    outcomes.push(r.done);
  }
  await settle();
}

// The last three locks are the episodes' own; their deliveries go one after the other.
const changeLocks = f.locks.slice(0, -3);
const episodes = new StateEpisodes(sim, f.locks.slice(-3).map((l) => l.id), async (name, options) => {
  for (const r of await sim.fire(name, options)) {
    stats.deliveries += 1;
    outcomes.push(r.done);
  }
  await settle();
});

function pick<T>(list: readonly T[]): T {
  const item = list[Math.floor(Math.random() * list.length)];
  if (item === undefined) throw new Error('empty list');
  return item;
}

async function event(): Promise<void> {
  const roll = Math.random();
  if (roll < 0.3) {
    const bell = pick(f.doorbells);
    const payload = doorbellButtonPush({ doorbellId: bell.id, dvrId: randomUUID() });
    stats.presses += 1;
    await send(payload, { doorbellId: bell.id });
    if (Math.random() < 0.15) {
      stats.duplicates += 1;
      await send(payload, { doorbellId: bell.id });
    }
    return;
  }
  if (roll < 0.37) {
    await episodes.runOne();
    return;
  }
  const aspect = roll < 0.68 ? 'lock' : 'door';
  const lock = pick(changeLocks);
  const newest = aspect === 'lock' ? newestLock : newestDoor;
  const state: 0 | 1 = newest.get(lock.id)?.state === 1 ? 0 : 1;
  const at = stamp();
  newest.set(lock.id, { at, state });
  const build = (s: 0 | 1, t: number) => aspect === 'lock'
    ? manualOperation({ lockId: lock.id, event: s === 1 ? 'lock' : 'unlock', at: t, eventId: randomUUID() })
    : doorState({ lockId: lock.id, state: s === 1 ? 'open' : 'closed', at: t, eventId: randomUUID() });
  const payload = build(state, at);
  // Keep the simulator's own view in step, so the status callbacks it sends after a restart
  // (refreshStateOnStart) report the same state.
  const simLock = sim.lock(lock.id);
  if (simLock && aspect === 'lock') simLock.lockState = state === 1 ? 'locked' : 'unlocked';
  if (simLock && aspect === 'door') simLock.doorState = state === 1 ? 'open' : 'closed';
  if (aspect === 'lock') stats.lockEvents += 1;
  else stats.doorEvents += 1;
  await send(payload, { lockId: lock.id });
  const again = Math.random();
  if (again < 0.1) {
    stats.duplicates += 1;
    await send(payload, { lockId: lock.id });
  } else if (again < 0.2) {
    stats.reordered += 1;
    await send(build(state === 1 ? 0 : 1, at - 60_000), { lockId: lock.id });
  }
}

function fault(day: number): void {
  switch (day % 4) {
    case 0:
      sim.faults.failNext(3, 503);
      stats.faults.fail5xx += 3;
      break;
    case 1:
      sim.faults.rateLimitNext(2, 120);
      stats.faults.rateLimit429 += 2;
      break;
    case 2:
      sim.faults.dropNext(2);
      stats.faults.dropped += 2;
      break;
    default:
      break;
  }
}

const realStart = performance.now();
const start = Date.now();
await launch();
const gc = (globalThis as { gc?: () => void }).gc;
const STEP = 20 * 60 * 1000;
let nextDay = start + DAY;
let day = 0;
let steps = 0;
while (Date.now() < start + days * DAY) {
  await advanceTo(Date.now() + STEP);
  await event();
  // Every six hours the signature clock moves (0 to 30 s behind).
  steps += 1;
  if (steps % 18 === 0) episodes.shiftSignatureClock();
  if (Date.now() >= nextDay) {
    day += 1;
    nextDay += DAY;
    fault(day);
    // The token endpoint refuses the next refresh grants (503 before rotating), twice in the month.
    if (day === 10 || day === 20) {
      sim.faults.failNext(2, 503, 'POST /oauth/access_token');
      stats.faults.grantRefused += 2;
    }
    if (day % 5 === 0) {
      await shutdown();
      await advanceTo(Date.now() + 10 * 60 * 1000);
      stats.faults.listenerRestarts += 1;
      await launch();
    }
    gc?.();
    const usage = process.memoryUsage();
    stats.heapMiB.push({ day, heapMiB: Math.round((usage.heapUsed / 2 ** 20) * 10) / 10, rssMiB: Math.round((usage.rss / 2 ** 20) * 10) / 10 });
  }
}
sim.faults.signatureSkewMs = 0;
// Let every retry run its course (the spec's schedule spans 34 hours).
await advanceTo(Date.now() + 2 * DAY);
// Before the outcomes are counted: the check brings offline episode locks back with deliveries of its own.
if (api) await checkEpisodes(api.hap);
stats.episodes = episodes.counts;
const finals = await Promise.all(outcomes);
for (const o of finals) (stats as unknown as Record<string, number>)[o] = ((stats as unknown as Record<string, number>)[o] ?? 0) + 1;

const hap = api?.hap;
if (hap) {
  for (const [lockId, want] of newestLock) {
    const a = accessories.get(hap.uuid.generate(`lock:${lockId}`));
    const value = a?.getService(hap.Service.LockMechanism)?.getCharacteristic(hap.Characteristic.LockCurrentState).value;
    if (Number(value) !== want.state) stats.wrongLock += 1;
  }
  for (const [lockId, want] of newestDoor) {
    const a = accessories.get(hap.uuid.generate(`lock:${lockId}`));
    const value = a?.getService(hap.Service.ContactSensor)?.getCharacteristic(hap.Characteristic.ContactSensorState).value;
    if (Number(value) !== want.state) stats.wrongDoor += 1;
  }
}
stats.rings = rings;
try {
  const tokens = JSON.parse(await readFile(join(storage, 'lock-access', 'tokens.json'), 'utf8')) as { refreshToken?: string };
  stats.tokenState = tokens.refreshToken ? sim.refreshTokenState(tokens.refreshToken) : 'none stored';
} catch (error) {
  stats.tokenState = `unreadable (${error instanceof Error ? error.message : String(error)})`;
}
stats.linkProblems = logLines.filter((l) => /link your (Lock Access )?account again/i.test(l.text)).length;
stats.grants = sim.stats.grants;
stats.apiCalls = sim.stats.apiCalls;
stats.keepAliveDays = sim.stats.byRoute['GET /users/me'] ?? 0;
await shutdown();
stats.unhandled = unhandled;
stats.uncaught = uncaught;
await sim.close();
clock.uninstall();
stats.realSeconds = Math.round((performance.now() - realStart) / 1000);
await rm(storage, { recursive: true, force: true, maxRetries: 5 }).catch(() => undefined);
process.stdout.write(`FAKE_CLOCK_RESULT ${JSON.stringify({ ...stats, warnings: logLines.filter((l) => l.level === 'warn' || l.level === 'error').slice(-20).map((l) => l.text) })}\n`);
process.exit(0);
