// Part 4: Homebridge's RSS with this plugin serving 100 locks and 20 doorbells, against Homebridge
// with no plugin, and against the bare plugin with the same 120 accessories, in one run. Each is
// read twice: after a full collection, and after the collection V8 makes under memory pressure.
// The goal compares like with like: this plugin as configured by default (no person triggers, which
// add a switch per person to every lock and which the bare plugin does not have). The shared
// process of the other parts, with a person trigger on every lock, is read as well and shown, and
// so is the bare plugin with its route on Fastify: the project requires a Fastify listener, and this
// row shows how much of the difference that alone is.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startHomebridge } from '../../test/harness/homebridge.js';
import { addFleetToSim, startBare, startOurs, type BenchEnv, type Subject } from '../lib/env.js';
import { SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { round } from '../lib/stats.js';
import { fmt, goal, type Goal, type PartResult, type RunOptions } from '../lib/types.js';

interface Reading {
  /** After full collections (SIGUSR2). */
  settled: number;
  /** After a memory-pressure collection (SIGWINCH), which also returns V8's pooled pages. */
  pressure: number;
}

async function read(pid: number): Promise<Reading> {
  const settled = (await settledRssMiB(pid)).mib;
  const pressure = (await settledRssMiB(pid, { waitMs: 500, pressure: true })).mib;
  return { settled, pressure };
}

export async function runMemory(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const notes: string[] = [];
  const emptyPlugins = await mkdtemp(join(tmpdir(), 'bench-no-plugins-'));
  const none = await startHomebridge({ platforms: [], pluginPath: emptyPlugins, env: SETTLE_ENV });
  let noneMiB: Reading;
  try {
    await none.waitForLog(/is running on port/, 60_000);
    const pid = none.child.pid;
    if (pid === undefined) throw new Error('no pid');
    noneMiB = await read(pid);
  } finally {
    await none.stop();
    await none.cleanup();
    await rm(emptyPlugins, { recursive: true, force: true });
  }
  options.log(`memory: Homebridge with no plugin ${noneMiB.settled} MiB (${noneMiB.pressure} under pressure)`);
  const bare = await env.bare();
  const bareMiB = await read(bare.pid);
  options.log(`memory: bare plugin ${bareMiB.settled} MiB (${bareMiB.pressure} under pressure)`);
  let bareFastifyMiB: Reading | undefined;
  try {
    bareFastifyMiB = await readOnOwnSimulator(env, (sim) => startBare(env.fleet, { sim, listener: 'fastify' }));
    options.log(`memory: bare plugin on Fastify ${bareFastifyMiB.settled} MiB (${bareFastifyMiB.pressure} under pressure)`);
  } catch (error) {
    notes.push(`The bare plugin on Fastify could not be started: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  let oursMiB: Reading | undefined;
  let peopleMiB: Reading | undefined;
  try {
    oursMiB = await readOnOwnSimulator(env, (sim) => startOurs(sim, env.fleet, { people: [] }));
    options.log(`memory: this plugin ${oursMiB.settled} MiB (${oursMiB.pressure} under pressure)`);
    peopleMiB = await read((await env.ours()).pid);
    options.log(`memory: this plugin with a person trigger on every lock ${peopleMiB.settled} MiB (${peopleMiB.pressure} under pressure)`);
  } catch (error) {
    notes.push(`The plugin could not be started: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const added = (r: Reading | undefined, key: keyof Reading) => (r === undefined ? Number.NaN : round(r[key] - noneMiB[key], 1));
  const ratioOf = (key: keyof Reading, r: Reading | undefined = oursMiB, floor: Reading = bareMiB) => round(added(r, key) / added(floor, key), 2);
  const goals: Goal[] = [];
  if (oursMiB !== undefined) {
    const r = ratioOf('pressure');
    goals.push(goal('RSS added by the plugin vs the bare plugin with the same 120 accessories (after a memory-pressure collection)', '<= 1.25x', `${fmt(r, 2)}x (${fmt(added(oursMiB, 'pressure'))} vs ${fmt(added(bareMiB, 'pressure'))} MiB)`, r <= 1.25));
  }
  notes.push('Each process serves 100 locks (lock, door sensor, battery) and 20 doorbells (camera doorbell, motion sensor) with one paired controller. RSS is the median of 5 samples from /proc/<pid>/status, read after a 3 s wait and two full collections, then again after two memory-pressure collections.');
  if (oursMiB !== undefined && bareFastifyMiB !== undefined) {
    notes.push(`Against the bare plugin on Fastify (the listener the project requires), this plugin is ${fmt(ratioOf('pressure', oursMiB, bareFastifyMiB), 2)}x after a memory-pressure collection (${fmt(added(oursMiB, 'pressure'))} vs ${fmt(added(bareFastifyMiB, 'pressure'))} MiB). The goal stays judged against the bare plugin on node:http.`);
  }
  notes.push("The first figure moves by tens of MiB from run to run: V8 keeps the pages of a young generation it grew during start-up for reuse, and how far it grows depends on start-up timing. A memory-pressure collection hands them back, so the goal is judged on the second figure, which is what the process holds.");
  const row = (label: string, r: Reading | undefined, ratio: string): string[] => [label, r === undefined ? 'n/a' : `${fmt(r.settled)} / ${fmt(r.pressure)}`, `${fmt(added(r, 'settled'))} / ${fmt(added(r, 'pressure'))}`, ratio];
  return {
    part: 'memory',
    title: 'Memory (Homebridge RSS), MiB',
    figures: {
      noPlugin: noneMiB,
      barePlugin: bareMiB,
      barePluginOnFastify: bareFastifyMiB ?? null,
      thisPlugin: oursMiB ?? null,
      thisPluginWithPeople: peopleMiB ?? null,
      barePluginAdds: { settled: added(bareMiB, 'settled'), pressure: added(bareMiB, 'pressure') },
      thisPluginAdds: oursMiB === undefined ? null : { settled: added(oursMiB, 'settled'), pressure: added(oursMiB, 'pressure') },
      ratio: oursMiB === undefined ? null : { settled: ratioOf('settled'), pressure: ratioOf('pressure') },
    },
    table: {
      header: ['Homebridge with', 'RSS (full GC / memory pressure)', 'added over no plugin', 'ratio to bare (full GC / memory pressure)'],
      rows: [
        row('no plugin', noneMiB, ''),
        row('bare plugin, 120 accessories', bareMiB, '1'),
        row('bare plugin on Fastify, 120 accessories', bareFastifyMiB, bareFastifyMiB === undefined ? 'n/a' : `${fmt(ratioOf('settled', bareFastifyMiB), 2)} / ${fmt(ratioOf('pressure', bareFastifyMiB), 2)}`),
        row('this plugin, 100 locks + 20 doorbells', oursMiB, oursMiB === undefined ? 'n/a' : `${fmt(ratioOf('settled'), 2)} / ${fmt(ratioOf('pressure'), 2)}`),
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
async function readOnOwnSimulator(env: BenchEnv, start: (sim: Simulator) => Promise<Subject>): Promise<Reading> {
  const sim = await startSimulator({ port: 0, latencyMs: 0 });
  try {
    addFleetToSim(sim, env.fleet);
    const subject = await start(sim);
    try {
      return await read(subject.pid);
    } finally {
      await subject.stop();
    }
  } finally {
    await sim.close();
  }
}
