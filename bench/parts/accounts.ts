// Part `accounts`: several accounts behind one listener (design 7h). One Homebridge with three
// accounts of 40 devices each (the main account and two extra ones, 34 locks and 6 doorbells
// each), behind a simulator that answers every API call after 50 ms:
//   - start-up: from launching Homebridge until all 120 devices are registered (goal < 3 s);
//   - throughput: signed callbacks per second on an extra account's path (`/a/X/lock/:id`, its own
//     key and header secret) against the main path (`/lock/:id`) in the same process, interleaved
//     rounds (goal: within 5 %).
import { startHomebridge, freePort } from '../../test/harness/homebridge.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { simAccountEntry } from '../../test/sim/plugin-config.js';
import { testFfmpeg } from '../../test/video/ffmpeg-binary.js';
import { oursPlatform, pluginOverride, waitForRegistrations } from '../lib/env.js';
import { cpuMs } from '../lib/cpu.js';
import type { Fleet } from '../lib/fleet.js';
import type { Target } from '../lib/post.js';
import { SETTLE_ENV } from '../lib/rss.js';
import { round } from '../lib/stats.js';
import { fmt, goal, type Goal, type PartResult, type RunOptions } from '../lib/types.js';
import { load, type Load } from './throughput.js';

const LATENCY_MS = 50;
const EXTRA = ['cabin', 'parents'] as const;
const LOCKS_EACH = 34;
const DOORBELLS_EACH = 6;

/** One account's 40 devices, with ids of their own. */
function accountFleet(prefix: string): Fleet {
  const pad = (i: number) => String(i + 1).padStart(2, '0');
  return {
    locks: Array.from({ length: LOCKS_EACH }, (_, i) => ({ id: `${prefix}-LOCK-${pad(i)}`, name: `${prefix} Lock ${pad(i)}` })),
    doorbells: Array.from({ length: DOORBELLS_EACH }, (_, i) => ({ id: `${prefix}-BELL-${pad(i)}`, name: `${prefix} Doorbell ${pad(i)}` })),
  };
}

/** The signed callback target of a lock, on the path and with the key of the account that registered it. */
function lockTarget(sim: Simulator, id: string): Target {
  const reg = sim.registrations().find((r) => r.kind === 'lock' && r.scope === id);
  if (!reg) throw new Error(`no lock registration for ${id}`);
  return { url: reg.url, apiKey: sim.accountOf(reg.account).apiKey, header: { name: reg.header, value: reg.token } };
}

