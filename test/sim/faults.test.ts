import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from './index.js';
import { api, grant, refreshFields, tokenRequest } from './test-helpers.js';

let sim: Simulator;
let token: string;

beforeEach(async () => {
  sim = await startSimulator({ locks: [{ id: 'L1' }] });
  token = (await grant(sim)).accessToken;
});
afterEach(async () => {
  await sim.close();
});

describe('README The service simulator: Fault injection (sim.faults)', () => {
  it('failNext(n, status): the next n responses are that 5xx, then normal service', async () => {
    sim.faults.failNext(2, 502);
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(502);
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(502);
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
  });

  it('failNext defaults to 503 and applies to the token endpoint too, without spending the refresh token', async () => {
    sim.faults.failNext(1);
    const refresh = sim.issueRefreshToken();
    expect((await tokenRequest(sim, refreshFields(sim, refresh))).status).toBe(503);
    expect(sim.refreshTokenState(refresh)).toBe('issued');
    expect((await tokenRequest(sim, refreshFields(sim, refresh))).status).toBe(200);
  });

  it('rateLimitNext(n, seconds): 429 with Retry-After', async () => {
    sim.faults.rateLimitNext(1, 7);
    const reply = await api(sim, token, 'GET', '/users/me');
    expect(reply.status).toBe(429);
    expect(reply.headers.get('retry-after')).toBe('7');
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
  });

  it('dropNext(n): the socket is destroyed without a reply', async () => {
    sim.faults.dropNext(1);
    await expect(api(sim, token, 'GET', '/users/me')).rejects.toThrow();
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
  });

  it('per-route selection: only the named route fails; other routes pass through', async () => {
    sim.faults.failNext(1, 500, '/webhook/:lockID');
    sim.faults.rateLimitNext(1, 3, 'POST /oauth/access_token');
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
    expect((await api(sim, token, 'POST', '/webhook/L1', {})).status).toBe(500);
    expect((await api(sim, token, 'POST', '/webhook/L1', {})).status).toBe(400);
    expect((await tokenRequest(sim, refreshFields(sim, sim.issueRefreshToken()))).status).toBe(429);
    sim.faults.dropNext(1, 'GET /api/users/locks/mine');
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
    await expect(api(sim, token, 'GET', '/users/locks/mine')).rejects.toThrow();
  });

  it('latencyMs delays API and token endpoint replies', async () => {
    sim.faults.latencyMs = 150;
    const started = performance.now();
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    sim.faults.latencyMs = 0;
  });

  it('rotateThenFail("drop"): the rotation is committed (old token used, new one stored), then the socket is destroyed', async () => {
    const refresh = sim.issueRefreshToken();
    sim.faults.rotateThenFail('drop');
    await expect(tokenRequest(sim, refreshFields(sim, refresh))).rejects.toThrow();
    expect(sim.refreshTokenState(refresh)).toBe('used');
    expect(sim.stats.grants).toBe(2);
    const again = await tokenRequest(sim, refreshFields(sim, refresh));
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('rotateThenFail("500"): the rotation is committed, then the reply is a 500', async () => {
    const refresh = sim.issueRefreshToken();
    sim.faults.rotateThenFail('500');
    const reply = await tokenRequest(sim, refreshFields(sim, refresh));
    expect(reply.status).toBe(500);
    expect(reply.body.refresh_token).toBeUndefined();
    expect(sim.refreshTokenState(refresh)).toBe('used');
    expect((await tokenRequest(sim, refreshFields(sim, sim.issueRefreshToken()))).status).toBe(200);
  });

  it('clear() removes pending faults', async () => {
    sim.faults.failNext(5);
    sim.faults.dropNext(5);
    sim.faults.clear();
    expect((await api(sim, token, 'GET', '/users/me')).status).toBe(200);
  });

  it('failNext only takes 5xx statuses', () => {
    expect(() => { sim.faults.failNext(1, 404); }).toThrow(RangeError);
  });
});
