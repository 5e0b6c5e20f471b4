// Small HTTP helpers for the simulator's own tests: form posts to the token endpoint and API calls.
import type { SimAccount } from './accounts.js';
import type { Simulator } from './index.js';

export async function tokenRequest(sim: Simulator, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${sim.authUrl}/access_token`, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

export function refreshFields(sim: Simulator, refreshToken: string, account: SimAccount = sim.account): Record<string, string> {
  return { grant_type: 'refresh_token', client_id: account.clientId, client_secret: account.clientSecret, refresh_token: refreshToken };
}

/** A successful refresh grant (with the account's client, the main one by default): the access token and the rotated refresh token. */
export async function grant(sim: Simulator, refreshToken = sim.issueRefreshToken(), account: SimAccount = sim.account): Promise<{ accessToken: string; refreshToken: string; expiresIn: number }> {
  const { status, body } = await tokenRequest(sim, refreshFields(sim, refreshToken, account));
  if (status !== 200) throw new Error(`grant failed: ${status}`);
  return { accessToken: body.access_token as string, refreshToken: body.refresh_token as string, expiresIn: body.expires_in as number };
}

export interface ApiReply {
  status: number;
  body: unknown;
  headerToken: string | null;
  headers: Headers;
}

export async function api(sim: Simulator, accessToken: string | undefined, method: string, path: string, body?: unknown, apiKey = sim.account.apiKey): Promise<ApiReply> {
  const headers: Record<string, string> = { 'x-svc-api-key': apiKey };
  if (accessToken !== undefined) headers['x-svc-access-token'] = accessToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${sim.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed, headerToken: response.headers.get('x-svc-access-token'), headers: response.headers };
}

export function jwtClaims(token: string): Record<string, unknown> {
  const part = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export function registration(url: string, clientID: string, notificationTypes: string[], token = 'hook-secret'): Record<string, unknown> {
  return { url, method: 'POST', clientID, header: 'x-lock-access-token', token, notificationTypes };
}
