// The two calls to the token endpoint: the refresh grant (spec "Token refresh") and the
// authorization-code exchange of the settings UI's link flow. They return an outcome instead of
// throwing, because the caller must treat "the server may have used the refresh token" very
// differently from "the request never left this machine".
import { z } from 'zod';

import { describeNetworkError, networkErrorCode } from '../http/network-error.js';
import { parseRetryAfter } from '../http/retry-after.js';

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
  /** 400: the grant was refused (refresh token used, expired or revoked; or a bad code). Nothing was consumed. */
  | { kind: 'rejected'; status: number; oauthError?: string }
  /** 401/403: the client id or secret is wrong. Nothing was consumed. */
  | { kind: 'clientRejected'; status: number; oauthError?: string }
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
  /** Called when response headers arrived, before the body is read (crash tests pause here). */
  onResponse?: () => Promise<void>;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']);

async function oauthErrorOf(response: Response): Promise<string | undefined> {
  try {
    const body: unknown = JSON.parse(await response.text());
    const error = (body as { error?: unknown } | null)?.error;
    // OAuth error codes are short ASCII words; anything else is not shown (it could echo input).
    return typeof error === 'string' && /^[a-z_]{1,40}$/.test(error) ? error : undefined;
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
  if (request.onResponse) await request.onResponse();

  if (response.status === 400) return { kind: 'rejected', status: 400, oauthError: await oauthErrorOf(response) };
  if (response.status === 401 || response.status === 403) {
    return { kind: 'clientRejected', status: response.status, oauthError: await oauthErrorOf(response) };
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
