// Part 5: start-up at scale: from launching Homebridge until 100 locks and 20 doorbells are
// registered with a simulator that answers every call after 50 ms, and how many API calls it took.
import { startHomebridge, freePort } from '../../test/harness/homebridge.js';
import { startSimulator } from '../../test/sim/index.js';
import { testFfmpeg } from '../../test/video/ffmpeg-binary.js';
import { cpuMs } from '../lib/cpu.js';
import { addFleetToSim, oursPlatform, pluginOverride, waitForRegistrations } from '../lib/env.js';
import { fleet } from '../lib/fleet.js';
import { round } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';

const LATENCY_MS = 50;

export async function runStartup(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const f = fleet();
  const sim = await startSimulator({ port: 0, latencyMs: LATENCY_MS });
  addFleetToSim(sim, f);
  const port = await freePort();
  // Defaults a user gets: discovery and the start-up status refresh are on.
  // A user with ffmpeg (doorbell video on), as the Homebridge images have it.
  const platform = oursPlatform(sim, port, f, { discoverDevices: true, refreshStateOnStart: true, video: { ffmpegPath: testFfmpeg() } });
  const spawnedAt = performance.now();
  const hb = await startHomebridge({ platforms: [platform], ...pluginOverride() });
  try {
    const bridgeUpAt = await hb.waitForLog(/is running on port/, 180_000).then(() => performance.now());
    const registeredAt = await waitForRegistrations(sim, f, 180_000, 2);
    const callsAtRegistered = sim.stats.apiCalls;
    // CPU the Homebridge process used until then: on a busy machine the wall time mostly says how long it waited for a core.
    const cpuSeconds = round(cpuMs(hb.child.pid ?? 0) / 1000, 2);
    const byRouteAtRegistered = { ...sim.stats.byRoute };
    // Let the rest of start-up (status refresh, user hook) finish, then count everything.
    await new Promise((r) => setTimeout(r, 3000));
    const seconds = round((registeredAt - spawnedAt) / 1000, 2);
    const bridgeSeconds = round((bridgeUpAt - spawnedAt) / 1000, 2);
    const oneAtATime = round(((f.locks.length + f.doorbells.length) * LATENCY_MS) / 1000, 1);
    options.log(`startup: registered ${f.locks.length} locks + ${f.doorbells.length} doorbells ${seconds} s after launch (bridge up at ${bridgeSeconds} s, ${cpuSeconds} s of CPU by then), ${callsAtRegistered} API calls by then, ${sim.stats.apiCalls} after 3 s more`);
    return {
      part: 'startup',
      title: `Start-up at scale (100 locks, 20 doorbells, ${LATENCY_MS} ms per API call)`,
      figures: {
        latencyMs: LATENCY_MS,
        secondsToRegistered: seconds,
        secondsToBridgeUp: bridgeSeconds,
        cpuSecondsWhenRegistered: cpuSeconds,
        apiCallsWhenRegistered: callsAtRegistered,
        apiCallsAfterSettle: sim.stats.apiCalls,
        grants: sim.stats.grants,
        byRouteWhenRegistered: byRouteAtRegistered,
        byRouteAfterSettle: sim.stats.byRoute,
        registrations: sim.registrations().length,
      },
      table: {
        header: ['measure', 'value'],
        rows: [
          ['launch until every device is registered', `${fmt(seconds, 2)} s`],
          ['launch until the bridge is up (Homebridge itself)', `${fmt(bridgeSeconds, 2)} s`],
          ['CPU time of the Homebridge process until every device is registered', `${fmt(cpuSeconds, 2)} s`],
          ['API calls until then', String(callsAtRegistered)],
          ['API calls after start-up settled (+3 s, incl. status refresh)', String(sim.stats.apiCalls)],
          ['refresh grants', String(sim.stats.grants)],
          ['registrations held by the service', String(sim.registrations().length)],
          ['one call at a time would need at least', `${fmt(oneAtATime, 1)} s of API latency alone`],
        ],
      },
      goals: [goal('launch until 100 locks and 20 doorbells are registered', '< 3 s', `${fmt(seconds, 2)} s`, seconds < 3)],
      notes: ['Measured from spawning the Homebridge process (so it includes Homebridge loading, the token refresh and its check) until the simulator holds all 120 device registrations; discovery and the start-up status refresh are on, as by default.'],
      seconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    await hb.stop();
    await hb.cleanup();
    await sim.close();
  }
}
