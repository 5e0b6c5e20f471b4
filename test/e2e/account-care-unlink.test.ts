// An unlink that survives a restart, end to end: the plugin on Homebridge's own API in this process
// (test/harness/in-process.ts: it asserts only logs, files and the service's side; a restart is
// Homebridge's shutdown and a new platform on the same storage) against the simulator. The account-deleted notice unlinks; a restart with the same
// config (its refresh token still there) links nothing; only a new refresh token links again.
// Design sections 3 (config tokens are seeds) and 5 (user unlink).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort } from '../harness/homebridge.js';
import { startInProcess, type InProcessPlatform } from '../harness/in-process.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { eventually as pollUntil } from '../harness/e2e-session.js';

let sim: Simulator;
let hb: InProcessPlatform | undefined;
let storagePath: string | undefined;
let listenPort: number;

function platformConfig(refreshToken: string): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, {
    refreshToken,
    locks: [{ id: 'LOCK-1', name: 'Front Door' }],
    discoverDevices: false,
    userWebhook: true,
    refreshStateOnStart: false,
  });
}

async function start(refreshToken: string): Promise<InProcessPlatform> {
  hb = await startInProcess({ platform: platformConfig(refreshToken), storagePath, cached: hb?.cache() });
  storagePath = hb.storagePath;
  await hb.waitForLog(/Webhook listener ready/);
  return hb;
}

/** Polls until the probe gives a value (the plugin works after acknowledging); not a timing assertion. */
/** The shared poller for probes that may answer at once or with false; this file's log tail on timeout. */
const eventually = <T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> =>
  pollUntil(async () => {
    const value = await probe();
    return value === false ? undefined : value;
  }, what, timeoutMs, () => hb?.logs ?? []);

async function readJson(name: string): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await readFile(join(storagePath ?? '', 'lock-access', name), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Registration calls the simulator has answered (any route that creates one). */
function registrationCalls(): number {
  return Object.entries(sim.stats.byRoute)
    .filter(([route]) => route.startsWith('POST /api/webhook'))
    .reduce((sum, [, count]) => sum + count, 0);
}

const scopes = (): string[] => sim.registrations().map((r) => `${r.kind}:${r.scope}`).sort();

beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door' }] });
  listenPort = await freePort();
}, 60_000);

afterAll(async () => {
  await hb?.stop();
  // The restarted runs reused the first run's folder: remove it here.
  if (storagePath !== undefined) await rm(storagePath, { recursive: true, force: true });
  await sim.close();
});

describe('an unlink survives a restart with the same config', () => {
  it('links from the config token and registers the lock and the user hook', async () => {
    await start(sim.account.refreshToken);
    await eventually(() => scopes().length === 2, 'the lock and user registrations');
    expect(scopes()).toEqual(['lock:LOCK-1', 'user:user-0001']);
    expect(sim.stats.grants).toBe(1);
    expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(1);
  });

  it('the account-deleted notice (lifecycle on the user hook) unlinks: registrations gone, tokens.json a tombstone', async () => {
    const results = await sim.fire('user-deleted');
    expect(results.map((r) => r.status)).toEqual([200]);
    await hb?.waitForLog(/Lock Access is unlinked because/);
    await eventually(() => sim.registrations().length === 0, 'every registration deleted');
    const tombstone = await eventually(async () => {
      const record = await readJson('tokens.json');
      return record?.state === 'unlinked' ? record : undefined;
    }, 'the unlink tombstone');
    expect(tombstone.refreshToken).toBeUndefined();
    expect(tombstone.accessToken).toBeUndefined();
    expect(JSON.stringify(tombstone)).not.toContain(sim.account.refreshToken);
  });

  it('a restart with the same config (its refresh token still there) makes no grant and no registration, and says it is unlinked', async () => {
    await hb?.stop();
    const grants = sim.stats.grants;
    const calls = registrationCalls();
    const apiCalls = sim.stats.apiCalls;
    const tokenCalls = sim.stats.byRoute['POST /oauth/access_token'] ?? 0;
    const restartedAt = Date.now();
    await start(sim.account.refreshToken);
    await hb?.waitForLog(/Lock Access is unlinked \(.*tokens still in the plugin settings are not used again/);
    const status = await eventually(async () => {
      const current = await readJson('status.json');
      // The plugin runs in this process (same pid both runs): the restarted one's file started later.
      return typeof current?.startedAt === 'number' && current.startedAt >= restartedAt ? current : undefined;
    }, 'the status file of the restarted plugin');
    expect((status.link as { state?: string } | undefined)?.state).toBe('unlinked');
    // not even a refused grant: the token endpoint was not asked
    expect(sim.stats.grants).toBe(grants);
    expect(sim.stats.byRoute['POST /oauth/access_token'] ?? 0).toBe(tokenCalls);
    expect(registrationCalls()).toBe(calls);
    expect(sim.stats.apiCalls).toBe(apiCalls);
    expect(sim.registrations()).toEqual([]);
    expect((await readJson('tokens.json'))?.state).toBe('unlinked');
  });

  it('a NEW refresh token in the config links again: one grant, the webhooks registered again', async () => {
    await hb?.stop();
    const grants = sim.stats.grants;
    await start(sim.issueRefreshToken());
    await hb?.waitForLog(/tokens in the plugin settings are new/);
    await eventually(() => scopes().length === 2, 'the registrations after linking again');
    expect(scopes()).toEqual(['lock:LOCK-1', 'user:user-0001']);
    expect(sim.stats.grants).toBe(grants + 1);
    expect((await readJson('tokens.json'))?.state).toBe('linked');
  });
});
