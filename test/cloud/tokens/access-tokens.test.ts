// Access tokens for callers, and 401s ("401 from the API: one refresh attempt; refresh
// 400: state 're-authorization needed', logged once with what to do").
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { AuthorizationLostError, NotLinkedError, TransientError } from '../../../src/cloud/http/errors.js';
import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { nodeFetch } from '../../../src/cloud/http/node-fetch.js';
import { checkToken } from '../../../src/cloud/tokens/access-tokens.js';
import { type LinkState, REAUTHORIZATION_ADVICE } from '../../../src/cloud/tokens/token-manager.js';
import { reasonMessage } from '../../../src/util/reason-messages.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';
import { closedPort, type LocalServer, startLocalServer } from '../local-server.js';

const bed = tokenTestBed();

describe('401 from the API: one refresh attempt, then "re-authorization needed"', () => {
  it('a rejected access token gets one refresh and the caller a working token', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    const { token: fresh, renewed } = await m.handleUnauthorized(old);
    expect(fresh).not.toBe(old);
    expect(renewed).toBe(true);
    expect(await tokenWorks(sim, fresh)).toBe(true);
    expect(sim.stats.grants).toBe(2);
    expect(m.state).toBe('linked');
  });

  it('a 401 for a token already replaced answers with the newer token and spends nothing', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const old = await m.getAccessToken();
    await m.refreshNow();
    const current = await m.getAccessToken();
    const grants = sim.stats.grants;
    expect(await m.handleUnauthorized(old)).toEqual({ token: current, renewed: false });
    expect(sim.stats.grants).toBe(grants);
  });

  it('"50 concurrent callers needing a token during a refresh cause exactly one grant"', async () => {
    const { sim } = await bed.boot({ latencyMs: 20 });
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    sim.revokeAccessTokens();
    const grantsBefore = sim.stats.grants;
    const results = await Promise.all(Array.from({ length: 50 }, () => client.request('GET', '/users/me')));
    expect(results).toHaveLength(50);
    expect(sim.stats.grants - grantsBefore).toBe(1);
  });

  it('a token endpoint that cannot be reached is "try again later", not a lost link', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    sim.faults.failNext(1, 503, 'POST /oauth/access_token');
    await expect(m.handleUnauthorized(old)).rejects.toBeInstanceOf(TransientError);
    expect(m.state).toBe('linked');
    expect(bed.log.text('error')).toEqual([]);
  });

  it('a refused refresh token leads to reauthorizationNeeded, logged once with what to do, AuthorizationLostError to callers', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
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
    const errors = bed.log.text('error').filter((line) => line.includes(REAUTHORIZATION_ADVICE));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^Lock Access needs you to link your account again: /);
    expect(m.status()).toMatchObject({ state: 'reauthorizationNeeded' });
    expect((await readTokens(storage))?.state).toBe('reauthorizationNeeded');
    // A restart keeps the state and does not try the refused token again.
    const grants = sim.stats.byRoute['POST /oauth/access_token'];
    const again = bed.manager();
    expect(await again.start()).toBe('reauthorizationNeeded');
    expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(grants);
  });
});

// Tokens from answers' headers ("Every API response's x-svc-access-token header is kept in
// memory at once and persisted at most once per 24 h").
describe('header tokens are used at once and written at most once per 24 h (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 1) });
  });

  it('header tokens are used in memory at once and written to disk at most once per 24 h', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
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

  it('a token the service refused is never taken back from a header, and an empty header changes nothing', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    const { token: fresh } = await m.handleUnauthorized(old);
    m.noteResponseToken(old);
    m.noteResponseToken('');
    expect(await m.getAccessToken()).toBe(fresh);
    m.noteResponseToken('a-newer-token');
    expect(await m.getAccessToken()).toBe('a-newer-token');
  });
});

