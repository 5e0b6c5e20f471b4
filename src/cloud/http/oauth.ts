// The token endpoint: its two calls, the refresh grant (spec "Token refresh") and the
// authorization-code exchange of the settings UI's link flow, and what its tokens say. The calls
// return an outcome instead of throwing, because the caller must treat "the server may have used
// the refresh token" very differently from "the request never left this machine"; grantError
// turns a failed outcome into the typed error callers decide by, in words for the user.
import { z } from 'zod/v3';

import { CloudError, RateLimitedError, RefreshRejectedError, RequestRejectedError, TransientError } from './errors.js';
import { describeNetworkError, networkErrorCode } from './network-error.js';
import { parseRetryAfter } from './retry-after.js';

export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  // Spec: integer seconds. Tolerate a numeric string; a missing value means "expiry unknown".
  expires_in: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).optional(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

export type GrantOutcome =
  /** 2xx with a usable body. */
  | { kind: 'tokens'; tokens: TokenResponse; receivedAt: number }
  /**
   * 400 with `invalid_grant` or without a readable `error`: the refresh token (or code) is spent,
   * expired or revoked.
   */
  | { kind: 'rejected'; status: number; oauthError?: string }
  /**
   * 400 with `invalid_client`, `unauthorized_client` or `invalid_request`, or 401/403: our own
   * client id, client secret or request is wrong, so the refresh token was not consumed.
   */
  | { kind: 'clientRejected'; status: number; oauthError?: string; setting: SettingToFix }
  /**
   * 400 with any other OAuth error (`server_error`, `temporarily_unavailable`, `slow_down`,
   * `invalid_scope`, a word nobody knows): it says nothing about the refresh token, which is kept
   * and tried again later. `oauthError` is absent when the word is not safe to show.
   */
  | { kind: 'otherError'; status: number; oauthError?: string }
  /** 429: come back later. Nothing was consumed. */
  | { kind: 'rateLimited'; retryAfterMs?: number }
  /**
   * 503: the service says it cannot handle requests now (overload or maintenance; RFC 9110), so the
   * grant was not processed and the refresh token is still unused. Other 5xx answers may come after
   * the rotation and count as lost.
   */
  | { kind: 'unavailable'; retryAfterMs?: number }
  /** The request provably never reached the server (connection refused, name not found). */
  | { kind: 'notSent'; detail: string }
  /** The request may have reached the server, but no usable answer came back (timeout, reset, 5xx, bad body). */
  | { kind: 'lost'; detail: string };

export interface GrantRequest {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  fields: Record<string, string>;
  timeoutMs: number;
  fetch: typeof fetch;
  now: () => number;
}

/** The plugin setting a client error points at, named as in the plugin's config. */
export type SettingToFix = 'clientSecret' | 'clientId' | 'clientId and clientSecret';

/**
 * RFC 6749 section 5.2 errors that blame the client, not the grant: the service did not look at
 * the refresh token, so it is still unused. `invalid_client` is failed client authentication,
 * which with a known client id is nearly always the secret; `unauthorized_client` means this
 * client id may not use the grant; `invalid_request` is a missing or malformed parameter, such as
 * an empty or pasted-with-spaces id or secret.
 */
const CLIENT_ERRORS: Readonly<Record<string, SettingToFix>> = {
  invalid_client: 'clientSecret',
  unauthorized_client: 'clientId',
  invalid_request: 'clientId and clientSecret',
};

/** OAuth error codes are short ASCII words; anything else is not shown (it could echo input). */
const SHOWABLE_ERROR = /^[a-z_]{1,40}$/;

/**
 * Reads a 4xx answer of the token endpoint by its OAuth `error` (RFC 6749 section 5.2), compared
 * case-insensitively. `oauthError` is the body's `error` as sent, undefined when there is none.
 */
export function classifyRefusal(status: number, oauthError: string | undefined): Extract<GrantOutcome, { kind: 'rejected' | 'clientRejected' | 'otherError' }> {
  const word = oauthError?.trim().toLowerCase();
  const shown = word !== undefined && SHOWABLE_ERROR.test(word) ? { oauthError: word } : {};
  const setting = word !== undefined ? CLIENT_ERRORS[word] : undefined;
  if (setting !== undefined) return { kind: 'clientRejected', status, ...shown, setting };
  if (status === 400) {
    // Only invalid_grant (or no readable error at all) says the refresh token is spent.
    if (word === undefined || word === '' || word === 'invalid_grant') return { kind: 'rejected', status, ...shown };
    return { kind: 'otherError', status, ...shown };
  }
  // 401/403 without a client error word: client authentication failed (RFC 6749 section 5.2).
  return { kind: 'clientRejected', status, ...shown, setting: 'clientId and clientSecret' };
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']);

/** The body's `error` as sent (only classifyRefusal decides what is shown), undefined when not a string. */
async function oauthErrorOf(response: Response): Promise<string | undefined> {
  try {
    const body: unknown = JSON.parse(await response.text());
    const error = (body as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/** POST {authUrl}/access_token, form encoded with client_id and client_secret. */
export async function postTokenGrant(request: GrantRequest): Promise<GrantOutcome> {
  const url = `${request.authUrl.replace(/\/+$/, '')}/access_token`;
  const body = new URLSearchParams({ client_id: request.clientId, client_secret: request.clientSecret, ...request.fields });
  let response: Response;
  try {
    response = await request.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      signal: AbortSignal.timeout(request.timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const code = networkErrorCode(error);
    if (code !== undefined && NOT_SENT_CODES.has(code)) return { kind: 'notSent', detail: describeNetworkError(error) };
    return { kind: 'lost', detail: describeNetworkError(error) };
  }

  if (response.status === 400 || response.status === 401 || response.status === 403) {
    return classifyRefusal(response.status, await oauthErrorOf(response));
  }
  if (response.status === 429) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'rateLimited', retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), request.now()) };
  }
  if (response.status === 503) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'unavailable', retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), request.now()) };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'lost', detail: `the token endpoint answered ${response.status}` };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return { kind: 'lost', detail: `the answer broke off (${describeNetworkError(error)})` };
  }
  const receivedAt = request.now();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'lost', detail: 'the answer was not JSON' };
  }
  const parsed = tokenResponseSchema.safeParse(json);
  if (!parsed.success) return { kind: 'lost', detail: 'the answer lacked access_token or refresh_token' };
  return { kind: 'tokens', tokens: parsed.data, receivedAt };
}

