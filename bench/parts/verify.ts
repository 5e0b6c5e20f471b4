// Part 3: signature checks per second against raw HMAC-SHA256 per second, same process, same body.
import { createHmac } from 'node:crypto';

import { signatureHeader, verifySignature } from '../../src/callbacks/signature.js';
import { manualOperation } from '../../test/sim/payloads.js';
import { fmt, type PartResult, type RunOptions } from '../lib/types.js';
import { round } from '../lib/stats.js';

const API_KEY = 'bench-api-key-0123456789abcdef';

function opsPerSecond(durationMs: number, op: () => void): number {
  // Warm up so the JIT has settled before timing.
  for (let i = 0; i < 2000; i += 1) op();
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < durationMs) {
    for (let i = 0; i < 500; i += 1) op();
    count += 500;
    now = performance.now();
  }
  return count / ((now - start) / 1000);
}

export async function runVerify(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const body = JSON.stringify(manualOperation({ lockId: 'LOCK-0001', event: 'lock' }));
  const bodyBuffer = Buffer.from(body);
  const t = Math.floor(Date.now() / 1000);
  const header = signatureHeader(API_KEY, t, bodyBuffer);
  const now = Date.now();
  const rounds = options.quick ? 1 : 3;
  const durationMs = options.quick ? 500 : 1500;
  const oursRuns: number[] = [];
  const rawRuns: number[] = [];
  let sink = 0;
  // Alternate the two loops so a burst of load elsewhere on the machine hits both alike.
  for (let r = 0; r < rounds; r += 1) {
    rawRuns.push(opsPerSecond(durationMs, () => {
      sink += createHmac('sha256', API_KEY).update(`${t}.`).update(bodyBuffer).digest().length;
    }));
    oursRuns.push(opsPerSecond(durationMs, () => {
      const result = verifySignature({ header, body: bodyBuffer, apiKey: API_KEY, toleranceSeconds: 300, now });
      if (!result.ok) throw new Error('benchmark signature did not verify');
      sink += 1;
    }));
    await new Promise((r2) => setImmediate(r2));
  }
  if (sink === 0) throw new Error('unreachable');
  const ours = Math.max(...oursRuns);
  const raw = Math.max(...rawRuns);
  const r = round(ours / raw, 2);
  options.log(`verify: ours ${fmt(ours, 0)}/s, raw HMAC ${fmt(raw, 0)}/s, ratio ${r}`);
  return {
    part: 'verify',
    title: 'Verification cost',
    figures: { bodyBytes: bodyBuffer.length, verifyPerSecond: Math.round(ours), rawHmacPerSecond: Math.round(raw), ratio: r, runs: { ours: oursRuns.map(Math.round), raw: rawRuns.map(Math.round) } },
    table: {
      header: ['check', 'per second', 'ratio'],
      rows: [
        ['verifySignature (parse header, HMAC, constant-time compare, tolerance)', fmt(ours, 0), `${r}`],
        ['raw HMAC-SHA256 of the same bytes', fmt(raw, 0), '1'],
      ],
    },
    goals: [],
    notes: [`${bodyBuffer.length}-byte body; best of ${rounds} alternating runs of ${durationMs} ms each.`],
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