export async function runAccounts(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const fleets = new Map<string, Fleet>([['main', accountFleet('MAIN')], ...EXTRA.map((id): [string, Fleet] => [id, accountFleet(id.toUpperCase())])]);
  const sim = await startSimulator({ port: 0, latencyMs: LATENCY_MS, accounts: EXTRA.map((id) => ({ id, name: `${id.charAt(0).toUpperCase()}${id.slice(1)}` })) });
  for (const [account, f] of fleets) {
    for (const lock of f.locks) sim.addLock({ id: lock.id, name: lock.name, doorSensor: true, accounts: [account] });
    for (const bell of f.doorbells) sim.addDoorbell({ id: bell.id, name: bell.name, accounts: [account] });
  }
  const all: Fleet = { locks: [...fleets.values()].flatMap((f) => f.locks), doorbells: [...fleets.values()].flatMap((f) => f.doorbells) };
  const main = fleets.get('main') ?? accountFleet('MAIN');
  const port = await freePort();
  // Defaults a user gets (discovery, the start-up status refresh), doorbell video with ffmpeg, as the startup part.
  const entries = EXTRA.map((id) => {
    const f = fleets.get(id) ?? accountFleet(id);
    return simAccountEntry(sim, id, { locks: f.locks.map((l) => ({ ...l, doorSensor: true })), doorbells: f.doorbells.map((d) => ({ ...d, motionTimeoutSeconds: 1 })) });
  });
  const platform = oursPlatform(sim, port, main, { discoverDevices: true, refreshStateOnStart: true, people: [], video: { ffmpegPath: testFfmpeg() }, accounts: entries });
  const spawnedAt = performance.now();
  const hb = await startHomebridge({ platforms: [platform], env: SETTLE_ENV, ...pluginOverride() });
  try {
    const bridgeUpAt = await hb.waitForLog(/is running on port/, 180_000).then(() => performance.now());
    const registeredAt = await waitForRegistrations(sim, all, 180_000, 2);
    const startup = round((registeredAt - spawnedAt) / 1000, 2);
    const bridgeSeconds = round((bridgeUpAt - spawnedAt) / 1000, 2);
    const callsAtRegistered = sim.stats.apiCalls;
    const cpuSeconds = round(cpuMs(hb.child.pid ?? 0) / 1000, 2);
    options.log(`accounts: 3 accounts of 40 devices registered ${startup} s after launch (bridge up at ${bridgeSeconds} s, ${cpuSeconds} s of CPU by then), ${callsAtRegistered} API calls by then`);

    const pid = hb.child.pid;
    if (pid === undefined) throw new Error('Homebridge has no pid');
    const seconds = options.quick ? 3 : 6;
    const rounds = options.quick ? 1 : 3;
    const connections = 10;
    const extra = EXTRA[0];
    const mainIds = main.locks.map((l) => l.id);
    const extraIds = (fleets.get(extra) ?? main).locks.map((l) => l.id);
    const mainSide = { label: 'main path /lock/:id', ids: mainIds, targets: mainIds.map((id) => lockTarget(sim, id)) };
    const extraSide = { label: `extra account's path /a/${extra}/lock/:id`, ids: extraIds, targets: extraIds.map((id) => lockTarget(sim, id)) };
    const sides = [mainSide, extraSide];
    if (!extraSide.targets.every((t) => t.url.includes(`/a/${extra}/lock/`))) throw new Error(`the ${extra} account's locks are not registered on its path`);
    const loads = new Map<string, Load[]>(sides.map((s) => [s.label, []]));
    for (const side of sides) await load('warm-up', side.targets, side.ids, 1, connections);
    for (let r = 0; r < rounds; r += 1) {
      // Alternating which side goes first, so neither always runs in the same spell of the machine.
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) loads.get(side.label)?.push(await load(side.label, side.targets, side.ids, seconds, connections, pid));
    }
    const median = (label: string): Load | undefined => {
      const all = [...(loads.get(label) ?? [])].sort((a, b) => a.perSecond - b.perSecond);
      return all[Math.floor(all.length / 2)];
    };
        const mainLoad = median(mainSide.label);
    const extraLoad = median(extraSide.label);
    const rate = mainLoad && extraLoad && mainLoad.perSecond > 0 ? round(extraLoad.perSecond / mainLoad.perSecond, 3) : Number.NaN;
    const cpu = mainLoad?.cpuMicrosPerRequest !== undefined && extraLoad?.cpuMicrosPerRequest !== undefined ? round(mainLoad.cpuMicrosPerRequest / extraLoad.cpuMicrosPerRequest, 3) : Number.NaN;
    for (const l of [mainLoad, extraLoad]) if (l) options.log(`accounts throughput ${l.label}: ${l.perSecond}/s, ${l.cpuMicrosPerRequest ?? '?'} µs CPU each (non-2xx ${l.non2xx}, errors ${l.errors})`);
    const failed = (mainLoad?.non2xx ?? 1) + (extraLoad?.non2xx ?? 1);
    const goals: Goal[] = [
      goal('3 accounts of 40 devices: launch until all 120 are registered (50 ms per API call)', '< 3 s', `${fmt(startup, 2)} s`, startup < 3),
      goal(`callbacks per second on an extra account's path vs the main path (same process)`, '>= 0.95x', `${fmt(rate, 2)}x (${extraLoad?.perSecond ?? 'n/a'} vs ${mainLoad?.perSecond ?? 'n/a'}/s; CPU per callback ${extraLoad?.cpuMicrosPerRequest ?? '?'} vs ${mainLoad?.cpuMicrosPerRequest ?? '?'} µs, ${fmt(cpu, 2)}x)`, rate >= 0.95 && failed === 0),
    ];
    const row = (l: Load | undefined): string[] => (l === undefined ? ['n/a', 'n/a', 'n/a', 'n/a', 'n/a'] : [l.label, String(l.perSecond), l.cpuMicrosPerRequest === undefined ? 'n/a' : String(l.cpuMicrosPerRequest), `${l.non2xx} / ${l.errors}`, `${l.latencyP50} / ${l.latencyP99}`]);
    return {
      part: 'accounts',
      title: 'Several accounts: start-up with 3 accounts of 40 devices, and callbacks on an extra account\'s path',
      figures: {
        latencyMs: LATENCY_MS,
        accounts: 3,
        devicesPerAccount: LOCKS_EACH + DOORBELLS_EACH,
        secondsToRegistered: startup,
        secondsToBridgeUp: bridgeSeconds,
        cpuSecondsWhenRegistered: cpuSeconds,
        apiCallsWhenRegistered: callsAtRegistered,
        registrations: sim.registrations().length,
        throughput: { seconds, rounds, connections, main: mainLoad ?? null, extra: extraLoad ?? null, rateRatio: rate, cpuRatio: cpu, allRounds: Object.fromEntries(loads) },
      },
      table: {
        header: ['callbacks on', 'answered 2xx per second', 'server CPU per callback (µs)', 'non-2xx / errors', 'latency p50 / p99 ms'],
        rows: [row(mainLoad), row(extraLoad), ['start-up: launch until 120 devices of 3 accounts are registered', `${fmt(startup, 2)} s (bridge up at ${fmt(bridgeSeconds, 2)} s, ${fmt(cpuSeconds, 2)} s of CPU, ${callsAtRegistered} API calls)`, '', '', '']],
      },
      goals,
      notes: [
        `One Homebridge with three accounts on the simulator (main, ${EXTRA.join(', ')}), each with its own user, API key, OAuth client and ${LOCKS_EACH} locks (door sensors) and ${DOORBELLS_EACH} doorbells of its own; discovery and the start-up status refresh on, doorbell video with ffmpeg, ${LATENCY_MS} ms per API call. Start-up is measured from spawning Homebridge until the simulator holds all 120 device registrations.`,
        `Throughput: autocannon in the benchmark process, ${connections} connections, ${rounds} interleaved round(s) of ${seconds} s per path after a 1 s warm-up, the median round shown (all rounds: ${sides.map((s) => `${s.label} ${(loads.get(s.label) ?? []).map((l) => l.perSecond).join(' / ')}`).join('; ')}); each request a distinct manual lock/unlock callback over the account's 34 locks, signed with that account's key and carrying its header secret.`,
      ],
      seconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    await hb.stop();
    await hb.cleanup();
    await sim.close();
  }
}