// An access token's expiry, when it happens to be a JWT. Nothing here verifies a signature (the
// service does that); a token that cannot be decoded is simply "expiry unknown".
export interface JwtTimes {
  /** `exp` in epoch milliseconds. */
  expiresAt?: number;
  /** `iat` in epoch milliseconds. */
  issuedAt?: number;
}

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

/** `exp`/`iat` of a JWT, tolerant of anything that is not one (returns {}). */
export function decodeJwtTimes(token: string): JwtTimes {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined || parts[1] === '') return {};
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null) return {};
    const claims = payload as Record<string, unknown>;
    const times: JwtTimes = {};
    const expiresAt = seconds(claims.exp);
    const issuedAt = seconds(claims.iat);
    if (expiresAt !== undefined) times.expiresAt = expiresAt;
    if (issuedAt !== undefined) times.issuedAt = issuedAt;
    return times;
  } catch {
    return {};
  }
}

/**
 * The token endpoint blamed our own settings (RFC 6749 `invalid_client`, `unauthorized_client`,
 * `invalid_request`): which setting to fix, and that nothing was lost. `code` is the OAuth error
 * word or the HTTP status, never anything the service echoed.
 */
export function settingsAdvice(setting: SettingToFix, code: string): string {
  const what = setting === 'clientSecret'
    ? 'the service did not accept the client credentials, which usually means clientSecret is wrong (or clientId belongs to another client)'
    : setting === 'clientId'
      ? 'the service says this client may not renew tokens, so clientId is probably wrong'
      : 'the service found the renewal request malformed, so check clientId and clientSecret for missing characters or stray spaces';
  return `${what} (${code}). Fix ${setting === 'clientId and clientSecret' ? 'them' : setting} in the plugin settings and restart Homebridge: the refresh token was not used and links again as it is.`;
}

/** A failed outcome as the typed error callers decide by. */
/** `what` names the attempt, e.g. "The token renewal failed". */
export function grantError(outcome: Exclude<GrantOutcome, { kind: 'tokens' }>, what: string): CloudError {
  switch (outcome.kind) {
    case 'rejected':
      return new RefreshRejectedError(`${what}: the service refused it${outcome.oauthError ? ` (${outcome.oauthError})` : ''}.`, outcome.oauthError);
    case 'clientRejected':
      return new RequestRejectedError(`${what}: ${settingsAdvice(outcome.setting, outcome.oauthError ?? String(outcome.status))}`, outcome.status);
    case 'otherError':
      return new TransientError(`${what}: the service answered ${outcome.oauthError ?? 'an error'} (${outcome.status}), which says nothing about the refresh token; it is kept for the next attempt.`);
    case 'rateLimited':
      return new RateLimitedError(`${what}: the service asked to slow down.`, outcome.retryAfterMs);
    case 'unavailable':
      return new TransientError(`${what}: the service is unavailable for now (503); the refresh token is kept for the next attempt.`);
    case 'notSent':
    case 'lost':
      return new TransientError(`${what}: ${outcome.detail}.`);
  }
}

/** Expiry from a token response: the JWT's own `exp` wins over `expires_in`. */
export function expiryOf(jwtExpiresAt: number | undefined, expiresInSeconds: number | undefined, receivedAt: number): number | undefined {
  if (jwtExpiresAt !== undefined) return jwtExpiresAt;
  if (expiresInSeconds !== undefined && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0) return receivedAt + expiresInSeconds * 1000;
  return undefined;
}
