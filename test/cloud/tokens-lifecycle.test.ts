// The token manager against the simulator: seeds, refresh grant, validation, header tokens,
// keep-alive, 401 handling, re-authorization, link flows. Time-based rules run on fake timers.
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http-client.js';
import { AuthorizationLostError, NotLinkedError, RefreshRejectedError, TransientError } from '../../src/cloud/errors.js';
import { REAUTHORIZATION_ADVICE, type LinkState, type TokenManager } from '../../src/cloud/token-manager.js';
import { DAY_MS } from '../../src/cloud/token-schedule.js';
import { hashSeed } from '../../src/cloud/token-store.js';
import { Storage } from '../../src/storage.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { captureLog, CountingStorage, managerFor, readTokens, tempDir, tokenWorks, type CapturedLog } from '../fixtures/token-harness.js';

let sim: Simulator;
let dir: string;
let cleanup: () => Promise<void>;
let storage: CountingStorage;
let log: CapturedLog;
const managers: TokenManager[] = [];

async function boot(simOptions: Parameters<typeof startSimulator>[0] = {}): Promise<void> {
  sim = await startSimulator({ port: 0, ...simOptions });
  storage = new CountingStorage(join(dir, 'lock-access'));
}

function manager(extra: Parameters<typeof managerFor>[3] = {}, store: Storage = storage): TokenManager {
  const m = managerFor(sim, store, log, extra);
  managers.push(m);
  return m;
}

const usersMeCalls = (): number => sim.stats.byRoute['GET /api/users/me'] ?? sim.stats.byRoute['GET /users/me'] ?? 0;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  log = captureLog();
});

afterEach(async () => {
  for (const m of managers.splice(0)) {
    m.stop();
    await m.settled();
  }
  vi.useRealTimers();
  await sim.close();
  await cleanup();
});

