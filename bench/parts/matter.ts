// Part 8: Matter. Homebridge 2 with Matter on (loopback), the plugin serving the fleet:
// "callback to Matter attribute report" latency, from the first byte of a signed lock callback to
// the lockState report at a commissioned matter.js controller in this process; and Homebridge's RSS
// with Matter off, with Matter on but the plugin's endpoints off ("matter": false), and with them on.
// Its own simulator, so the registrations of the shared processes are never touched.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { readMatterPairing } from '../../src/settings-ui/matter-pairing.js';
import { freePort, startHomebridge, type RunningHomebridge } from '../../test/harness/homebridge.js';
import { MatterTestController, pairingFromQr } from '../../test/harness/matter.js';
import { manualOperation } from '../../test/sim/payloads.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { addFleetToSim, oursPlatform, pluginOverride, registrationTarget, waitForRegistrations } from '../lib/env.js';
import { fleet, type Fleet } from '../lib/fleet.js';
import { postSigned } from '../lib/post.js';
import { SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { round, summarise, type Summary } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';

const P99_GOAL_MS = 150;
const REPORT_TIMEOUT_MS = 10_000;

type Mode = 'matter-off' | 'endpoints-off' | 'endpoints-on';

interface Reading {
  settled: number;
  pressure: number;
}

let lastStamp = 0;
function stamp(): number {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return lastStamp;
}

async function read(pid: number): Promise<Reading> {
  const settled = (await settledRssMiB(pid)).mib;
  const pressure = (await settledRssMiB(pid, { waitMs: 500, pressure: true })).mib;
  return { settled, pressure };
}

async function start(sim: Simulator, f: Fleet, mode: Mode, matterPort: number): Promise<{ hb: RunningHomebridge; readyMs: number }> {
  const port = await freePort();
  const spawned = performance.now();
  const hb = await startHomebridge({
    platforms: [oursPlatform(sim, port, f, { matter: mode === 'endpoints-on' })],
    ...(mode === 'matter-off' ? {} : { bridge: { bind: ['lo'], matter: { port: matterPort } } }),
    env: SETTLE_ENV,
    ...pluginOverride(),
  });
  await hb.waitForLog(/Webhook listener ready/, 180_000);
  await waitForRegistrations(sim, f, 180_000);
  if (mode === 'endpoints-on') await hb.waitForLog(/Matter: \d+ endpoints? ready/, 600_000);
  if (mode === 'endpoints-off') await hb.waitForLog(/off for Lock Access/, 60_000);
  return { hb, readyMs: performance.now() - spawned };
}

async function measureLatency(sim: Simulator, f: Fleet, controller: MatterTestController, total: number): Promise<{ summary: Summary; lost: number; rejected: number }> {
  const endpoints = new Map(f.locks.map((lock) => [lock.id, controller.endpoint(lock.name)?.number]));
  const state = new Map<string, number>();
  const samples: number[] = [];
  let lost = 0;
  let rejected = 0;
  for (let i = 0; samples.length + lost < total; i += 1) {
    const lock = f.locks[i % f.locks.length];
    if (!lock) continue;
    const endpoint = endpoints.get(lock.id);
    if (endpoint === undefined) throw new Error(`the controller has no endpoint for ${lock.name}`);
    // Matter lockState: Locked 1, Unlocked 2 (null before the first event).
    const expect = state.get(lock.id) === 1 ? 2 : 1;
    const payload = manualOperation({ lockId: lock.id, event: expect === 1 ? 'lock' : 'unlock', at: stamp(), eventId: randomUUID() });
    const sent = await postSigned(registrationTarget(sim, 'lock', lock.id), payload);
    if (sent.status !== 200) rejected += 1;
    try {
      const report = await controller.waitForAttribute((r) => r.endpoint === endpoint && r.attribute === 'lockState' && r.value === expect, sent.t0, `lockState ${expect} of ${lock.name}`, REPORT_TIMEOUT_MS);
      samples.push(report.at - sent.t0);
    } catch {
      lost += 1;
    }
    state.set(lock.id, expect);
  }
  return { summary: summarise(samples), lost, rejected };
}

export async function runMatter(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const f = options.quick ? fleet(20, 4) : fleet();
  const devices = f.locks.length + f.doorbells.length;
  // Each lock: DoorLock (with its PowerSource) and a ContactSensor; each doorbell: a switch and an occupancy sensor.
  const endpointCount = 2 * devices;
  const samples = options.quick ? 40 : 200;
  const notes: string[] = [];
  const sim = await startSimulator({ port: 0, latencyMs: 0 });
  addFleetToSim(sim, f);
  const controllerStorage = await mkdtemp(join(tmpdir(), 'bench-matter-ctl-'));
  const rss: Partial<Record<Mode, Reading>> = {};
  const ready: Partial<Record<Mode, number>> = {};
  let latency: { summary: Summary; lost: number; rejected: number } | undefined;
  try {
    for (const mode of ['matter-off', 'endpoints-off', 'endpoints-on'] as const) {
      const matterPort = await freePort();
      const { hb, readyMs } = await start(sim, f, mode, matterPort);
      ready[mode] = round(readyMs / 1000, 1);
      try {
        const pid = hb.child.pid;
        if (pid === undefined) throw new Error('Homebridge has no pid');
        const reading = await read(pid);
        rss[mode] = reading;
        options.log(`matter: ${mode}: RSS ${reading.settled} MiB (${reading.pressure} under pressure), ready after ${ready[mode]} s`);
        if (mode === 'endpoints-on') {
          const pairing = await readMatterPairing({ storagePath: hb.storagePath, configPath: join(hb.storagePath, 'config.json') });
          const controller = await MatterTestController.start(controllerStorage);
          try {
            const t0 = performance.now();
            await controller.commission(matterPort, pairingFromQr(pairing.qrCode ?? ''));
            options.log(`matter: commissioned in ${fmt((performance.now() - t0) / 1000)} s, ${controller.endpoints().length} endpoints`);
            latency = await measureLatency(sim, f, controller, samples);
            options.log(`matter: callback to lockState report p50 ${latency.summary.p50} ms, p99 ${latency.summary.p99} ms (${latency.lost} lost)`);
          } finally {
            await controller.close();
          }
        }
      } finally {
        await hb.stop();
        await hb.cleanup();
      }
    }
  } finally {
    await sim.close();
    await rm(controllerStorage, { recursive: true, force: true });
  }
  const diff = (a: Mode, b: Mode, key: keyof Reading) => {
    const x = rss[a]?.[key];
    const y = rss[b]?.[key];
    return x === undefined || y === undefined ? Number.NaN : round(x - y, 1);
  };
  const endpointsCost = diff('endpoints-on', 'endpoints-off', 'pressure');
  const perDeviceKiB = round((endpointsCost * 1024) / devices, 0);
  const perEndpointKiB = round((endpointsCost * 1024) / endpointCount, 0);
  const goals = latency === undefined ? [] : [goal('callback to Matter attribute report (lockState), p99', `< ${P99_GOAL_MS} ms`, `${fmt(latency.summary.p99)} ms`, latency.summary.p99 < P99_GOAL_MS && latency.lost === 0)];
  notes.push(`${f.locks.length} locks (door sensor on) and ${f.doorbells.length} doorbells: ${endpointCount} Matter endpoints. The controller is matter.js 0.17 in the benchmark process, commissioned over 127.0.0.1 with the QR payload the settings UI shows; latency is from the first byte of a signed callback POST to the lockState attribute report arriving over its subscription.`);
  notes.push(`Matter's own cost (bridge Matter on, the plugin's endpoints off, minus Matter off): ${fmt(diff('endpoints-off', 'matter-off', 'pressure'))} MiB. The plugin's endpoints: ${fmt(endpointsCost)} MiB for ${devices} devices, about ${perDeviceKiB} KiB per device (${perEndpointKiB} KiB per endpoint), after a memory-pressure collection.`);
  const row = (label: string, mode: Mode): string[] => [label, rss[mode] === undefined ? 'n/a' : `${fmt(rss[mode].settled)} / ${fmt(rss[mode].pressure)}`, `${ready[mode] ?? 'n/a'} s`];
  return {
    part: 'matter',
    title: 'Matter: callback to attribute report, and Homebridge RSS (MiB) with Matter',
    figures: {
      devices,
      endpoints: endpointCount,
      latency: latency ?? null,
      rss,
      readySeconds: ready,
      matterOwnMiB: diff('endpoints-off', 'matter-off', 'pressure'),
      endpointsMiB: endpointsCost,
      perDeviceKiB,
      perEndpointKiB,
    },
    table: {
      header: ['Homebridge', 'RSS (full GC / memory pressure)', 'ready after'],
      rows: [
        row('Matter off', 'matter-off'),
        row('Matter on, the plugin\'s endpoints off ("matter": false)', 'endpoints-off'),
        row(`Matter on, the plugin's ${endpointCount} endpoints on`, 'endpoints-on'),
        ['callback to lockState report (p50 / p99 / max)', latency === undefined ? 'n/a' : `${fmt(latency.summary.p50)} / ${fmt(latency.summary.p99)} / ${fmt(latency.summary.max)} ms (${latency.summary.count} samples, ${latency.lost} lost)`, ''],
      ],
    },
    goals,
    notes,
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
