// Part 4: Homebridge's RSS with this plugin serving 100 locks and 20 doorbells, against Homebridge
// with no plugin and against a bare plugin with the same 120 accessories. The goal compares like
// with like: this plugin as configured by default (no person triggers) against the bare plugin on
// the same parts (a Fastify raw-body listener and zod/v3 payload schemas, the throughput part's
// baseline), as `ps` shows it a few seconds after the last registration, as the median of several
// runs: in each run a fresh process of each is started side by side, each on a simulator of its
// own. Each process is also read after a full collection and after the collection V8 makes under
// memory pressure. Each run has a second pair, not a goal: this plugin beside the bare plugin with
// this plugin's camera surface (Secure Video), which tells what HAP holds for that surface from what
// the plugin holds. The bare plugin on node:http (no Fastify, no zod) and this plugin with a person
// trigger on every lock are read once and shown beside it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startHomebridge, type RunningHomebridge } from '../../test/harness/homebridge.js';
import { addFleetToSim, startBare, startOurs, type BenchEnv, type Subject } from '../lib/env.js';
import { heapSnapshot } from '../lib/heap-snapshot.js';
import { HEAP_DIR, rssKiB, SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { median, round } from '../lib/stats.js';
import { firstLine, fmt, type Goal, goal, type PartResult, type RunOptions } from '../lib/types.js';

interface Reading {
  /** As `ps` shows it a few seconds after the registrations were done (and the controller paired), no collection asked for. */
  ps?: number;
  /** After full collections (SIGUSR2). */
  settled: number;
  /** After a memory-pressure collection (SIGWINCH), which also returns V8's pooled pages. */
  pressure: number;
  /** JavaScript heap in use after it, as the process tells it (SIGTTOU); the rest of the RSS is code pages, malloc and V8's free pages. */
  heapUsed?: number;
}

/** How long after the last registration (or Homebridge's start) the process is read as `ps` shows it. */
const PS_AFTER_MS = 5_000;

/** RSS as `ps` shows it, `PS_AFTER_MS` after `since` (performance.now()), without asking for a collection. */
async function psReading(pid: number, since: number): Promise<number> {
  const wait = since + PS_AFTER_MS - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  return round((await rssKiB(pid)) / 1024, 1);
}

async function read(pid: number, hb?: RunningHomebridge, readyAt?: number): Promise<Reading> {
  const ps = readyAt === undefined ? undefined : await psReading(pid, readyAt);
  const settled = (await settledRssMiB(pid)).mib;
  const pressure = (await settledRssMiB(pid, { waitMs: 500, pressure: true })).mib;
  if (hb === undefined) return { ...(ps === undefined ? {} : { ps }), settled, pressure };
  const told = hb.waitForLog(/bench-memory \{/, 10_000);
  process.kill(pid, 'SIGTTOU');
  const line = await told;
  const usage = JSON.parse(line.slice(line.indexOf('{'))) as { heapUsed: number };
  return { ...(ps === undefined ? {} : { ps }), settled, pressure, heapUsed: round(usage.heapUsed / 1024 / 1024, 1) };
}

export async function runMemory(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const notes: string[] = [];
  const emptyPlugins = await mkdtemp(join(tmpdir(), 'bench-no-plugins-'));
  const none = await startHomebridge({ platforms: [], pluginPath: emptyPlugins, env: SETTLE_ENV });
  let noneMiB: Reading;
  try {
    await none.waitForLog(/is running on port/, 60_000);
    const runningAt = performance.now();
    const pid = none.child.pid;
    if (pid === undefined) throw new Error('no pid');
    noneMiB = await read(pid, none, runningAt);
  } finally {
    await none.stop();
    await none.cleanup();
    await rm(emptyPlugins, { recursive: true, force: true });
  }
  options.log(`memory: Homebridge with no plugin ${noneMiB.settled} MiB (${noneMiB.pressure} under pressure)`);
  const bare = await env.bare();
  const bareMiB = await read(bare.pid, bare.hb);
  options.log(`memory: bare plugin ${bareMiB.settled} MiB (${bareMiB.pressure} under pressure)`);
  const runs = Number(process.env.BENCH_MEMORY_RUNS ?? (options.quick ? 1 : 5));
  // Not a goal, read in runs of the same shape (two processes side by side): this plugin against the
  // bare plugin with this plugin's camera surface (Secure Video included, no video behind it), to
  // tell what HAP holds for that surface from what the plugin holds. Three side by side would load
  // the machine more than the goal's runs, and the load moves the `ps` figure.
  const pairs: { ours: Reading; same: Reading }[] = [];
  const cameraPairs: { ours: Reading; camera: Reading }[] = [];
  for (let i = 0; i < runs; i += 1) {
    try {
      // Side by side: both load the machine alike, and the run takes half the time.
      const [ours, same] = await Promise.all([
        readOnOwnSimulator(env, (sim) => startOurs(sim, env.fleet, { people: [] }), i === 0 ? 'ours' : undefined),
        readOnOwnSimulator(env, (sim) => startBare(env.fleet, { sim, listener: 'fastify', checks: true }), i === 0 ? 'bare-same-parts' : undefined),
      ]);
      pairs.push({ ours, same });
      options.log(`memory run ${i + 1}/${runs}: this plugin ${fmt(ours.ps ?? Number.NaN)} as ps shows it, ${ours.settled} / ${ours.pressure} MiB; bare plugin on the same parts ${fmt(same.ps ?? Number.NaN)}, ${same.settled} / ${same.pressure} MiB`);
    } catch (error) {
      notes.push(`Run ${i + 1} could not be completed: ${firstLine(error)}`);
    }
    try {
      const [ours, camera] = await Promise.all([
        readOnOwnSimulator(env, (sim) => startOurs(sim, env.fleet, { people: [] })),
        readOnOwnSimulator(env, (sim) => startBare(env.fleet, { sim, listener: 'fastify', checks: true, camera: 'secure-video' })),
      ]);
      cameraPairs.push({ ours, camera });
      options.log(`memory run ${i + 1}/${runs}, not a goal: this plugin ${fmt(ours.ps ?? Number.NaN)} as ps shows it, ${ours.settled} / ${ours.pressure} MiB; bare plugin with this plugin's camera surface ${fmt(camera.ps ?? Number.NaN)}, ${camera.settled} / ${camera.pressure} MiB`);
    } catch (error) {
      notes.push(`Run ${i + 1} beside the bare plugin with the camera surface could not be completed: ${firstLine(error)}`);
    }
  }
  const med = (readings: Reading[]): Reading | undefined =>
    readings.length === 0 ? undefined : { ps: median(readings.map((r) => r.ps ?? Number.NaN)), settled: median(readings.map((r) => r.settled)), pressure: median(readings.map((r) => r.pressure)), heapUsed: median(readings.map((r) => r.heapUsed ?? Number.NaN)) };
  const oursMiB = med(pairs.map((p) => p.ours));
  const sameMiB = med(pairs.map((p) => p.same));
  const oursBesideCameraMiB = med(cameraPairs.map((p) => p.ours));
  const secureVideoMiB = med(cameraPairs.map((p) => p.camera));
  let peopleMiB: Reading | undefined;
  try {
    const people = await env.ours();
    peopleMiB = await read(people.pid, people.hb);
    options.log(`memory: this plugin with a person trigger on every lock ${peopleMiB.settled} MiB (${peopleMiB.pressure} under pressure)`);
  } catch (error) {
    notes.push(`The plugin with person triggers could not be started: ${firstLine(error)}`);
  }
  const added = (r: Reading | undefined, key: 'ps' | 'settled' | 'pressure') => (r === undefined ? Number.NaN : round((r[key] ?? Number.NaN) - (noneMiB[key] ?? Number.NaN), 1));
  const ratioOf = (key: 'ps' | 'settled' | 'pressure', r: Reading | undefined = oursMiB, floor: Reading | undefined = sameMiB) => round(added(r, key) / added(floor, key), 2);
  const goals: Goal[] = [];
  if (oursMiB !== undefined && sameMiB !== undefined) {
    const r = ratioOf('ps');
    goals.push(goal(`RSS added by the plugin vs the bare plugin on the same parts (Fastify, zod) with the same 120 accessories, as ps shows it ${PS_AFTER_MS / 1000} s after the last registration (no collection asked for), median of ${pairs.length} run(s)`, '<= 1.3x', `${fmt(r, 2)}x (${fmt(added(oursMiB, 'ps'))} vs ${fmt(added(sameMiB, 'ps'))} MiB)`, r <= 1.3));
  }
  if (oursBesideCameraMiB !== undefined && secureVideoMiB !== undefined) {
    options.log(`memory, not a goal: this plugin against the bare plugin with its camera surface, median of ${cameraPairs.length}: ${fmt(ratioOf('ps', oursBesideCameraMiB, secureVideoMiB), 2)}x as ps shows it (${fmt(added(oursBesideCameraMiB, 'ps'))} vs ${fmt(added(secureVideoMiB, 'ps'))} MiB), ${fmt(ratioOf('pressure', oursBesideCameraMiB, secureVideoMiB), 2)}x under pressure (${fmt(added(oursBesideCameraMiB, 'pressure'))} vs ${fmt(added(secureVideoMiB, 'pressure'))} MiB)`);
  }
  notes.push('Each process serves 100 locks (lock, door sensor, battery) and 20 doorbells (camera doorbell, motion sensor) with one paired controller and receives no callbacks. RSS is the median of 5 samples from /proc/<pid>/status, read after a 3 s wait and two full collections, then again after two memory-pressure collections.');
  notes.push(`Runs (this plugin / bare plugin on the same parts, MiB under memory pressure): ${pairs.map((p) => `${fmt(p.ours.pressure)} / ${fmt(p.same.pressure)} (${fmt(ratioOf('pressure', p.ours, p.same), 2)}x)`).join('; ')}. Homebridge alone is read once.`);
  notes.push(`Runs as ps shows them ${PS_AFTER_MS / 1000} s after the last registration, the controller paired, no collection asked for (this plugin / bare plugin, MiB; Homebridge alone ${fmt(noneMiB.ps ?? Number.NaN)} MiB ${PS_AFTER_MS / 1000} s after its start): ${pairs.map((p) => `${fmt(p.ours.ps ?? Number.NaN)} / ${fmt(p.same.ps ?? Number.NaN)} (${fmt(ratioOf('ps', p.ours, p.same), 2)}x)`).join('; ')}.`);
  notes.push(`Runs beside the bare plugin with this plugin's camera surface, as ps shows them (this plugin / that bare plugin, MiB): ${cameraPairs.map((p) => `${fmt(p.ours.ps ?? Number.NaN)} / ${fmt(p.camera.ps ?? Number.NaN)} (${fmt(ratioOf('ps', p.ours, p.camera), 2)}x)`).join('; ')}.`);
  notes.push("The first figure moves by tens of MiB from run to run: V8 keeps the pages of a young generation it grew during start-up for reuse, and how far it grows depends on start-up timing. A memory-pressure collection hands them back: the second figure is what the process holds. The goal is judged on the first, what a user sees in ps, as the median of the runs.");
  const heapAdded = (r: Reading | undefined) => (r?.heapUsed === undefined || noneMiB.heapUsed === undefined ? 'n/a' : fmt(r.heapUsed - noneMiB.heapUsed));
  const row = (label: string, r: Reading | undefined, ratio: string): string[] => [label, r?.ps === undefined ? 'n/a' : `${fmt(r.ps)} (${fmt(added(r, 'ps'))})`, r === undefined ? 'n/a' : `${fmt(r.settled)} / ${fmt(r.pressure)}`, `${fmt(added(r, 'settled'))} / ${fmt(added(r, 'pressure'))}`, ratio, r?.heapUsed === undefined ? 'n/a' : `${fmt(r.heapUsed)} (${heapAdded(r)})`];
  return {
    part: 'memory',
    title: 'Memory (Homebridge RSS), MiB',
    figures: {
      noPlugin: noneMiB,
      barePlugin: bareMiB,
      barePluginSameParts: sameMiB ?? null,
      barePluginSecureVideoSurface: secureVideoMiB ?? null,
      thisPlugin: oursMiB ?? null,
      runs: pairs,
      runsBesideCameraSurface: cameraPairs,
      thisPluginWithPeople: peopleMiB ?? null,
      barePluginAdds: { settled: added(bareMiB, 'settled'), pressure: added(bareMiB, 'pressure') },
      barePluginSamePartsAdds: sameMiB === undefined ? null : { settled: added(sameMiB, 'settled'), pressure: added(sameMiB, 'pressure') },
      thisPluginAdds: oursMiB === undefined ? null : { settled: added(oursMiB, 'settled'), pressure: added(oursMiB, 'pressure') },
      ratio: oursMiB === undefined ? null : { ps: ratioOf('ps'), settled: ratioOf('settled'), pressure: ratioOf('pressure') },
    },
    table: {
      header: ['Homebridge with', `RSS as ps shows it ${PS_AFTER_MS / 1000} s after the last registration (added)`, 'RSS (full GC / memory pressure)', 'added over no plugin', 'ratio to the bare plugin on the same parts (full GC / memory pressure)', 'JS heap used after the memory-pressure collection (added)'],
      rows: [
        row('no plugin', noneMiB, ''),
        row('bare plugin on node:http (no Fastify, no zod), 120 accessories', bareMiB, `${fmt(ratioOf('settled', bareMiB), 2)} / ${fmt(ratioOf('pressure', bareMiB), 2)}`),
        row(`bare plugin on the same parts (Fastify, zod), 120 accessories, median of ${pairs.length}`, sameMiB, '1'),
        row(`bare plugin on the same parts with this plugin's camera surface (two viewers, sound, Secure Video; no video behind it), median of ${cameraPairs.length}`, secureVideoMiB, secureVideoMiB === undefined ? 'n/a' : `${fmt(ratioOf('settled', secureVideoMiB), 2)} / ${fmt(ratioOf('pressure', secureVideoMiB), 2)} (as ps shows it: ${fmt(ratioOf('ps', secureVideoMiB), 2)}); this plugin beside it against it: ${fmt(ratioOf('ps', oursBesideCameraMiB, secureVideoMiB), 2)} as ps shows it, ${fmt(ratioOf('pressure', oursBesideCameraMiB, secureVideoMiB), 2)} under pressure`),
        row(`this plugin, 100 locks + 20 doorbells, median of ${pairs.length}`, oursMiB, oursMiB === undefined ? 'n/a' : `${fmt(ratioOf('settled'), 2)} / ${fmt(ratioOf('pressure'), 2)} (as ps shows it: ${fmt(ratioOf('ps'), 2)})`),
        row('this plugin, the same with a person trigger on every lock', peopleMiB, peopleMiB === undefined ? 'n/a' : `${fmt(ratioOf('settled', peopleMiB), 2)} / ${fmt(ratioOf('pressure', peopleMiB), 2)}`),
      ],
    },
    goals,
    notes,
    seconds: round((performance.now() - started) / 1000, 1),
  };
}

/**
 * A process on a simulator of its own: the service keeps one registration per device, so sharing
 * the other parts' simulator would take over theirs.
 */
async function readOnOwnSimulator(env: BenchEnv, start: (sim: Simulator) => Promise<Subject>, snapshotAs?: string): Promise<Reading> {
  const sim = await startSimulator({ port: 0, latencyMs: 0 });
  try {
    addFleetToSim(sim, env.fleet);
    const subject = await start(sim);
    try {
      const reading = await read(subject.pid, subject.hb, subject.timings.readyAt);
      if (HEAP_DIR !== undefined && snapshotAs !== undefined) await heapSnapshot(subject.pid, snapshotAs);
      return reading;
    } finally {
      await subject.stop();
    }
  } finally {
    await sim.close();
  }
}