describe('design 3: refreshToken / accessToken in config are seeds', () => {
  it('a refresh-token seed is spent once for a validated access token; the store records its hash', async () => {
    await boot();
    const seed = sim.issueRefreshToken();
    const m = manager({ seeds: { refreshToken: seed } });
    expect(await m.start()).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(sim.refreshTokenState(seed)).toBe('used');
    const record = await readTokens(storage);
    expect(record?.seedHash).toBe(hashSeed(seed));
    expect(record?.refreshToken).not.toBe(seed);
    expect(record?.pendingAccessToken).toBeUndefined();
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('"once used, the rotated tokens in storage win": a restart with the same seed does not spend anything', async () => {
    await boot();
    const seed = sim.issueRefreshToken();
    const first = manager({ seeds: { refreshToken: seed } });
    await first.start();
    first.stop();
    const second = manager({ seeds: { refreshToken: seed } });
    expect(await second.start()).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(await tokenWorks(sim, await second.getAccessToken())).toBe(true);
  });

  it('"a changed seed replaces the store = re-link"', async () => {
    await boot();
    const first = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await first.start();
    first.stop();
    const before = await readTokens(storage);
    const newSeed = sim.issueRefreshToken();
    const second = manager({ seeds: { refreshToken: newSeed } });
    await second.start();
    const after = await readTokens(storage);
    expect(sim.refreshTokenState(newSeed)).toBe('used');
    expect(after?.seedHash).toBe(hashSeed(newSeed));
    expect(after?.rotations).toBeGreaterThan(before?.rotations ?? 0);
    expect(sim.stats.grants).toBe(2);
  });

  it('an access-token seed alone is used without a grant, even when it is not a JWT the plugin can read', async () => {
    await boot();
    const access = sim.mintAccessToken();
    const m = manager({ seeds: { accessToken: access } });
    expect(await m.start()).toBe('linked');
    expect(await m.getAccessToken()).toBe(access);
    expect(sim.stats.grants).toBe(0);

    const opaque = manager({ seeds: { accessToken: 'opaque-token-that-is-no-jwt' } }, new Storage(join(dir, 'other')));
    expect(await opaque.start()).toBe('linked');
    expect(opaque.status().accessTokenExpiresAt).toBeUndefined();
  });

  it('without seeds or stored tokens the state is unlinked and getAccessToken throws NotLinkedError', async () => {
    await boot();
    const m = manager();
    expect(await m.start()).toBe('unlinked');
    await expect(m.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
    expect(sim.stats.apiCalls + sim.stats.grants).toBe(0);
  });
});

describe('design 4: refresh grant, write-ahead, validation', () => {
  it('the refresh grant rotates the single-use refresh token and stores the successor before validation', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const before = await readTokens(storage);
    const oldAccess = await m.getAccessToken();
    await m.refreshNow();
    const after = await readTokens(storage);
    expect(sim.stats.grants).toBe(2);
    expect(sim.refreshTokenState(before?.refreshToken ?? '')).toBe('used');
    expect(sim.refreshTokenState(after?.refreshToken ?? '')).toBe('issued');
    expect(after?.refreshInFlight).toBeUndefined();
    expect(after?.accessToken).not.toBe(before?.accessToken);
    expect(after?.pendingAccessToken).toBeUndefined();
    // In memory: the grant's token, or the newer one its validation reply carried.
    expect(await m.getAccessToken()).not.toBe(oldAccess);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('"keep both until validated": when GET /users/me cannot answer, the old access token stays in use and the new one waits', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const oldAccess = await m.getAccessToken();
    const oldStored = (await readTokens(storage))?.accessToken;
    sim.faults.failNext(1, 503, '/users/me');
    await m.refreshNow();
    const record = await readTokens(storage);
    expect(record?.accessToken).toBe(oldStored);
    expect(record?.pendingAccessToken).toBeDefined();
    expect(await m.getAccessToken()).toBe(oldAccess);
    // A later start validates the waiting token and promotes it.
    const next = manager();
    await next.start();
    const promoted = await readTokens(storage);
    expect(promoted?.pendingAccessToken).toBeUndefined();
    expect(promoted?.accessToken).toBe(record?.pendingAccessToken?.token);
  });

  it('"if validation fails with 401, keep the old access token"', async () => {
    await boot();
    let refuse: string | undefined;
    // The simulator never refuses a token it just issued, so the one answer is changed on the way.
    const fetchWithRefusal: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      if (refuse !== undefined && headers.get('x-svc-access-token') === refuse) return new Response('{}', { status: 401 });
      const response = await fetch(input, init);
      if (response.url.endsWith('/access_token') && response.ok) {
        const body = (await response.clone().json()) as { access_token: string };
        refuse = body.access_token;
      }
      return response;
    };
    const seed = sim.issueRefreshToken();
    const first = manager({ seeds: { refreshToken: seed } });
    await first.start();
    first.stop();
    const m = manager({ fetch: fetchWithRefusal });
    await m.start();
    const oldAccess = await m.getAccessToken();
    await m.refreshNow();
    expect(await m.getAccessToken()).toBe(oldAccess);
    const record = await readTokens(storage);
    expect(record?.accessToken).toBe(oldAccess);
    expect(record?.pendingAccessToken).toBeUndefined();
    expect(sim.refreshTokenState(record?.refreshToken ?? '')).toBe('issued');
    expect(log.text('warn').join('\n')).toContain('previous access token stays in use');
  });
});

describe('design 4: 401 from the API: one refresh attempt, then "re-authorization needed"', () => {
  it('a rejected access token gets one refresh and the caller a working token', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    const fresh = await m.handleUnauthorized(old);
    expect(fresh).not.toBe(old);
    expect(await tokenWorks(sim, fresh)).toBe(true);
    expect(sim.stats.grants).toBe(2);
    expect(m.state).toBe('linked');
  });

  it('issue 4.4: "50 concurrent callers needing a token during a refresh cause exactly one grant"', async () => {
    await boot({ latencyMs: 20 });
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    sim.revokeAccessTokens();
    const grantsBefore = sim.stats.grants;
    const results = await Promise.all(Array.from({ length: 50 }, () => client.request('GET', '/users/me')));
    expect(results).toHaveLength(50);
    expect(sim.stats.grants - grantsBefore).toBe(1);
  });

  it('a refused refresh token leads to reauthorizationNeeded, logged once with what to do, AuthorizationLostError to callers', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const states: LinkState[] = [];
    m.onStateChange((state) => states.push(state));
    const record = await readTokens(storage);
    sim.revokeRefreshToken(record?.refreshToken ?? '');
    sim.revokeAccessTokens();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    await expect(client.request('GET', '/users/me')).rejects.toBeInstanceOf(AuthorizationLostError);
    await expect(client.request('GET', '/users/me')).rejects.toBeInstanceOf(NotLinkedError);
    expect(m.state).toBe('reauthorizationNeeded');
    expect(states).toEqual(['reauthorizationNeeded']);
    const errors = log.text('error').filter((line) => line.includes(REAUTHORIZATION_ADVICE));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^Lock Access needs you to link your account again: /);
    expect(m.status()).toMatchObject({ state: 'reauthorizationNeeded' });
    expect((await readTokens(storage))?.state).toBe('reauthorizationNeeded');
    // A restart keeps the state and does not try the refused token again.
    const grants = sim.stats.byRoute['POST /oauth/access_token'];
    const again = manager();
    expect(await again.start()).toBe('reauthorizationNeeded');
    expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(grants);
  });

  it('a refused refresh token while the access token still works: re-authorization needed, but the plugin keeps working', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const access = await m.getAccessToken();
    sim.revokeRefreshToken((await readTokens(storage))?.refreshToken ?? '');
    await expect(m.refreshNow()).rejects.toBeInstanceOf(RefreshRejectedError);
    expect(m.state).toBe('reauthorizationNeeded');
    expect(await m.getAccessToken()).toBe(access);
    expect(await tokenWorks(sim, access)).toBe(true);
  });
});

