// Part 2: signed callbacks per second through the plugin's full path (verify, parse, dedupe,
// reduce, HomeKit update, inside Homebridge) against a bare plugin inside Homebridge on the same
// parts (Fastify raw-body route, HMAC with tolerance, zod payload schema, duplicate filter, two
// HAP updates) and a bare Fastify route answering the same bodies in its own process, with
// autocannon, in one run. Every body is distinct (own EventID).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { manualOperation } from '../../test/sim/payloads.js';
import type { BenchEnv, Subject } from '../lib/env.js';
import { cpuMs } from '../lib/cpu.js';
import { signedHeaders, type Target } from '../lib/post.js';
import { ratio, round } from '../lib/stats.js';
import { firstLine, fmt, type Goal, goal, type PartResult, type RunOptions } from '../lib/types.js';

const BARE_LABEL = 'bare plugin in Homebridge (Fastify raw-body route, HMAC, zod schema, duplicate filter, two HAP updates)';

export interface Load {
  label: string;
  perSecond: number;
  /** The serving process's CPU time per answered request, in microseconds. */
  cpuMicrosPerRequest: number | undefined;
  ok: number;
  non2xx: number;
  errors: number;
  latencyP50: number;
  latencyP99: number;
}

/**
 * Increasing per lock, never ahead of the clock for long: one counter for all locks would run ahead
 * of real time by a second for every thousand requests beyond the clock's pace, and the plugin
 * would then ignore the later parts' lock events as older than ones already applied.
 */
const lastStamp = new Map<string, number>();
function stamp(lockId: string): number {
  const at = Math.max(Date.now(), (lastStamp.get(lockId) ?? 0) + 1);
  lastStamp.set(lockId, at);
  return at;
}

/** autocannon against `targets` (round robin), each request a freshly built and signed callback. */
export async function load(label: string, targets: Target[], lockIds: string[], seconds: number, connections: number, pid?: number): Promise<Load> {
  const first = targets[0];
  if (!first) throw new Error('no targets');
  let n = 0;
  const cpuBefore = pid === undefined ? undefined : cpuMs(pid);
  const result = await autocannon({
    url: new URL(first.url).origin,
    connections,
    pipelining: 1,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const k = n % targets.length;
          // Each lock is locked and unlocked in turn, so every callback changes what HomeKit shows
          // (a lock told its present state again costs a plugin less than a real change).
          const turn = Math.floor(n / targets.length);
          n += 1;
          const target = targets[k] ?? first;
          const lockId = lockIds[k] ?? '';
          const body = JSON.stringify(manualOperation({ lockId, event: turn % 2 === 0 ? 'lock' : 'unlock', at: stamp(lockId), eventId: randomUUID() }));
          const url = new URL(target.url);
          return { ...request, method: 'POST', path: url.pathname, headers: signedHeaders(target, body), body };
        },
      },
    ],
  });
  const ok = result['2xx'];
  const cpuUsed = pid === undefined || cpuBefore === undefined ? undefined : cpuMs(pid) - cpuBefore;
  return {
    label,
    perSecond: round(ok / result.duration, 0),
    cpuMicrosPerRequest: cpuUsed === undefined || ok === 0 ? undefined : round((cpuUsed * 1000) / ok, 0),
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
  };
}

