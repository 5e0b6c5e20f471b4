// Resident set size of a process from /proc/<pid>/status, read after a forced settle.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { median } from './stats.js';

export const SETTLE_PRELOAD = join(import.meta.dirname, 'settle-preload.mjs');

/** NODE_OPTIONS for a child whose memory is measured: exposes gc and runs it on SIGUSR2. */
// BENCH_CPU_PROF=<dir> also writes a V8 CPU profile of each benchmarked process there on exit.
const cpuProf = process.env.BENCH_CPU_PROF ? ` --cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF}` : '';
// BENCH_HEAP_DIR=<dir> lets the memory part write a heap snapshot of each process it reads there
// (SIGTTIN, a signal nothing else here uses).
export const HEAP_DIR = process.env.BENCH_HEAP_DIR;
const heap = HEAP_DIR ? ` --heapsnapshot-signal=SIGTTIN --diagnostic-dir=${HEAP_DIR}` : '';
// BENCH_NODE_OPTIONS=<options> adds Node options to the benchmarked processes, e.g. `--import=<a probe>`.
const extra = process.env.BENCH_NODE_OPTIONS ? ` ${process.env.BENCH_NODE_OPTIONS}` : '';
export const SETTLE_ENV = { NODE_OPTIONS: `--expose-gc --import=${SETTLE_PRELOAD}${cpuProf}${heap}${extra}` };

/** Fields of /proc/<pid>/status given in kB, read together. */
async function statusKiB<const Name extends string>(pid: number, names: readonly Name[]): Promise<Record<Name, number>> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const found = {} as Record<Name, number>;
  for (const name of names) {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`no ${name} for process ${pid}`);
    found[name] = Number(match[1]);
  }
  return found;
}

export async function rssKiB(pid: number): Promise<number> {
  return (await statusKiB(pid, ['VmRSS'])).VmRSS;
}

/**
 * The resident set in its two kinds: anonymous (the process's own memory: V8's heaps, malloc) and
 * file-backed (pages of the node binary and libraries it has run, shared with every process that
 * runs them; it grows as new code runs for the first time, and no collection gives it back).
 */
export async function rssPartsKiB(pid: number): Promise<{ anon: number; file: number }> {
  const { RssAnon: anon, RssFile: file } = await statusKiB(pid, ['RssAnon', 'RssFile']);
  return { anon, file };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Forced settle, then the median of several samples: wait, ask the child to collect garbage
 * (SIGUSR2, or SIGWINCH for a memory-pressure collection; see settle-preload.mjs), wait again,
 * then sample `samples` times.
 */
export async function settledRssMiB(pid: number, options: { waitMs?: number; samples?: number; gapMs?: number; pressure?: boolean } = {}): Promise<{ mib: number; samplesMiB: number[] }> {
  const signal = options.pressure === true ? 'SIGWINCH' : 'SIGUSR2';
  await sleep(options.waitMs ?? 3000);
  process.kill(pid, signal);
  await sleep(500);
  process.kill(pid, signal);
  await sleep(500);
  const values: number[] = [];
  for (let i = 0; i < (options.samples ?? 5); i += 1) {
    values.push((await rssKiB(pid)) / 1024);
    if (i + 1 < (options.samples ?? 5)) await sleep(options.gapMs ?? 400);
  }
  return { mib: Math.round(median(values) * 10) / 10, samplesMiB: values.map((v) => Math.round(v * 10) / 10) };
}