describe('a token endpoint that answers 503 has not used the refresh token', () => {
  it('keeps the refresh token, stays linked, and the next attempt renews with it', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const refresh = (await readTokens(storage))?.refreshToken ?? '';
    sim.faults.failNext(1, 503, 'POST /oauth/access_token');
    await expect(m.refreshNow()).rejects.toBeInstanceOf(TransientError);
    expect(sim.refreshTokenState(refresh)).toBe('issued');
    const record = await readTokens(storage);
    expect(record?.refreshToken).toBe(refresh);
    expect(record?.refreshTokenLost).toBeUndefined();
    expect(m.state).toBe('linked');
    await m.refreshNow();
    expect(sim.refreshTokenState(refresh)).toBe('used');
    const renewed = (await readTokens(storage))?.refreshToken ?? '';
    expect(renewed).not.toBe(refresh);
    expect(sim.refreshTokenState(renewed)).toBe('issued');
  });
});

describe('issue 4.3: "rotation committed, response failed" (sim.faults.rotateThenFail)', () => {
  for (const mode of ['drop', '500'] as const) {
    it(`${mode}: the spent refresh token is never sent again; the old access token stays in use and alive`, async () => {
      await boot();
      const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
      await m.start();
      const access = await m.getAccessToken();
      const oldRefresh = (await readTokens(storage))?.refreshToken ?? '';
      sim.faults.rotateThenFail(mode);
      await expect(m.refreshNow()).rejects.toBeInstanceOf(TransientError);
      expect(sim.refreshTokenState(oldRefresh)).toBe('used');
      const record = await readTokens(storage);
      expect(record?.refreshToken).toBeUndefined();
      expect(record?.refreshTokenLost).toBe('uncertain');
      expect(m.state).toBe('linked');
      expect(m.status().message).toContain('may have replaced the refresh token');
      expect(log.text('warn').join('\n')).toContain('the old one will never be sent again');
      expect(await m.getAccessToken()).toBe(access);
      const sent = sim.stats.byRoute['POST /oauth/access_token'];
      await expect(m.refreshNow()).rejects.toBeInstanceOf(RefreshRejectedError);
      expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(sent);
      const result = await m.testConnection();
      expect(result.ok).toBe(true);
    });
  }
});

