// the plugin as a Homebridge child bridge (`_bridge` in its platform block). The child
// process is killed while callbacks arrive; Homebridge starts it again, the webhook listener comes
// back on the same port without EADDRINUSE, and every callback that was answered 200 is in the
// event log after the restart (the service never sends a 200-answered callback again).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { freePort, STARTED, startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

let sim: Simulator;
let hb: RunningHomebridge | undefined;
let listenPort: number;

// One Homebridge for the file: each test kills the child bridge that the one before it left
// running (Homebridge restarts a killed child at once, up to four times), so the tests run in order
// and count the child's starts and listener lines from where the previous test ended.
beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }] });
  listenPort = await freePort();
  const childPort = await freePort();
  hb = await startHomebridge({
    platforms: [
      simPlatformConfig(sim, listenPort, {
        locks: [{ id: 'LOCK-1', name: 'Front Door' }],
        refreshStateOnStart: false,
        _bridge: { username: '0E:1A:2B:3C:4D:5E', port: childPort, name: 'Lock Access Child' },
      }),
    ],
  });
  await hb.waitForLog(STARTED);
  await vi.waitFor(() => {
    expect(sim.registrations().length).toBe(2);
  }, { timeout: 30_000, interval: 200 });
}, 90_000);

afterAll(async () => {
  await hb?.stop(15_000);
  await hb?.cleanup();
  await sim.close();
});

function running(): RunningHomebridge {
  if (!hb) throw new Error('Homebridge is not running');
  return hb;
}

/** The pid of the child bridge process, from Homebridge's "Child bridge starting (pid N)" line; the nth start. */
async function childPid(nth: number): Promise<number> {
  await expect.poll(() => running().logs.filter((l) => /Child bridge starting \(pid \d+\)/.test(l)).length, { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(nth);
  const line = running().logs.filter((l) => /Child bridge starting \(pid \d+\)/.test(l))[nth - 1] ?? '';
  return Number(/\(pid (\d+)\)/.exec(line)?.[1]);
}

/**
 * How many times the child bridge has started so far, once its listener is up: the test before
 * may have left it restarting.
 */
function childStarts(): number {
  const starts = running().logs.filter((l) => /Child bridge starting \(pid \d+\)/.test(l)).length;
  if (listenerLines().length !== starts) throw new Error(`the child bridge started ${String(starts)} times but its listener came up ${String(listenerLines().length)} times`);
  return starts;
}

const listenerLines = () => running().logs.filter((l) => /Webhook listener ready on 127\.0\.0\.1:\d+/.test(l));

async function eventLogTimes(storagePath: string): Promise<Set<number>> {
  try {
    const file = JSON.parse(await readFile(join(storagePath, 'lock-access', 'events.json'), 'utf8')) as { entries: { deviceId: string; at: number }[] };
    return new Set(file.entries.filter((e) => e.deviceId === 'LOCK-1').map((e) => e.at));
  } catch {
    return new Set();
  }
}

describe('running as a child bridge', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`runs in its own process, apart from the main bridge; killed with ${signal}: restarted by Homebridge, the listener back on the same port without EADDRINUSE`, async () => {
      const starts = childStarts();
      const pid = await childPid(starts);
      expect(pid).toBeGreaterThan(0);
      expect(pid).not.toBe(running().child.pid);
      const before = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`);
      expect(before.status).toBe(200);
      process.kill(pid, signal);
      const second = await childPid(starts + 1);
      expect(second).not.toBe(pid);
      await expect.poll(() => listenerLines().length, { timeout: 30_000, interval: 100 }).toBe(starts + 1);
      for (const line of listenerLines()) expect(line).toContain(`127.0.0.1:${listenPort}`);
      const health = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`);
      expect(health.status).toBe(200);
      const results = await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
      expect(results.map((r) => r.status)).toEqual([200]);
      expect(running().logs.join('\n')).not.toMatch(/EADDRINUSE|already in use|could not start/);
      expect(running().running).toBe(true);
    }, 90_000);
  }

  it('no callback answered 200 is lost when the child bridge is killed (SIGTERM) amid a stream of callbacks', async () => {
    const starts = childStarts();
    const pid = await childPid(starts);
    const base = Date.now() - 120_000;
    const answered: number[] = [];
    let sent = 0;
    const send = async (event: 'lock' | 'unlock', by: 'keypad' | 'manual') => {
      // Each callback has its own event time, which the event log keeps as the entry's time.
      const at = base + (sent += 1) * 1000;
      const results = await sim.fire(event, { lockId: 'LOCK-1', by, at });
      if (results.every((r) => r.status === 200)) answered.push(at);
    };
    for (let i = 0; i < 8; i += 1) await send(i % 2 === 0 ? 'unlock' : 'lock', 'keypad');
    // Kill while a callback is in flight, not between two.
    const inFlight = send('unlock', 'manual');
    process.kill(pid, 'SIGTERM');
    await inFlight;
    // While the child is down and starting again, a callback a second (refused ones are the service's to retry).
    for (let i = 0; i < 15 && listenerLines().length < starts + 1; i += 1) {
      await send(i % 2 === 0 ? 'lock' : 'unlock', 'keypad');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await expect.poll(() => listenerLines().length, { timeout: 30_000, interval: 100 }).toBe(starts + 1);
    for (let i = 0; i < 5; i += 1) await send(i % 2 === 0 ? 'lock' : 'unlock', 'keypad');
    expect(listenerLines().length).toBe(starts + 1);
    expect(answered.length).toBeGreaterThanOrEqual(13);
    // Every 200-answered callback is in the event log the restarted plugin keeps.
    const storagePath = running().storagePath;
    await expect
      .poll(async () => {
        const times = await eventLogTimes(storagePath);
        return answered.filter((at) => !times.has(at));
      }, { timeout: 30_000, interval: 250 })
      .toEqual([]);
    expect(running().logs.join('\n')).not.toMatch(/EADDRINUSE|already in use/);
  }, 120_000);
});
