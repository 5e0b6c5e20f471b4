// The token endpoint (spec "Token refresh"): the form it is sent, and each answer as an
// outcome that tells whether the refresh token may have been spent; each failed outcome as a typed
// error (refresh 400 is "re-authorization needed"; the rest is "try again later" or a setting to
// fix); and the JWT's exp and iat (the refresh grant runs when the token nears expiry, "expires_in,
// or the JWT exp").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { RateLimitedError, RefreshRejectedError, RequestRejectedError, TransientError } from '../../../src/cloud/http/errors.js';
import { nodeFetch } from '../../../src/cloud/http/node-fetch.js';
import { decodeJwtTimes, grantError, postTokenGrant, type GrantOutcome, type GrantRequest } from '../../../src/cloud/http/oauth.js';
import { closedPort, startLocalServer, type LocalServer } from '../local-server.js';

let server: LocalServer;

beforeEach(async () => {
  server = await startLocalServer();
});

afterEach(async () => {
  await server.close();
});

const NOW = Date.UTC(2026, 0, 1);

function grant(change: Partial<GrantRequest> = {}): Promise<GrantOutcome> {
  return postTokenGrant({
    authUrl: `${server.base}/oauth/`,
    clientId: 'client-1',
    clientSecret: 'secret-1',
    fields: { grant_type: 'refresh_token', refresh_token: 'rt-1' },
    timeoutMs: 1_000,
    fetch: nodeFetch,
    now: () => NOW,
    ...change,
  });
}

function answer(status: number, body: string, headers: Record<string, string> = {}): void {
  server.handle((_request, _body, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  });
}

describe('spec "Token refresh": POST {authUrl}/access_token, form encoded with the client credentials', () => {
  it('sends the fields with client_id and client_secret, and reads the tokens', async () => {
    answer(200, JSON.stringify({ access_token: 'at-2', refresh_token: 'rt-2', expires_in: '3600' }));
    const outcome = await grant();
    expect(outcome).toEqual({ kind: 'tokens', tokens: { access_token: 'at-2', refresh_token: 'rt-2', expires_in: 3600 }, receivedAt: NOW });
    expect(server.seen[0]).toMatchObject({ method: 'POST', url: '/oauth/access_token' });
    expect(server.seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(server.seen[0]?.body))).toEqual({ client_id: 'client-1', client_secret: 'secret-1', grant_type: 'refresh_token', refresh_token: 'rt-1' });
  });
});

describe('every answer says whether the refresh token may have been spent', () => {
  it('400 invalid_grant is "rejected" (the token is spent); the OAuth error is shown only when it is a plain code', async () => {
    answer(400, '{"error":"invalid_grant"}');
    expect(await grant()).toEqual({ kind: 'rejected', status: 400, oauthError: 'invalid_grant' });
    answer(400, '{"error":"Invalid_Grant"}');
    expect(await grant()).toEqual({ kind: 'rejected', status: 400, oauthError: 'invalid_grant' });
    // A readable error that is not invalid_grant says nothing about the token; its text is not shown.
    answer(400, '{"error":"rt-1 is not valid"}');
    expect(await grant()).toEqual({ kind: 'otherError', status: 400 });
    answer(400, '{"error":"TEMPORARILY_UNAVAILABLE"}');
    expect(await grant()).toEqual({ kind: 'otherError', status: 400, oauthError: 'temporarily_unavailable' });
    answer(400, '{"error":"INVALID_CLIENT"}');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 400, oauthError: 'invalid_client', setting: 'clientSecret' });
  });

  it('401 and 403 are the client credentials; 429 and 503 carry Retry-After; nothing was spent', async () => {
    answer(401, '{"error":"invalid_client"}');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 401, oauthError: 'invalid_client', setting: 'clientSecret' });
    answer(403, '');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 403, setting: 'clientId and clientSecret' });
    answer(429, '', { 'retry-after': '30' });
    expect(await grant()).toEqual({ kind: 'rateLimited', retryAfterMs: 30_000 });
    answer(503, '', { 'retry-after': '5' });
    expect(await grant()).toEqual({ kind: 'unavailable', retryAfterMs: 5_000 });
  });

  it('RFC 6749 5.2: a 400 that blames the client is no verdict on the refresh token, and names the setting', async () => {
    answer(400, '{"error":"invalid_client","error_description":"client authentication failed"}');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 400, oauthError: 'invalid_client', setting: 'clientSecret' });
    answer(400, '{"error":"unauthorized_client"}');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 400, oauthError: 'unauthorized_client', setting: 'clientId' });
    answer(400, '{"error":"invalid_request"}');
    expect(await grant()).toEqual({ kind: 'clientRejected', status: 400, oauthError: 'invalid_request', setting: 'clientId and clientSecret' });
    // Only invalid_grant, or no readable error, means the token is spent.
    answer(400, '{"error":"invalid_grant"}');
    expect((await grant()).kind).toBe('rejected');
    answer(400, 'not json');
    expect((await grant()).kind).toBe('rejected');
    answer(400, '{"error":""}');
    expect((await grant()).kind).toBe('rejected');
    for (const word of ['server_error', 'temporarily_unavailable', 'slow_down', 'invalid_scope', 'unsupported_grant_type', 'brand_new_word']) {
      answer(400, JSON.stringify({ error: word }));
      expect(await grant()).toEqual({ kind: 'otherError', status: 400, oauthError: word });
    }
  });

  it('a refused connection provably never reached the server: "notSent"', async () => {
    expect(await grant({ authUrl: await closedPort() })).toEqual({ kind: 'notSent', detail: 'network error ECONNREFUSED' });
  });

  it('other 5xx, a timeout, a body without both tokens or no JSON: "lost" (the token may be spent)', async () => {
    answer(500, '{}');
    expect(await grant()).toEqual({ kind: 'lost', detail: 'the token endpoint answered 500' });
    answer(200, '{"access_token":"at-2"}');
    expect(await grant()).toEqual({ kind: 'lost', detail: 'the answer lacked access_token or refresh_token' });
    answer(200, 'not json');
    expect(await grant()).toEqual({ kind: 'lost', detail: 'the answer was not JSON' });
    server.handle(() => undefined);
    expect(await grant({ timeoutMs: 50 })).toEqual({ kind: 'lost', detail: 'no answer in time' });
  });
});

