// `npm run bench`: measures the plugin against bare minimums in one run and records the figures.
// Benchmarks are measurements, not tests: a missed goal is named in the output, never an exit code.
//
//   tsx bench/run.ts                      everything (about 14 minutes: a 10-minute soak plus the rest)
//   tsx bench/run.ts --quick              small counts and a 1-minute soak, for development
//   tsx bench/run.ts --only latency,memory
//   BENCH_SOAK_MINUTES=30 tsx bench/run.ts
//   tsx bench/run.ts soak30               one part by name (`npm run bench -- soak30`: the 30-minute soak)
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { BenchEnv } from './lib/env.js';
import { busyShare, machineInfo } from './lib/machine.js';
import { writeRun, type RunRecord } from './lib/report.js';
import type { PartResult, RunOptions } from './lib/types.js';
import { runAccounts } from './parts/accounts.js';
import { runFakeClock } from './parts/fake-clock.js';
import { runLatency } from './parts/latency.js';
import { runMatter } from './parts/matter.js';
import { runMemory } from './parts/memory.js';
import { runSoak } from './parts/soak.js';
import { runSoak30 } from './parts/soak30.js';
import { runStartup } from './parts/startup.js';
import { runThroughput } from './parts/throughput.js';
import { runSecureVideo } from './parts/secure-video.js';
import { runVerify } from './parts/verify.js';
import { runVideo } from './parts/video.js';

type Part = (options: RunOptions, env: BenchEnv) => Promise<PartResult>;

// Order matters: memory is read from fresh processes before the latency and throughput runs load them.
// The fake-clock month runs in its own process alongside the real-time soak (which mostly waits), so
// the whole run stays under 15 minutes.
const PARTS: [string, Part][] = [
  ['verify', (o) => runVerify(o)],
  ['startup', (o) => runStartup(o)],
  ['memory', runMemory],
  ['latency', runLatency],
  ['throughput', runThroughput],
  // Its own simulator and Homebridge: three accounts behind one listener.
  ['accounts', (o) => runAccounts(o)],
  ['fakeclock', (o) => runFakeClock(o)],
  ['soak', runSoak],
  // Its own simulator, Homebridge and ffmpeg processes.
  ['video', (o) => runVideo(o)],
  // Its own simulator, Homebridge and ffmpeg processes, and a home hub's Data Stream.
  ['securevideo', (o) => runSecureVideo(o)],
  // Last: its own simulator and Homebridge processes, with a Matter controller in this process.
  ['matter', (o) => runMatter(o)],
  // Half an hour on its own: memory flat, no ffmpeg left, final states right. Only when named.
  ['soak30', (o) => runSoak30(o)],
];
const BACKGROUND = new Set(['fakeclock']);
const ONLY_WHEN_NAMED = new Set(['soak30']);

function parseArgs(argv: string[]): { quick: boolean; only: string[] | null; soakMinutes: number | undefined } {
  let quick = false;
  let only: string[] | null = null;
  let soakMinutes: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg === '--quick') quick = true;
    else if (arg === '--only') only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (arg.startsWith('--only=')) only = arg.slice(7).split(',').filter(Boolean);
    else if (arg === '--soak-minutes') soakMinutes = Number(argv[++i]);
    else if (arg.startsWith('--soak-minutes=')) soakMinutes = Number(arg.slice(15));
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`usage: tsx bench/run.ts [--quick] [--only ${PARTS.map(([n]) => n).join(',')}] [--soak-minutes N] [part ...]\n`);
      process.exit(0);
    } else if (PARTS.some(([n]) => n === arg)) only = [...(only ?? []), arg];
    else throw new Error(`unknown argument ${arg}`);
  }
  const unknown = only?.filter((name) => !PARTS.some(([n]) => n === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown part(s) ${unknown.join(', ')}; parts: ${PARTS.map(([n]) => n).join(', ')}`);
  return { quick, only, soakMinutes };
}

function gitDescribe(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} (src modified)` : head;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const envMinutes = process.env.BENCH_SOAK_MINUTES === undefined ? undefined : Number(process.env.BENCH_SOAK_MINUTES);
  const soakMinutes = args.soakMinutes ?? envMinutes ?? (args.quick ? 1 : 10);
  if (!Number.isFinite(soakMinutes) || soakMinutes <= 0) throw new Error('the soak needs a positive number of minutes');
  const started = new Date();
  // Read at the start: the code a long run measures is the code it started with, whatever is committed meanwhile.
  const git = gitDescribe();
  const t0 = performance.now();
  const log = (line: string) => {
    process.stdout.write(`[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
  };
  const busy = await busyShare(1000);
  const atStart = machineInfo();
  log(`${atStart.cpuModel}, ${atStart.cores} cores, Node ${atStart.node}; load ${atStart.loadAverage.join(' ')}; CPUs ${Math.round(busy * 100)} % busy before start`);
  const options: RunOptions = { quick: args.quick, soakMinutes, log };
  const env = new BenchEnv(options);
  const parts: PartResult[] = [];
  const failures: { part: string; error: string }[] = [];
  const settle = async (name: string, running: Promise<PartResult>) => {
    try {
      const result = await running;
      parts.push(result);
      for (const g of result.goals) log(`${g.met ? 'met   ' : 'MISSED'} ${g.name}: ${g.actual} (goal ${g.target})`);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ part: name, error: message.split('\n').slice(0, 6).join(' / ') });
      log(`part ${name} did not complete: ${message}`);
    }
  };
  const background: Promise<void>[] = [];
  try {
    for (const [name, run] of PARTS) {
      if (args.only ? !args.only.includes(name) : ONLY_WHEN_NAMED.has(name)) continue;
      log(`--- ${name}${BACKGROUND.has(name) ? ' (in the background)' : ''}`);
      const running = run(options, env);
      if (BACKGROUND.has(name)) background.push(settle(name, running));
      else await settle(name, running);
    }
    await Promise.all(background);
  } finally {
    await env.close();
  }
  const run: RunRecord = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    seconds: Math.round((performance.now() - t0) / 1000),
    mode: args.quick ? 'quick' : 'full',
    soakMinutes,
    only: args.only,
    git,
    machine: { atStart, atEnd: machineInfo(), busyShareBeforeRun: busy },
    parts,
    failures,
  };
  const written = await writeRun(join(import.meta.dirname, 'results'), run);
  const missed = parts.flatMap((p) => p.goals.filter((g) => !g.met).map((g) => `${p.title}: ${g.name}`));
  log(`wrote ${written.md} and ${written.json}`);
  log(missed.length === 0 ? 'every goal measured was met' : `goals missed: ${missed.join('; ')}`);
  if (failures.length > 0) log(`parts that did not complete: ${failures.map((f) => f.part).join(', ')}`);
}

await main();
