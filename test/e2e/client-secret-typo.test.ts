// A typo in the client secret, end to end: the plugin on Homebridge's own API in this process
// (test/harness/in-process.ts: it asserts only logs, files and the service's side) against the
// simulator. The token service answers the refresh grant with 400 invalid_client and does not use
// the refresh token; the plugin keeps it, warns once naming clientSecret, and the status file the
// settings page reads says "checkSettings". After the fix and a restart the same token links.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually as pollUntil } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startInProcess, type InProcessPlatform } from '../harness/in-process.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

let sim: Simulator;
let hb: InProcessPlatform | undefined;
let storagePath: string | undefined;
let listenPort: number;
let seed: string;

async function start(clientSecret: string): Promise<InProcessPlatform> {
  const config = simPlatformConfig(sim, listenPort, {
    refreshToken: seed,
    clientSecret,
    locks: [{ id: 'LOCK-1', name: 'Front Door' }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: false,
  });
  // A restart: the same storage, and the accessories Homebridge cached.
  hb = await startInProcess({ platform: config, storagePath, cached: hb?.cache() });
  storagePath = hb.storagePath;
  await hb.waitForLog(/Webhook listener ready/);
  return hb;
}

const eventually = <T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string): Promise<T> =>
  pollUntil(async () => {
    const value = await probe();
    return value === false ? undefined : value;
  }, what, 20_000, () => hb?.logs ?? []);

async function readJson(name: string): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await readFile(join(storagePath ?? '', 'lock-access', name), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door' }] });
  listenPort = await freePort();
  seed = sim.issueRefreshToken();
}, 60_000);

afterAll(async () => {
  await hb?.stop();
  // The restarted run reused the first run's folder: remove it here.
  if (storagePath !== undefined) await rm(storagePath, { recursive: true, force: true });
  await sim.close();
});

describe('a wrong client secret costs nothing: fix it, restart, and the same refresh token links', () => {
  it('wrong secret: one warning naming clientSecret, the refresh token kept unused, the status says checkSettings', async () => {
    await start('a-typo-in-the-secret');
    await hb?.waitForLog(/Fix clientSecret in the plugin settings/);
    expect(sim.refreshTokenState(seed)).toBe('issued');
    const tokens = await eventually(async () => {
      const record = await readJson('tokens.json');
      return record?.settingsProblem === 'clientSecret' ? record : undefined;
    }, 'the settings problem in tokens.json');
    expect(tokens.refreshToken).toBe(seed);
    const status = await eventually(async () => {
      const file = await readJson('status.json');
      const link = file?.link as { state?: string; message?: { code?: string; params?: unknown; text?: string } } | undefined;
      return link?.state === 'checkSettings' ? link : undefined;
    }, 'checkSettings in status.json');
    // The page words the code with the setting the token service refused as its param.
    expect(status.message?.code).toBe('link.checkSetting');
    expect(status.message?.params).toEqual({ field: 'clientSecret' });
    expect(status.message?.text).toMatch(/refused clientSecret in the plugin settings/);
    expect(JSON.stringify(status)).not.toContain(seed);
    expect((hb?.logs ?? []).filter((line) => line.includes('Fix clientSecret')).length).toBe(1);
    expect((hb?.logs ?? []).join('\n')).not.toMatch(/link your account again/i);
  });

  it('fixed secret and a restart: the same refresh token links and the webhook is registered', async () => {
    await hb?.stop();
    await start(sim.account.clientSecret);
    await eventually(() => sim.refreshTokenState(seed) === 'used', 'the kept refresh token spent by a grant');
    await eventually(() => sim.registrations().length === 1, 'the lock registration');
    const status = await eventually(async () => {
      const file = await readJson('status.json');
      const link = file?.link as { state?: string } | undefined;
      return link?.state === 'linked' ? link : undefined;
    }, 'linked in status.json');
    expect(status.state).toBe('linked');
    expect((await readJson('tokens.json'))?.settingsProblem).toBeUndefined();
  });
});