const jwt = (claims: object): string =>
  `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('refresh "when the token nears expiry (expires_in, or the JWT exp)"', () => {
  it('reads exp and iat of a JWT as epoch milliseconds', () => {
    expect(decodeJwtTimes(jwt({ exp: 1_800_000_000, iat: 1_700_000_000 }))).toEqual({ expiresAt: 1_800_000_000_000, issuedAt: 1_700_000_000_000 });
  });

  it('"a token that cannot be decoded is not an error": opaque, broken or odd tokens give no expiry', () => {
    for (const token of ['opaque-token', 'a.b', 'a.!!!.c', `x.${Buffer.from('[1,2]').toString('base64url')}.y`, jwt({ exp: 'soon' }), jwt({ exp: -5 }), '', '..']) {
      expect(decodeJwtTimes(token)).toEqual({});
    }
  });
});

describe('what each failed grant means to the caller', () => {
  const what = 'The token renewal failed';

  it('400 is a refused grant, with the OAuth error code when the service sent one', () => {
    const error = grantError({ kind: 'rejected', status: 400, oauthError: 'invalid_grant' }, what);
    expect(error).toBeInstanceOf(RefreshRejectedError);
    expect(error.message).toBe('The token renewal failed: the service refused it (invalid_grant).');
    expect(error).toMatchObject({ oauthError: 'invalid_grant' });
    expect(grantError({ kind: 'rejected', status: 400 }, what).message).toBe('The token renewal failed: the service refused it.');
  });

  it('a client error names the setting to fix and says the refresh token was not used', () => {
    const error = grantError({ kind: 'clientRejected', status: 400, oauthError: 'invalid_client', setting: 'clientSecret' }, what);
    expect(error).toBeInstanceOf(RequestRejectedError);
    expect(error.status).toBe(400);
    expect(error.message).toContain('Fix clientSecret in the plugin settings');
    expect(error.message).toContain('(invalid_client)');
    expect(error.message).toContain('refresh token was not used');
    expect(grantError({ kind: 'clientRejected', status: 400, oauthError: 'unauthorized_client', setting: 'clientId' }, what).message).toContain('Fix clientId');
    expect(grantError({ kind: 'clientRejected', status: 403, setting: 'clientId and clientSecret' }, what).message).toContain('check clientId and clientSecret');
  });

  it('429 keeps the Retry-After; 503 and no answer are transient', () => {
    const limited = grantError({ kind: 'rateLimited', retryAfterMs: 30_000 }, what);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited).toMatchObject({ retryAfterMs: 30_000 });
    expect(grantError({ kind: 'unavailable' }, what)).toBeInstanceOf(TransientError);
    expect(grantError({ kind: 'notSent', detail: 'network error ECONNREFUSED' }, what).message).toBe('The token renewal failed: network error ECONNREFUSED.');
    expect(grantError({ kind: 'lost', detail: 'no answer in time' }, what)).toBeInstanceOf(TransientError);
  });

  it('a 400 with another OAuth error is transient and says the refresh token is kept', () => {
    const error = grantError({ kind: 'otherError', status: 400, oauthError: 'temporarily_unavailable' }, what);
    expect(error).toBeInstanceOf(TransientError);
    expect(error.message).toContain('temporarily_unavailable (400)');
    expect(error.message).toContain('it is kept');
    expect(grantError({ kind: 'otherError', status: 400 }, what).message).toContain('an error (400)');
  });
});
