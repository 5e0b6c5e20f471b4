// Access tokens for callers, and 401s ("401 from the API: one refresh attempt; refresh
// 400: state 're-authorization needed', logged once with what to do").
import { describe, expect, it } from 'vitest';

import { AuthorizationLostError, NotLinkedError, TransientError } from '../../../src/cloud/http/errors.js';
import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { REAUTHORIZATION_ADVICE, type LinkState } from '../../../src/cloud/tokens/token-manager.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('401 from the API: one refresh attempt, then "re-authorization needed"', () => {
  it('a rejected access token gets one refresh and the caller a working token', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    const fresh = await m.handleUnauthorized(old);
    expect(fresh).not.toBe(old);
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
    expect(await m.handleUnauthorized(old)).toBe(current);
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
