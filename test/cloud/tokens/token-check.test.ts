// GET /users/me as the check of access tokens ("New access tokens are checked with
// GET {baseUrl}/users/me before the old one is discarded").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { nodeFetch } from '../../../src/cloud/http/node-fetch.js';
import { checkToken } from '../../../src/cloud/tokens/token-check.js';
import { readTokens, tokenTestBed } from '../../fixtures/token-harness.js';
import { closedPort, startLocalServer, type LocalServer } from '../local-server.js';

const bed = tokenTestBed();

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
      expect(await checkToken(endpoint(), 't', 1_000)).toEqual({ kind: 'inconclusive', detail: `the service answered ${status}` });
    }
  });

  it('no answer (refused connection, timeout, a redirect elsewhere) is inconclusive, with the reason but no address', async () => {
    const refused = await checkToken({ ...endpoint(), baseUrl: await closedPort() }, 't', 1_000);
    expect(refused).toEqual({ kind: 'inconclusive', detail: 'network error ECONNREFUSED' });
    server.handle(() => undefined); // never answers
    expect(await checkToken(endpoint(), 't', 50)).toEqual({ kind: 'inconclusive', detail: 'no answer in time' });
    server.handle((_request, _body, response) => {
      response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      response.end();
    });
    expect(await checkToken(endpoint(), 't', 1_000)).toEqual({ kind: 'inconclusive', detail: 'network error ERR_REDIRECT' });
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