describe('design 4: header tokens, daily keep-alive and expiry refresh (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 1) });
  });

  async function days(m: TokenManager, count: number, step = DAY_MS / 4): Promise<void> {
    for (let elapsed = 0; elapsed < count * DAY_MS; elapsed += step) {
      await vi.advanceTimersByTimeAsync(step);
      await m.settled();
    }
  }

  it('"stay linked for years": with the daily keep-alive the refresh token is not spent while tokens would have expired', async () => {
    await boot(); // four-month tokens, each reply extends validity by a day
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    await days(m, 150, DAY_MS);
    expect(sim.stats.grants).toBe(1);
    expect(usersMeCalls()).toBeGreaterThanOrEqual(150);
    expect(usersMeCalls()).toBeLessThan(160);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    expect(m.state).toBe('linked');
  });

  it('header tokens are used in memory at once and written to disk at most once per 24 h', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    const writesBefore = storage.tokenWrites;
    const stored = (await readTokens(storage))?.accessToken;
    for (let hour = 0; hour < 47; hour += 1) {
      const before = await m.getAccessToken();
      await client.request('GET', '/users/me');
      await m.settled();
      expect(await m.getAccessToken()).not.toBe(before);
      await vi.advanceTimersByTimeAsync(60 * 60 * 1000);
    }
    // 47 hours of calls: the day-1 and day-2 boundaries at most.
    expect(storage.tokenWrites - writesBefore).toBeGreaterThanOrEqual(1);
    expect(storage.tokenWrites - writesBefore).toBeLessThanOrEqual(2);
    expect((await readTokens(storage))?.accessToken).not.toBe(stored);
  });

  it('refreshes when 10% of a 10-day lifetime remains, "never more than needed"', async () => {
    await boot({ accessTokenLifetimeSeconds: 10 * 86_400, accessTokenExtensionSeconds: 1 });
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    expect(sim.stats.grants).toBe(1);
    await days(m, 8.5);
    expect(sim.stats.grants).toBe(1);
    await days(m, 1);
    expect(sim.stats.grants).toBe(2);
    await days(m, 20.5);
    expect(sim.stats.grants).toBe(4); // days 9, 18, 27
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('timers never throw: a keep-alive during an outage is retried with back-off and the link survives', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    sim.faults.failNext(5, 503, '/users/me');
    await days(m, 2, 60 * 60 * 1000);
    expect(m.state).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('stop() clears the timers: nothing runs afterwards', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const calls = sim.stats.apiCalls;
    await days(m, 3);
    expect(sim.stats.apiCalls).toBe(calls);
  });
});

describe('settings UI: link, authorization code, test connection, unlink', () => {
  it('linkWithRefreshToken spends the pasted token once and links', async () => {
    await boot();
    const m = manager();
    await m.start();
    const states: LinkState[] = [];
    m.onStateChange((state) => states.push(state));
    const pasted = sim.issueRefreshToken();
    await m.linkWithRefreshToken(pasted);
    expect(m.state).toBe('linked');
    expect(states).toEqual(['linked']);
    expect(sim.refreshTokenState(pasted)).toBe('used');
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('a refused pasted refresh token throws RefreshRejectedError', async () => {
    await boot();
    const m = manager();
    await m.start();
    await expect(m.linkWithRefreshToken('rt_not-a-real-token')).rejects.toBeInstanceOf(RefreshRejectedError);
    expect(m.state).toBe('reauthorizationNeeded');
  });

  it('exchangeAuthorizationCode stores the result like a fresh link', async () => {
    await boot();
    const m = manager();
    await m.start();
    const redirectUri = 'http://127.0.0.1:1/callback';
    const authorize = await fetch(`${sim.authUrl}/authorization?response_type=code&auto=1&client_id=${sim.account.clientId}&redirect_uri=${encodeURIComponent(redirectUri)}&state=s`, { redirect: 'manual' });
    const code = new URL(authorize.headers.get('location') ?? '').searchParams.get('code') ?? '';
    await m.exchangeAuthorizationCode({ code, redirectUri });
    expect(m.state).toBe('linked');
    expect(sim.stats.codeGrants).toBe(1);
    const record = await readTokens(storage);
    expect(sim.refreshTokenState(record?.refreshToken ?? '')).toBe('issued');
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    await expect(m.exchangeAuthorizationCode({ code, redirectUri })).rejects.toBeInstanceOf(RefreshRejectedError);
  });

  it('testConnection uses the access token and never spends the refresh token while it is accepted', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    expect(await m.testConnection()).toMatchObject({ ok: true });
    expect(sim.stats.grants).toBe(1);
    sim.revokeAccessTokens();
    expect(await m.testConnection()).toMatchObject({ ok: true });
    expect(sim.stats.grants).toBe(2);
  });

  it('unlink() deletes tokens.json and moves to unlinked', async () => {
    await boot();
    const m = manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    await m.unlink();
    expect(m.state).toBe('unlinked');
    expect(await readTokens(storage)).toBeUndefined();
    await expect(m.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
    expect(await m.testConnection()).toMatchObject({ ok: false });
  });
});
