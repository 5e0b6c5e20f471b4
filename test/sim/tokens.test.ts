import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, startSimulator, type Simulator } from './index.js';
import { api, grant, jwtClaims, refreshFields, tokenRequest } from './test-helpers.js';
import { DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS, ONE_YEAR_MS } from './tokens.js';

let sim: Simulator;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock();
  sim = await startSimulator({ clock, locks: [{ id: 'L1' }] });
});
afterEach(async () => {
  await sim.close();
});

describe('Token refresh endpoint (spec: Endpoints > Token refresh)', () => {
  it('issued refresh token + refresh grant -> used; response carries a new refresh token and a new access token', async () => {
    const { status, body } = await tokenRequest(sim, refreshFields(sim, sim.account.refreshToken));
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(typeof body.access_token).toBe('string');
    expect(body.refresh_token).not.toBe(sim.account.refreshToken);
    expect(Number.isInteger(body.expires_in)).toBe(true);
    expect(sim.refreshTokenState(sim.account.refreshToken)).toBe('used');
    expect(sim.refreshTokenState(body.refresh_token as string)).toBe('issued');
    expect(sim.stats.grants).toBe(1);
  });

  it('used refresh token + refresh grant -> unchanged; HTTP 400 with an OAuth 2.0 error body', async () => {
    const token = sim.issueRefreshToken();
    await grant(sim, token);
    const { status, body } = await tokenRequest(sim, refreshFields(sim, token));
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_grant');
    expect(typeof body.error_description).toBe('string');
    expect(sim.refreshTokenState(token)).toBe('used');
    expect(sim.stats.grants).toBe(1);
  });

  it('issued refresh token + one year passes -> expired; a grant then gets 400 invalid_grant', async () => {
    const token = sim.issueRefreshToken();
    clock.advance(ONE_YEAR_MS - 1);
    expect(sim.refreshTokenState(token)).toBe('issued');
    clock.advance(1);
    expect(sim.refreshTokenState(token)).toBe('expired');
    const { status, body } = await tokenRequest(sim, refreshFields(sim, token));
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_grant' });
    expect(sim.refreshTokenState(token)).toBe('expired');
  });

  it('a refresh token just under one year old is still honoured', async () => {
    const token = sim.issueRefreshToken();
    clock.advance(ONE_YEAR_MS - 1000);
    expect((await tokenRequest(sim, refreshFields(sim, token))).status).toBe(200);
  });

  it('issued refresh token + revocation -> revoked; a grant then gets 400 invalid_grant', async () => {
    const token = sim.issueRefreshToken();
    sim.revokeRefreshToken(token);
    expect(sim.refreshTokenState(token)).toBe('revoked');
    const { status, body } = await tokenRequest(sim, refreshFields(sim, token));
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_grant' });
    expect(sim.refreshTokenState(token)).toBe('revoked');
  });

  it('an unknown refresh token gets 400 invalid_grant', async () => {
    const { status, body } = await tokenRequest(sim, refreshFields(sim, 'rt_made_up'));
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_grant');
  });

  it('client authentication by client_id and client_secret: a wrong secret gets 400 invalid_client and does not spend the token', async () => {
    const token = sim.issueRefreshToken();
    const { status, body } = await tokenRequest(sim, { ...refreshFields(sim, token), client_secret: 'wrong' });
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_client');
    expect(sim.refreshTokenState(token)).toBe('issued');
  });

  it('missing fields and a wrong grant_type get 400 with an OAuth 2.0 error', async () => {
    expect((await tokenRequest(sim, { client_id: sim.account.clientId, client_secret: sim.account.clientSecret, grant_type: 'refresh_token' })).body.error).toBe('invalid_request');
    expect((await tokenRequest(sim, { ...refreshFields(sim, sim.issueRefreshToken()), grant_type: 'password' })).body.error).toBe('unsupported_grant_type');
    expect((await tokenRequest(sim, { client_id: sim.account.clientId })).status).toBe(400);
  });

  it('the request must be form URL-encoded', async () => {
    const response = await fetch(`${sim.authUrl}/access_token`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(refreshFields(sim, sim.issueRefreshToken())),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('Access token (spec: Authentication; access token state table)', () => {
  it('access tokens are HS256 JWTs with sub, iat and exp; exp follows expires_in (default four months)', async () => {
    const { accessToken, expiresIn } = await grant(sim);
    expect(expiresIn).toBe(DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS);
    const header = JSON.parse(Buffer.from(accessToken.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(header.alg).toBe('HS256');
    const claims = jwtClaims(accessToken);
    expect(claims.sub).toBe(sim.account.userId);
    expect(claims.iat).toBe(Math.floor(clock.now() / 1000));
    expect(claims.exp).toBe(Math.floor(clock.now() / 1000) + expiresIn);
  });

  it('the lifetime is configurable (accessTokenLifetimeSeconds); expires_in and exp follow it', async () => {
    const short = await startSimulator({ clock, accessTokenLifetimeSeconds: 86_400 });
    try {
      const { accessToken, expiresIn } = await grant(short);
      expect(expiresIn).toBe(86_400);
      expect(jwtClaims(accessToken).exp).toBe(Math.floor(clock.now() / 1000) + 86_400);
    } finally {
      await short.close();
    }
  });

  it('valid + any successful API call -> valid; x-svc-access-token carries an updated token that extends validity slightly', async () => {
    const { accessToken } = await grant(sim);
    const reply = await api(sim, accessToken, 'GET', '/users/me');
    expect(reply.status).toBe(200);
    expect(reply.headerToken).toBeTruthy();
    const fresh = reply.headerToken as string;
    expect(fresh).not.toBe(accessToken);
    const oldExp = jwtClaims(accessToken).exp as number;
    const newExp = jwtClaims(fresh).exp as number;
    expect(newExp).toBeGreaterThan(oldExp);
    expect(newExp - oldExp).toBeLessThanOrEqual(86_400);
    expect((await api(sim, fresh, 'GET', '/users/me')).status).toBe(200);
    expect((await api(sim, accessToken, 'GET', '/users/me')).status).toBe(200);
  });

  it('valid + issue of a newer access token -> valid: older tokens stay valid', async () => {
    const first = await grant(sim);
    const second = await grant(sim, first.refreshToken);
    expect((await api(sim, first.accessToken, 'GET', '/users/me')).status).toBe(200);
    expect((await api(sim, second.accessToken, 'GET', '/users/me')).status).toBe(200);
  });

  it('invalid + any API call -> HTTP 401, with no fresh token header', async () => {
    const { accessToken } = await grant(sim);
    const tampered = `${accessToken.slice(0, -4)}AAAA`;
    for (const [method, path] of [['GET', '/users/me'], ['GET', '/users/locks/mine'], ['GET', '/users/doorbells/mine'], ['PUT', '/remoteoperate/L1/status'], ['DELETE', '/webhook/L1/x']] as const) {
      const reply = await api(sim, tampered, method, path);
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.headerToken).toBeNull();
    }
    expect((await api(sim, 'not-a-jwt', 'GET', '/users/me')).status).toBe(401);
    expect((await api(sim, undefined, 'GET', '/users/me')).status).toBe(401);
  });

  it('an expired access token gets 401', async () => {
    const { accessToken, expiresIn } = await grant(sim);
    clock.advance(expiresIn * 1000 - 1000);
    expect((await api(sim, accessToken, 'GET', '/users/me')).status).toBe(200);
    clock.advance(1000);
    expect((await api(sim, accessToken, 'GET', '/users/me')).status).toBe(401);
  });

  it('revokeAccessTokens: every access token so far becomes invalid (401); new grants work', async () => {
    const { accessToken, refreshToken } = await grant(sim);
    const reply = await api(sim, accessToken, 'GET', '/users/me');
    sim.revokeAccessTokens();
    expect((await api(sim, accessToken, 'GET', '/users/me')).status).toBe(401);
    expect((await api(sim, reply.headerToken ?? '', 'GET', '/users/me')).status).toBe(401);
    const next = await grant(sim, refreshToken);
    expect((await api(sim, next.accessToken, 'GET', '/users/me')).status).toBe(200);
  });

  it('every call checks x-svc-api-key: missing or wrong gets 403', async () => {
    const { accessToken } = await grant(sim);
    expect((await api(sim, accessToken, 'GET', '/users/me', undefined, 'wrong-key')).status).toBe(403);
    const response = await fetch(`${sim.baseUrl}/users/me`, { headers: { 'x-svc-access-token': accessToken } });
    expect(response.status).toBe(403);
  });
});

describe('Authorization-code flow (RFC 6749 4.1, for the settings UI)', () => {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const authorizeUrl = (extra = ''): string =>
    `${sim.authUrl}/authorization?response_type=code&client_id=${encodeURIComponent(sim.account.clientId)}&redirect_uri=${encodeURIComponent(redirectUri)}&state=s123${extra}`;

  async function codeFromConsent(): Promise<string> {
    const page = await fetch(authorizeUrl());
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('Allow');
    expect(html).toContain('method="post"');
    const response = await fetch(`${sim.authUrl}/authorization`, {
      method: 'POST', redirect: 'manual',
      body: new URLSearchParams({ response_type: 'code', client_id: sim.account.clientId, redirect_uri: redirectUri, state: 's123', decision: 'allow' }),
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('s123');
    return location.searchParams.get('code') ?? '';
  }

  const exchange = (code: string, uri = redirectUri) => tokenRequest(sim, {
    grant_type: 'authorization_code', code, redirect_uri: uri, client_id: sim.account.clientId, client_secret: sim.account.clientSecret,
  });

  it('consent page "Allow" redirects to redirect_uri?code=...&state=...; the code buys a token response', async () => {
    const code = await codeFromConsent();
    const { status, body } = await exchange(code);
    expect(status).toBe(200);
    expect(body).toMatchObject({ expires_in: DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS });
    expect(sim.refreshTokenState(body.refresh_token as string)).toBe('issued');
    expect((await api(sim, body.access_token as string, 'GET', '/users/me')).status).toBe(200);
    expect(sim.stats.grants).toBe(0);
  });

  it('?auto=1 redirects at once', async () => {
    const response = await fetch(authorizeUrl('&auto=1'), { redirect: 'manual' });
    expect(response.status).toBe(302);
    const code = new URL(response.headers.get('location') ?? '').searchParams.get('code') ?? '';
    expect((await exchange(code)).status).toBe(200);
  });

  it('codes are single use', async () => {
    const code = await codeFromConsent();
    expect((await exchange(code)).status).toBe(200);
    const again = await exchange(code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('codes are short-lived (10 minutes)', async () => {
    const code = await codeFromConsent();
    clock.advance(10 * 60 * 1000);
    const { status, body } = await exchange(code);
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_grant');
  });

  it('the redirect_uri must match the authorization request', async () => {
    const code = await codeFromConsent();
    expect((await exchange(code, 'http://127.0.0.1:9/other')).body.error).toBe('invalid_grant');
  });

  it('"Deny" redirects with error=access_denied; an unknown client_id is refused on the page', async () => {
    const denied = await fetch(`${sim.authUrl}/authorization`, {
      method: 'POST', redirect: 'manual',
      body: new URLSearchParams({ response_type: 'code', client_id: sim.account.clientId, redirect_uri: redirectUri, state: 's1', decision: 'deny' }),
    });
    expect(new URL(denied.headers.get('location') ?? '').searchParams.get('error')).toBe('access_denied');
    const unknown = await fetch(`${sim.authUrl}/authorization?response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(redirectUri)}`, { redirect: 'manual' });
    expect(unknown.status).toBe(400);
  });
});
