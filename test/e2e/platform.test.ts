// The whole plugin in a real Homebridge against the simulator: discovery, registrations, the
// self-check, state refresh, callbacks into the event log, membership changes, config changes on
// restart, and the account-deleted notice. HomeKit itself is checked in homekit.test.ts.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { SettingsUiBackend } from '../../src/settings-ui/settings-ui-backend.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { freePort, STARTED, startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';
import { eventually as pollUntil } from '../harness/e2e-session.js';

let sim: Simulator;
let hb: RunningHomebridge | undefined;
let storagePath: string | undefined;
let listenPort: number;

function platformConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1', doorSensor: true }], ...overrides });
}

async function start(overrides: Record<string, unknown> = {}): Promise<RunningHomebridge> {
  hb = await startHomebridge({ platforms: [platformConfig(overrides)], storagePath });
  storagePath = hb.storagePath;
  await hb.waitForLog(STARTED);
  return hb;
}

async function restart(overrides: Record<string, unknown> = {}): Promise<RunningHomebridge> {
  await hb?.stop();
  return start(overrides);
}

/** Polls a condition (the plugin works asynchronously after acknowledging); not a timing assertion. */
/** The shared poller for probes that may answer at once or with false; this file's log tail on timeout. */
const eventually = <T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> =>
  pollUntil(async () => {
    const value = await probe();
    return value === false ? undefined : value;
  }, what, timeoutMs, () => hb?.logs ?? []);

async function readJson(name: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(join(storagePath ?? '', 'lock-access', name), 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function scopes(): string[] {
  return sim
    .registrations()
    .map((r) => `${r.kind}:${r.scope}`)
    .sort();
}

/** The settings UI's server side, as the Homebridge UI runs it: another process on the same storage. */
function settingsUi(): SettingsUiBackend {
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
  return new SettingsUiBackend({
    storagePath: storagePath ?? '',
    configPath: join(storagePath ?? '', 'config.json'),
    createClient: (account, tokens, log) => new CloudHttpClient({ baseUrl: account.baseUrl, apiKey: account.apiKey, tokens, log }),
    log: quiet,
  });
}

beforeAll(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true },
      { id: 'LOCK-2', name: 'Back Door' },
    ],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  listenPort = await freePort();
  await start();
}, 60_000);

afterAll(async () => {
  await hb?.stop();
  await hb?.cleanup();
  await sim.close();
});

