// Part 4: Homebridge's RSS with this plugin serving 100 locks and 20 doorbells, against Homebridge
// with no plugin, and against the bare plugin with the same 120 accessories, in one run.
import { startHomebridge } from '../../test/harness/homebridge.js';
import type { BenchEnv } from '../lib/env.js';
import { SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { round } from '../lib/stats.js';
import { fmt, goal, type Goal, type PartResult, type RunOptions } from '../lib/types.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function runMemory(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const notes: string[] = [];
  const emptyPlugins = await mkdtemp(join(tmpdir(), 'bench-no-plugins-'));
  const none = await startHomebridge({ platforms: [], pluginPath: emptyPlugins, env: SETTLE_ENV });
  let noneMiB: number;
  try {
    await none.waitForLog(/is running on port/, 60_000);
    const pid = none.child.pid;
    if (pid === undefined) throw new Error('no pid');
    noneMiB = (await settledRssMiB(pid)).mib;
  } finally {
    await none.stop();
    await none.cleanup();
    await rm(emptyPlugins, { recursive: true, force: true });
  }
  options.log(`memory: Homebridge with no plugin ${noneMiB} MiB`);
  const bare = await env.bare();
  const bareMiB = (await settledRssMiB(bare.pid)).mib;
  options.log(`memory: bare plugin ${bareMiB} MiB`);
  let oursMiB: number | undefined;
  try {
    const ours = await env.ours();
    oursMiB = (await settledRssMiB(ours.pid)).mib;
    options.log(`memory: this plugin ${oursMiB} MiB`);
  } catch (error) {
    notes.push(`The plugin could not be started: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const bareDelta = round(bareMiB - noneMiB, 1);
  const oursDelta = oursMiB === undefined ? Number.NaN : round(oursMiB - noneMiB, 1);
  const r = round(oursDelta / bareDelta, 2);
  const goals: Goal[] = [];
  if (oursMiB !== undefined) goals.push(goal('RSS added by the plugin vs the bare plugin with the same 120 accessories', '<= 1.25x', `${fmt(r, 2)}x (${fmt(oursDelta)} vs ${fmt(bareDelta)} MiB)`, r <= 1.25));
  notes.push('Each process serves 100 locks (lock, door sensor, battery) and 20 doorbells (camera doorbell, motion sensor) with one paired controller. RSS is the median of 5 samples from /proc/<pid>/status taken after a 3 s wait and two forced garbage collections (SIGUSR2 to a preloaded handler).');
  return {
    part: 'memory',
    title: 'Memory (Homebridge RSS), MiB',
    figures: { noPluginMiB: noneMiB, barePluginMiB: bareMiB, thisPluginMiB: oursMiB ?? null, barePluginAddsMiB: bareDelta, thisPluginAddsMiB: Number.isNaN(oursDelta) ? null : oursDelta, ratio: Number.isNaN(r) ? null : r },
    table: {
      header: ['Homebridge with', 'RSS', 'added over no plugin', 'ratio to bare'],
      rows: [
        ['no plugin', fmt(noneMiB), '0', ''],
        ['bare plugin, 120 accessories', fmt(bareMiB), fmt(bareDelta), '1'],
        ['this plugin, 100 locks + 20 doorbells', oursMiB === undefined ? 'n/a' : fmt(oursMiB), fmt(oursDelta), fmt(r, 2)],
      ],
    },
    goals,
    notes,
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