async function startBareFastify(): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bare-fastify.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening (\d+)/.exec(text);
      if (match?.[1]) resolve(Number(match[1]));
    });
    child.once('exit', () => {
      reject(new Error('bare Fastify exited'));
    });
  });
  if (child.pid === undefined) throw new Error('bare Fastify has no pid');
  return {
    port,
    pid: child.pid,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function runThroughput(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const seconds = options.quick ? 3 : 6;
  // Several interleaved rounds, each target's median kept: a shared machine has spells in which
  // everything slows down, and one spell should not decide a figure.
  const rounds = options.quick ? 1 : 3;
  const connections = 10;
  const notes: string[] = [];
  const lockIds = env.fleet.locks.map((l) => l.id);
  const fastify = await startBareFastify();
  let ours: Subject | undefined;
  try {
    ours = await env.ours();
  } catch (error) {
    notes.push(`The plugin could not be started, so only the baselines were measured: ${firstLine(error)}`);
  }
  const bare = await env.bareChecked();
  const targets: { label: string; targets: Target[]; pid: number }[] = [];
  const fastifyTargets = lockIds.map((id) => ({ url: `http://127.0.0.1:${fastify.port}/lock-access/lock/${id}`, apiKey: 'bench' }));
  targets.push({ label: 'bare Fastify route (same bodies, no checks)', targets: fastifyTargets, pid: fastify.pid });
  if (ours) targets.push({ label: 'this plugin, full path in Homebridge', targets: lockIds.map((id) => ours.lockTarget(id)), pid: ours.pid });
  targets.push({ label: BARE_LABEL, targets: lockIds.map((id) => bare.lockTarget(id)), pid: bare.pid });
  const byTarget = new Map<string, Load[]>(targets.map((t) => [t.label, []]));
  try {
    // Warm-up so every side runs JIT-compiled code when measured.
    for (const t of targets) await load('warm-up', t.targets, lockIds, 1, connections);
    for (let round = 0; round < rounds; round += 1) {
      for (const t of targets) byTarget.get(t.label)?.push(await load(t.label, t.targets, lockIds, seconds, connections, t.pid));
    }
  } finally {
    await fastify.stop();
  }
  const median = (loads: Load[]): Load | undefined => [...loads].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(loads.length / 2)];
  const results = targets.map((t) => median(byTarget.get(t.label) ?? [])).filter((r): r is Load => r !== undefined);
  for (const r of results) options.log(`throughput ${r.label}: ${r.perSecond}/s, ${r.cpuMicrosPerRequest ?? '?'} µs CPU each (non-2xx ${r.non2xx}, errors ${r.errors})`);
  const base = results[0];
  const mine = ours ? results[1] : undefined;
  const barePlugin = results.find((r) => r.label === BARE_LABEL);
  const goals: Goal[] = [];
  if (barePlugin && mine && barePlugin.perSecond > 0) {
    const r = ratio(mine.perSecond, barePlugin.perSecond);
    // Server CPU per callback is said beside it: on a shared machine the rate also depends on which
    // process got the cores during its rounds, the CPU time each callback took much less so.
    const cpu = mine.cpuMicrosPerRequest !== undefined && barePlugin.cpuMicrosPerRequest !== undefined ? `; server CPU per callback ${mine.cpuMicrosPerRequest} vs ${barePlugin.cpuMicrosPerRequest} µs, ${fmt(barePlugin.cpuMicrosPerRequest / mine.cpuMicrosPerRequest, 2)}x` : '';
    goals.push(goal('full-path callbacks per second vs the bare plugin on the same parts', '>= 0.8x', `${fmt(r, 2)}x (${mine.perSecond} vs ${barePlugin.perSecond}/s${cpu})`, r >= 0.8 && mine.non2xx === 0));
  }
  if (base && mine) {
    const r = ratio(mine.perSecond, base.perSecond);
    goals.push(goal('full-path callbacks per second vs bare Fastify', '>= 0.7x', `${fmt(r, 2)}x (${mine.perSecond} vs ${base.perSecond}/s)`, r >= 0.7 && mine.non2xx === 0));
  }
  notes.push(`autocannon in the benchmark process, ${connections} connections, no pipelining, ${rounds} interleaved round(s) of ${seconds} s per target after a 1 s warm-up, each target's median round shown (all rounds: ${targets.map((t) => `${t.label.split(' (')[0] ?? t.label} ${(byTarget.get(t.label) ?? []).map((r) => r.perSecond).join(' / ')}`).join('; ')}); each request is a distinct manual lock/unlock callback (own EventID, increasing Timestamp) over 100 locks, each lock locked and unlocked in turn so every callback changes what HomeKit shows, signed in autocannon's setupRequest for every target alike.`);
  notes.push('Full path = signature check, schema parse, dedupe, ordering reducer and HomeKit update inside a running Homebridge with a paired controller.');
  notes.push('The bare plugin here runs on Fastify with a raw-body route and checks what any plugin must (the signature and its time tolerance, the token header, a zod/v3 payload schema, a duplicate filter of EventIDs), then makes the two HAP updates; it keeps no order, files, event log or status.');
  return {
    part: 'throughput',
    title: 'Receiver throughput (signed callbacks per second)',
    figures: { seconds, rounds, connections, results, allRounds: Object.fromEntries(byTarget) },
    table: {
      header: ['target', 'answered 2xx per second', 'ratio to bare Fastify', 'ratio to bare plugin', 'server CPU per callback (µs)', 'non-2xx', 'errors', 'latency p50 / p99 ms'],
      rows: results.map((r) => [r.label, String(r.perSecond), base ? fmt(r.perSecond / base.perSecond, 2) : 'n/a', barePlugin ? fmt(r.perSecond / barePlugin.perSecond, 2) : 'n/a', r.cpuMicrosPerRequest === undefined ? 'n/a' : String(r.cpuMicrosPerRequest), String(r.non2xx), String(r.errors), `${r.latencyP50} / ${r.latencyP99}`]),
    },
    goals,
    notes,
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