describe('start-up against the service (design sections 4, 5 and 7)', () => {
  it('registers every discovered lock and doorbell and the user, with the design\'s exact bodies', async () => {
    await eventually(() => sim.registrations().length === 4, 'four registrations');
    expect(scopes()).toEqual(['doorbell:BELL-1', 'lock:LOCK-1', 'lock:LOCK-2', `user:${sim.account.userId}`].sort());
    for (const registration of sim.registrations()) {
      expect(registration.method).toBe('POST');
      expect(registration.clientID).toBe(sim.account.clientId);
      expect(registration.header).toBe('x-lock-access-token');
      expect(registration.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    const lock = sim.registrations().find((r) => r.kind === 'lock' && r.scope === 'LOCK-1');
    expect(lock?.url).toBe(`http://127.0.0.1:${listenPort}/lock-access/lock/LOCK-1`);
    expect(lock?.notificationTypes.sort()).toEqual(['accessmgmt', 'battery', 'configuration', 'operation', 'systemstatus']);
  });

  it('passes the public URL self-check and says so', async () => {
    await hb?.waitForLog(/Self-check passed/);
  });

  it('keeps the tokens and the webhook secret in 0600 files under lock-access/', async () => {
    for (const name of ['tokens.json', 'webhook-secret.json', 'webhooks.json']) {
      const info = await eventually(() => stat(join(storagePath ?? '', 'lock-access', name)).catch(() => undefined), name);
      expect(info.mode & 0o777).toBe(0o600);
    }
    const text = hb?.logs.join('\n') ?? '';
    expect(text).not.toContain(sim.account.apiKey);
    expect(text).not.toContain(sim.account.clientSecret);
  });

  it('asks each lock for its state at start-up (refreshStateOnStart) and records the status callbacks', async () => {
    const log = await eventually(async () => {
      const file = (await readJson('events.json')) as { entries: { deviceId: string; kind: string }[] } | undefined;
      return file?.entries.some((e) => e.deviceId === 'LOCK-2' && e.kind === 'lockState') ? file : undefined;
    }, 'status callbacks in the event log');
    expect(log.entries.some((e) => e.deviceId === 'LOCK-1')).toBe(true);
  });
});

describe('callbacks reach the event log in plain words', () => {
  it('an unlock at the keypad is logged with who did it', async () => {
    await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    const line = await hb?.waitForLog(/Front Door: Unlocked .*keypad/i);
    expect(line).toBeDefined();
  });

  it('a forged callback is refused with 401 and changes nothing', async () => {
    const before = hb?.logs.length ?? 0;
    const response = await fetch(`http://127.0.0.1:${listenPort}/lock-access/lock/LOCK-1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-signature': `t=${Math.floor(Date.now() / 1000)},v=${'0'.repeat(64)}` },
      body: JSON.stringify({ LockID: 'LOCK-1', EventType: 'operation', Event: 'lock', Device: 'lock', User: { UserID: 'x' } }),
    });
    expect(response.status).toBe(401);
    // Callbacks are handled in arrival order: once a real one that follows is logged, the forged
    // one would have been logged before it.
    await sim.fire('unlock', { lockId: 'LOCK-1', by: 'manual' });
    const after = await pollUntil(() => {
      const lines = hb?.logs.slice(before) ?? [];
      return Promise.resolve(lines.some((l) => /Front Door: Unlocked .*by hand/i.test(l)) ? lines : undefined);
    }, 'the real callback that follows the forged one');
    expect(after.some((l) => /Front Door: Locked/.test(l))).toBe(false);
  });
});

describe('account changes', () => {
  it('a lock added to the account through the user webhook appears and is registered', async () => {
    sim.addLock({ id: 'LOCK-3', name: 'Garage Door' });
    await sim.fire('lock-user-add', { lockId: 'LOCK-3', subject: 'me' });
    await eventually(() => scopes().includes('lock:LOCK-3'), 'registration of LOCK-3');
  });

  it('a lock removed from config by hiding it is deleted on the next start', async () => {
    await restart({ locks: [{ id: 'LOCK-1', doorSensor: true }, { id: 'LOCK-2', hidden: true }] });
    await eventually(() => !scopes().includes('lock:LOCK-2'), 'deletion of LOCK-2');
    expect(scopes()).toContain('lock:LOCK-1');
    const cache = await eventually(async () => {
      const text = await readFile(join(storagePath ?? '', 'accessories', 'cachedAccessories'), 'utf8').catch(() => undefined);
      return text !== undefined && !text.includes('Back Door') ? text : undefined;
    }, 'Back Door removed from the accessory cache');
    expect(cache).toContain('Front Door');
  });

  it('an unlink made in the settings UI is taken over by the running plugin, which then registers nothing', async () => {
    const ui = settingsUi();
    await ui.unlink({});
    await hb?.waitForLog(/unlinked in the plugin settings/);
    expect(sim.registrations()).toEqual([]);
    expect(hb?.running).toBe(true);
  });

  it('linking again in the settings UI resumes: the running plugin registers its webhooks again', async () => {
    const ui = settingsUi();
    await ui.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    await hb?.waitForLog(/linked again: registering webhooks/);
    await eventually(() => scopes().includes('lock:LOCK-1') && scopes().some((s) => s.startsWith('user:')), 'registrations after linking again');
  });

  it('the account-deleted notice (lifecycle) deletes every registration and the tokens, and leaves the plugin idle', async () => {
    await sim.fire('user-deleted');
    await eventually(() => sim.registrations().length === 0, 'all registrations deleted');
    await hb?.waitForLog(/unlinked/i);
    // Only a tombstone is left: no token, but the memory of the seeds, so config tokens never link again.
    const forgotten = (record: unknown): boolean => {
      const r = record as { state?: string; refreshToken?: string; accessToken?: string } | undefined;
      return r?.state === 'unlinked' && r.refreshToken === undefined && r.accessToken === undefined;
    };
    await eventually(async () => (forgotten(await readJson('tokens.json')) ? true : undefined), 'tokens deleted');
    expect(hb?.running).toBe(true);
  });
});
