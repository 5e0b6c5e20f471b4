// Part 6a: real-time soak. Homebridge with the plugin, a paired controller and the simulator run
// for BENCH_SOAK_MINUTES (10 by default) while callbacks flow (doorbell presses, lock and door
// changes, duplicates, reordered deliveries; on a few locks of their own, the state patterns of
// bench/lib/state-episodes.ts: flapping bridges and batteries, lock clocks reset or jumped ahead;
// and a signature clock a little off), the API and token endpoint inject faults, access
// tokens are issued for 4 minutes (each API answer extends them by a second, so whether a refresh
// grant comes due depends on how many calls the plugin makes), and Homebridge is restarted once
// (the listener goes away mid-stream; the simulator retries per the spec's schedule).
// At the end: every event delivered, applied once (rings counted), final states right, no
// unhandled rejection, the refresh token still usable, and RSS flat.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { startHomebridge } from '../../test/harness/homebridge.js';
import type { Simulator } from '../../test/sim/index.js';
import { doorbellButtonPush, doorState, manualOperation } from '../../test/sim/payloads.js';
import type { BenchEnv, Subject } from '../lib/env.js';
import { connectBridge, HAP_TYPE, refOf, type AccessoryIndex, type PairedBridge } from '../lib/hap-client.js';
import { StateEpisodes } from '../lib/state-episodes.js';
import { SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { median, round } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';

type FinalOutcome = 'delivered' | 'rejected' | 'exhausted' | 'cancelled';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let lastStamp = 0;
function stamp(): number {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return lastStamp;
}

interface Observed {
  rings: number;
  subscriptions: { close(): Promise<void> }[];
}

async function observe(bridge: PairedBridge, subject: Subject, observed: Observed): Promise<void> {
  const pse = new Set(subject.fleet.doorbells.map((b) => refOf(bridge.index, b.name, HAP_TYPE.programmableSwitchEvent).id));
  observed.subscriptions.push(
    await bridge.subscribe([...pse], (event) => {
      if (pse.has(`${event.aid}.${event.iid}`)) observed.rings += 1;
    }),
  );
}

const NO_RESPONSE = -70402;
const BATTERY_LEVEL_TYPE = '68';

/**
 * The episode locks at the end: reads fail exactly for those left offline; then, with every one of
 * them back online, each shows its last lock state and battery level. An offline accessory does not
 * even tell its name, so lock states are read by the references of the first connection (stable
 * across restarts); a fresh connection finds the BatteryLevels, which appear with the first report.
 */
async function checkEpisodes(subject: Subject, startIndex: AccessoryIndex, bridge: PairedBridge, episodes: StateEpisodes): Promise<{ wrongLock: number; wrongReachability: number; wrongBattery: number }> {
  const nameOf = (id: string) => subject.fleet.locks.find((l) => l.id === id)?.name ?? id;
  const result = { wrongLock: 0, wrongReachability: 0, wrongBattery: 0 };
  const read = async (client: PairedBridge, index: AccessoryIndex, ids: string[], type: string) => {
    const reader = client.client();
    try {
      const refs = ids.map((id) => refOf(index, nameOf(id), type).id);
      const values = (await reader.getCharacteristics(refs)) as { characteristics: { aid: number; iid: number; value?: unknown; status?: number }[] };
      const byRef = new Map(values.characteristics.map((c) => [`${c.aid}.${c.iid}`, c]));
      return refs.map((ref) => byRef.get(ref));
    } finally {
      await reader.close();
    }
  };
  const reach = [...episodes.expected.online];
  const reads = await read(bridge, startIndex, reach.map(([id]) => id), HAP_TYPE.lockCurrentState);
  for (const [i, [, online]] of reach.entries()) {
    const failed = reads[i]?.status === NO_RESPONSE;
    if (failed === online) result.wrongReachability += 1;
  }
  await episodes.allOnline();
  await sleep(1500);
  const locks = [...episodes.expected.lock];
  const lockValues = await read(bridge, startIndex, locks.map(([id]) => id), HAP_TYPE.lockCurrentState);
  for (const [i, [, want]] of locks.entries()) if (Number(lockValues[i]?.value) !== want) result.wrongLock += 1;
  const fresh = await connectBridge(subject.hb.username, subject.hb.bridgePort, bridge.pairing);
  try {
    const batteries = [...episodes.expected.batteryLevel];
    const levels = await read(fresh, fresh.index, batteries.map(([id]) => id), BATTERY_LEVEL_TYPE);
    for (const [i, [, want]] of batteries.entries()) if (Number(levels[i]?.value) !== want) result.wrongBattery += 1;
  } finally {
    await fresh.close();
  }
  return result;
}

export async function runSoak(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const durationMs = options.soakMinutes * 60_000;
  const sim: Simulator = await env.sim();
  const subject = await env.ours();
  const notes: string[] = [];
  const f = subject.fleet;
  // The last four locks are the state episodes' own: their deliveries go one after the other.
  const changeLocks = f.locks.slice(0, -4);
  const startIndex = subject.bridge.index;
  const stats = {
    presses: 0, pressDuplicates: 0, lockEvents: 0, doorEvents: 0, duplicates: 0, reordered: 0,
    deliveries: 0, delivered: 0, rejected: 0, exhausted: 0, cancelled: 0,
    faults: { fail5xx: 0, rateLimit429: 0, dropped: 0 }, restarts: 0, grantsBefore: sim.stats.grants,
  };
  const newestLock = new Map<string, { at: number; state: 0 | 1 }>();
  const newestDoor = new Map<string, { at: number; state: 0 | 1 }>();
  const outcomes: Promise<FinalOutcome>[] = [];
  const observed: Observed = { rings: 0, subscriptions: [] };
  let expectedRings = 0;
  let pressesPaused = false;
  let bridge = subject.bridge;
  await observe(bridge, subject, observed);

  const count = (results: Awaited<ReturnType<Simulator['send']>>): void => {
    for (const r of results) {
      stats.deliveries += 1;
      outcomes.push(r.done);
      void r.done.then((o) => {
        stats[o] += 1;
      });
    }
  };
  const track = async (payload: object, target: { lockId?: string; doorbellId?: string }): Promise<void> => {
    count(await sim.send(payload, target));
    // Wait for the first attempt's outcome only; retries are tracked through `done`.
  };
  // Episodes wait for each delivery to be final (retries included), so nothing overtakes.
  const episodes = new StateEpisodes(sim, f.locks.slice(-4).map((l) => l.id), async (name, fireOptions) => {
    const results = await sim.fire(name, fireOptions);
    count(results);
    await Promise.all(results.map((r) => r.done));
  });

  const actions = new Set<Promise<void>>();
  const act = (fn: () => Promise<void>) => {
    const p = fn().catch((error: unknown) => {
      notes.push(`generator error: ${error instanceof Error ? error.message : String(error)}`);
    });
    actions.add(p);
    void p.finally(() => actions.delete(p));
  };

  const press = () => {
    const bell = f.doorbells[Math.floor(Math.random() * f.doorbells.length)];
    if (!bell || pressesPaused) return;
    act(async () => {
      const payload = doorbellButtonPush({ doorbellId: bell.id, dvrId: randomUUID() });
      stats.presses += 1;
      expectedRings += 1;
      await track(payload, { doorbellId: bell.id });
      if (Math.random() < 0.15) {
        // The same body again: dedupe must keep the phone from ringing twice.
        stats.pressDuplicates += 1;
        stats.duplicates += 1;
        await track(payload, { doorbellId: bell.id });
      }
    });
  };

  const change = (aspect: 'lock' | 'door') => {
    const lock = changeLocks[Math.floor(Math.random() * changeLocks.length)];
    if (!lock) return;
    const newest = aspect === 'lock' ? newestLock : newestDoor;
    const state: 0 | 1 = newest.get(lock.id)?.state === 1 ? 0 : 1;
    const at = stamp();
    newest.set(lock.id, { at, state });
    const payload = aspect === 'lock'
      ? manualOperation({ lockId: lock.id, event: state === 1 ? 'lock' : 'unlock', at, eventId: randomUUID() })
      : doorState({ lockId: lock.id, state: state === 1 ? 'open' : 'closed', at, eventId: randomUUID() });
    if (aspect === 'lock') stats.lockEvents += 1;
    else stats.doorEvents += 1;
    const simLock = sim.lock(lock.id);
    if (simLock && aspect === 'lock') simLock.lockState = state === 1 ? 'locked' : 'unlocked';
    if (simLock && aspect === 'door') simLock.doorState = state === 1 ? 'open' : 'closed';
    act(async () => {
      await track(payload, { lockId: lock.id });
      const roll = Math.random();
      if (roll < 0.1) {
        stats.duplicates += 1;
        await track(payload, { lockId: lock.id });
      } else if (roll < 0.2) {
        // An older event of the opposite state arriving late must change nothing.
        stats.reordered += 1;
        const old = at - 5_000;
        const stale = aspect === 'lock'
          ? manualOperation({ lockId: lock.id, event: state === 1 ? 'unlock' : 'lock', at: old, eventId: randomUUID() })
          : doorState({ lockId: lock.id, state: state === 1 ? 'closed' : 'open', at: old, eventId: randomUUID() });
        await track(stale, { lockId: lock.id });
      }
    });
  };

  const injectFault = (n: number) => {
    switch (n % 3) {
      case 0:
        sim.faults.failNext(2, 503);
        stats.faults.fail5xx += 2;
        break;
      case 1:
        sim.faults.rateLimitNext(1, 2);
        stats.faults.rateLimit429 += 1;
        break;
      default:
        // On an API call: a dropped answer to a refresh grant is a lost rotation, which no client can
        // recover from (single-use refresh tokens); the token tests cover the plugin's answer to it.
        sim.faults.dropNext(1, '/users/me');
        stats.faults.dropped += 1;
    }
  };

  const memory: { minute: number; mib: number }[] = [];
  let unexpectedExit = false;
  const restartAt = Math.min(durationMs * 0.15, 90_000);
  const phase = { restarted: false };
  const soakStart = performance.now();
  let nextMemory = soakStart + 30_000;
  let nextFault = soakStart + 20_000;
  let nextEpisode = soakStart + 5_000;
  let nextSkew = soakStart + 45_000;
  let faultNo = 0;
  const restart = async () => {
    phase.restarted = true;
    pressesPaused = true;
    await sleep(1500);
    await Promise.allSettled(observed.subscriptions.map((s) => s.close()));
    observed.subscriptions = [];
    await bridge.close();
    if (!subject.hb.running) unexpectedExit = true;
    const storagePath = subject.hb.storagePath;
    const oldHb = subject.hb;
    await oldHb.stop();
    options.log('soak: Homebridge stopped; callbacks keep coming and fail until it is back');
    await sleep(3000);
    const config = JSON.parse(await readFile(join(storagePath, 'config.json'), 'utf8')) as { platforms: Record<string, unknown>[] };
    const hb = await startHomebridge({ platforms: config.platforms, storagePath, bridgePort: oldHb.bridgePort, username: oldHb.username, pin: oldHb.pin, env: SETTLE_ENV });
    await hb.waitForLog(/is running on port/, 180_000);
    subject.hb = hb;
    subject.pid = hb.child.pid ?? 0;
    // The restarted bridge publishes the cached accessories first; the camera doorbells' services
    // appear once the plugin has configured them, so wait for the full database.
    for (let tries = 0; ; tries += 1) {
      bridge = await connectBridge(hb.username, hb.bridgePort, subject.bridge.pairing);
      const complete = subject.fleet.doorbells.every((b) => bridge.index.byName.get(b.name)?.has(HAP_TYPE.programmableSwitchEvent));
      if (complete || tries >= 30) break;
      await bridge.close();
      await sleep(1000);
    }
    subject.bridge = bridge;
    await observe(bridge, subject, observed);
    stats.restarts += 1;
    pressesPaused = false;
    options.log('soak: Homebridge is back; controller reconnected with its pairing');
  };

  options.log(`soak: ${options.soakMinutes} min of callbacks with faults, one Homebridge restart`);
  while (performance.now() - soakStart < durationMs) {
    const now = performance.now();
    if (!phase.restarted && now - soakStart >= restartAt) {
      // Events keep flowing (in the background) while Homebridge restarts.
      const restarting = restart();
      while (!(await Promise.race([restarting.then(() => true), sleep(200).then(() => false)]))) {
        change(Math.random() < 0.5 ? 'lock' : 'door');
      }
      continue;
    }
    if (now >= nextFault) {
      injectFault(faultNo);
      faultNo += 1;
      nextFault = now + 20_000;
    }
    if (now >= nextEpisode && !episodes.busy) {
      act(async () => {
        await episodes.runOne();
      });
      nextEpisode = now + 10_000;
    }
    if (now >= nextSkew) {
      episodes.shiftSignatureClock();
      nextSkew = now + 45_000;
    }
    if (now >= nextMemory && phase.restarted) {
      nextMemory = now + 30_000;
      const pid = subject.pid;
      // After a memory-pressure collection, as in the memory part: a full collection alone leaves
      // whatever young generation V8 has grown meanwhile, which moves by tens of MiB.
      void settledRssMiB(pid, { waitMs: 0, samples: 1, pressure: true }).then((m) => memory.push({ minute: round((performance.now() - soakStart) / 60_000, 1), mib: m.mib })).catch(() => undefined);
    }
    const roll = Math.random();
    if (roll < 0.3) press();
    else if (roll < 0.65) change('lock');
    else change('door');
    await sleep(200);
  }
  options.log('soak: generator stopped; waiting for every delivery (retries included) to finish');
  while (actions.size > 0) await Promise.allSettled([...actions]);
  sim.faults.signatureSkewMs = 0;
  const finals = await Promise.race([Promise.all(outcomes), sleep(150_000).then(() => undefined)]);
  const stillRetrying = finals ? 0 : stats.deliveries - stats.delivered - stats.rejected - stats.exhausted - stats.cancelled;
  if (stillRetrying > 0) notes.push(`${stillRetrying} deliveries were still in the spec's retry schedule 150 s after the soak ended; they count as not (yet) delivered.`);
  await sleep(1500);
  if (!subject.hb.running) unexpectedExit = true;

  // Final states against the newest event sent per lock and aspect.
  const reader = bridge.client();
  let wrongLock = 0;
  let wrongDoor = 0;
  const check = async (newest: Map<string, { state: 0 | 1 }>, type: string): Promise<number> => {
    let wrong = 0;
    const entries = [...newest.entries()];
    const refs = entries.map(([id]) => refOf(bridge.index, f.locks.find((l) => l.id === id)?.name ?? id, type).id);
    const values = await reader.getCharacteristics(refs);
    for (const [i, [, want]] of entries.entries()) {
      const got = values.characteristics[i]?.value;
      if (Number(got) !== want.state) wrong += 1;
    }
    return wrong;
  };
  wrongLock = await check(newestLock, HAP_TYPE.lockCurrentState);
  wrongDoor = await check(newestDoor, HAP_TYPE.contactSensorState);
  await reader.close();
  const episodeCheck = await checkEpisodes(subject, startIndex, bridge, episodes);
  wrongLock += episodeCheck.wrongLock;
  await Promise.allSettled(observed.subscriptions.map((s) => s.close()));

  // Token: the stored refresh token must still be one the service would accept.
  let tokenState = 'unknown';
  try {
    const tokens = JSON.parse(await readFile(join(subject.hb.storagePath, 'lock-access', 'tokens.json'), 'utf8')) as { refreshToken?: string };
    tokenState = tokens.refreshToken ? sim.refreshTokenState(tokens.refreshToken) : 'none stored';
  } catch (error) {
    tokenState = `unreadable (${error instanceof Error ? error.message : String(error)})`;
  }
  const logs = subject.hb.logs;
  const unhandled = logs.filter((l) => /unhandled|uncaught/i.test(l)).length;
  const reauth = logs.filter((l) => /link your (Lock Access )?account again/i.test(l)).length;
  const grants = sim.stats.grants - stats.grantsBefore;
  const lost = stats.deliveries - stats.delivered;
  const extraRings = observed.rings - expectedRings;
  const memFirst = memory[0]?.mib ?? Number.NaN;
  const memLast = memory.at(-1)?.mib ?? Number.NaN;
  const memMax = Math.max(...memory.map((m) => m.mib));
  // Growth = median of the last third of the samples minus median of the first third, leaving out
  // the first minute after the restart (warm-up). A single sample can land on a moment of
  // transient allocation (a file being serialised), which a median does not take for growth.
  const warm = memory.filter((m) => m.minute >= (memory[0]?.minute ?? 0) + 1);
  const third = Math.max(1, Math.floor(warm.length / 3));
  const earlyMiB = median(warm.slice(0, third).map((m) => m.mib));
  const lateMiB = median(warm.slice(-third).map((m) => m.mib));
  const growth = round(lateMiB - earlyMiB, 1);
  options.log(`soak: ${stats.deliveries} deliveries, ${stats.delivered} delivered, rings ${observed.rings}/${expectedRings}, wrong lock ${wrongLock}, wrong door ${wrongDoor}, wrong reachability ${episodeCheck.wrongReachability}, wrong battery ${episodeCheck.wrongBattery}, grants ${grants}, token ${tokenState}, RSS ${memFirst} -> ${memLast} MiB`);
  const goals = [
    goal('soak: no event lost', '0', `${lost} of ${stats.deliveries} deliveries not delivered`, lost === 0),
    goal('soak: no event applied twice', 'rings = presses', `${observed.rings} rings for ${expectedRings} presses (${stats.pressDuplicates} duplicate bodies sent)`, extraRings === 0),
    goal('soak: final lock and door states follow the newest event', '0 wrong', `${wrongLock} locks, ${wrongDoor} doors wrong`, wrongLock === 0 && wrongDoor === 0),
    goal('soak: state reports and drifted lock clocks end right', '0 wrong', `${episodeCheck.wrongReachability} reachability, ${episodeCheck.wrongBattery} batteries wrong (${episodes.counts.bridgeFlap} bridge and ${episodes.counts.batteryFlap} battery flaps, ${episodes.counts.clockReset} clock resets, ${episodes.counts.clockJump} clock jumps)`, episodeCheck.wrongReachability === 0 && episodeCheck.wrongBattery === 0),
    goal('soak: no unhandled rejection or crash', '0', `${unhandled} log lines, ${unexpectedExit ? 'unexpected exit' : 'no unexpected exit'}`, unhandled === 0 && !unexpectedExit),
    goal('soak: no token lost', 'refresh token still valid, no re-link request', `stored refresh token ${tokenState}; ${reauth} re-link messages`, tokenState === 'issued' && reauth === 0),
  ];
  // A short soak has too few samples after warm-up to say anything about growth.
  if (warm.length >= 3) {
    goals.push(goal('soak: memory flat', '< 10 MiB growth after warm-up', `${fmt(earlyMiB)} -> ${fmt(lateMiB)} MiB (medians of the first and last third; samples ${fmt(memFirst)} to ${fmt(memLast)}, max ${fmt(memMax)})`, Number.isFinite(growth) && growth < 10));
  } else {
    notes.push(`Memory: ${String(memory.length)} sample(s), too few after warm-up to judge growth; run at least 3 minutes for that.`);
  }
  return {
    part: 'soak',
    title: `Soak, ${options.soakMinutes} min real time`,
    figures: { minutes: options.soakMinutes, ...stats, episodes: episodes.counts, wrongReachability: episodeCheck.wrongReachability, wrongBattery: episodeCheck.wrongBattery, rings: observed.rings, expectedRings, wrongLock, wrongDoor, grants, tokenState, reauthMessages: reauth, unhandled, unexpectedExit, memory },
    table: {
      header: ['measure', 'count'],
      rows: [
        ['callbacks sent (presses / lock / door)', `${stats.presses} / ${stats.lockEvents} / ${stats.doorEvents}`],
        ['duplicates sent / reordered (older) sent', `${stats.duplicates} / ${stats.reordered}`],
        ['deliveries: delivered / rejected / exhausted / cancelled', `${stats.delivered} / ${stats.rejected} / ${stats.exhausted} / ${stats.cancelled} of ${stats.deliveries}`],
        ['HomeKit rings seen / presses sent', `${observed.rings} / ${expectedRings}`],
        ['wrong final lock / door states', `${wrongLock} / ${wrongDoor}`],
        ['state episodes: bridge flaps / battery flaps / lock clocks reset / jumped ahead; signature clock moves', `${episodes.counts.bridgeFlap} / ${episodes.counts.batteryFlap} / ${episodes.counts.clockReset} / ${episodes.counts.clockJump}; ${episodes.counts.skewChanges}`],
        ['wrong final reachability / battery (episode locks)', `${episodeCheck.wrongReachability} / ${episodeCheck.wrongBattery}`],
        ['faults injected (5xx / 429 / dropped connections)', `${stats.faults.fail5xx} / ${stats.faults.rateLimit429} / ${stats.faults.dropped}`],
        ['Homebridge restarts (listener gone mid-stream)', String(stats.restarts)],
        ['refresh grants (4-minute access tokens, extended a second per API answer)', String(grants)],
        ['stored refresh token at the end', tokenState],
        ['unhandled rejections / crashes', `${unhandled} / ${unexpectedExit ? 1 : 0}`],
        ['RSS after restart, after a memory-pressure collection: first / last / max sample (MiB)', `${fmt(memFirst)} / ${fmt(memLast)} / ${fmt(memMax)}`],
      ],
    },
    goals,
    notes: [
      'About 5 callbacks per second through the simulator\'s delivery engine (signed, with the registered header, retried on the spec\'s 30 s / 60 s / ... schedule). 15 % of presses and 10 % of lock/door events are sent twice; another 10 % are followed by an older event of the opposite state.',
      'Every 10 s a state episode runs on one of four locks of its own, its deliveries one after the other: the bridge offline and online a few times, the battery low and fine a few times (the same bodies again and again), the lock clock reset to 2000 (lock_log_timestamp_drifted, then operations stamped in 2000), or jumped a year ahead. Every 45 s the signature clock moves to 0 to 30 s behind. At the end, the episode locks must show the last reachability (reads fail while offline), battery and lock state.',
      'Faults every 20 s rotate among two 503s and one 429 with Retry-After on whatever API or token call comes next, and one dropped connection on the next GET /users/me (a dropped refresh-grant answer is a lost rotation, covered by the token tests). Presses pause around the restart because the controller is reconnecting; lock and door events do not.',
      ...notes,
    ],
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