// GET /users/me as the check of access tokens ("New access tokens are checked with
// GET {baseUrl}/users/me before the old one is discarded").
describe('checkToken answers ok, unauthorized or inconclusive, and never throws', () => {
  let server: LocalServer;
  beforeEach(async () => {
    server = await startLocalServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const endpoint = () => ({ baseUrl: server.base, apiKey: 'key-1', fetch: nodeFetch });

  it('sends GET {baseUrl}/users/me with the API key and the token through the shared service request', async () => {
    server.handle((_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"userId":"u"}');
    });
    expect(await checkToken(endpoint(), 'token-1', 1_000)).toEqual({ kind: 'ok' });
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]).toMatchObject({ method: 'GET', url: '/users/me', body: '' });
    expect(server.seen[0]?.headers).toMatchObject({ 'x-svc-api-key': 'key-1', 'x-svc-access-token': 'token-1', accept: 'application/json' });
  });

  it('an answer carrying a newer token in x-svc-access-token hands it over; an empty header does not count', async () => {
    server.handle((request, _body, response) => {
      response.writeHead(200, { 'x-svc-access-token': request.headers['x-svc-access-token'] === 'a' ? 'newer' : '' });
      response.end();
    });
    expect(await checkToken(endpoint(), 'a', 1_000)).toEqual({ kind: 'ok', headerToken: 'newer' });
    expect(await checkToken(endpoint(), 'b', 1_000)).toEqual({ kind: 'ok' });
  });

  it('401 is "unauthorized"; any other refusal says nothing about the token', async () => {
    let status = 401;
    server.handle((_request, _body, response) => {
      response.writeHead(status);
      response.end('{}');
    });
    expect(await checkToken(endpoint(), 't', 1_000)).toEqual({ kind: 'unauthorized' });
    for (status of [403, 429, 500, 503]) {
      expect(await checkToken(endpoint(), 't', 1_000)).toEqual({ kind: 'inconclusive', detail: `the service answered ${status}`, reason: reasonMessage('reason.httpStatus', { status }) });
    }
  });

  it('no answer (refused connection, timeout, a redirect elsewhere) is inconclusive, with the reason but no address', async () => {
    const refused = await checkToken({ ...endpoint(), baseUrl: await closedPort() }, 't', 1_000);
    // The words for the log, and a reason code for the settings page.
    expect(refused).toEqual({ kind: 'inconclusive', detail: 'network error ECONNREFUSED', reason: reasonMessage('reason.network', { errorCode: 'ECONNREFUSED' }) });
    server.handle(() => undefined); // never answers
    expect(await checkToken(endpoint(), 't', 50)).toEqual({ kind: 'inconclusive', detail: 'no answer in time', reason: reasonMessage('reason.timeout') });
    server.handle((_request, _body, response) => {
      response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      response.end();
    });
    expect(await checkToken(endpoint(), 't', 1_000)).toMatchObject({ kind: 'inconclusive', detail: 'network error ERR_REDIRECT' });
  });
});

describe('a grant\'s new access token is checked before the old one is discarded', () => {
  it('"keep both until validated": when GET /users/me cannot answer, the old access token stays in use and the new one waits', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
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
    const next = bed.manager();
    await next.start();
    const promoted = await readTokens(storage);
    expect(promoted?.pendingAccessToken).toBeUndefined();
    expect(promoted?.accessToken).toBe(record?.pendingAccessToken?.token);
  });

  it('"if validation fails with 401, keep the old access token"', async () => {
    const { sim, storage } = await bed.boot();
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
    const first = bed.manager({ seeds: { refreshToken: seed } });
    await first.start();
    first.stop();
    const m = bed.manager({ fetch: fetchWithRefusal });
    await m.start();
    const oldAccess = await m.getAccessToken();
    await m.refreshNow();
    expect(await m.getAccessToken()).toBe(oldAccess);
    const record = await readTokens(storage);
    expect(record?.accessToken).toBe(oldAccess);
    expect(record?.pendingAccessToken).toBeUndefined();
    expect(sim.refreshTokenState(record?.refreshToken ?? '')).toBe('issued');
    expect(bed.log.text('warn').join('\n')).toContain('previous access token stays in use');
  });
});
