// One authenticated call to the service's API, `{baseUrl}{path}`: the API key and an access token
// in their headers, JSON, a timeout, and no redirects (a redirect would carry the token to another
// address). The API client and the token checks both send through here, so every call to the
// service is built the same way; what an answer means is up to each caller.
import { ACCESS_TOKEN_HEADER, API_KEY_HEADER } from '../../settings.js';
import type { HttpMethod } from './api.js';

export interface ServiceEndpoint {
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
}

export interface ServiceCall {
  method: HttpMethod;
  /** From serviceUrl(). */
  url: string;
  token: string;
  /** Sent as JSON when present. */
  body?: unknown;
  timeoutMs: number;
}

/** `{baseUrl}{path}?{query}`; throws a TypeError for an address that is no URL. */
export function serviceUrl(baseUrl: string, path: string, query?: Record<string, string>): string {
  const url = new URL(`${baseUrl}${path.startsWith('/') ? path : `/${path}`}`);
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  return url.toString();
}

/** Resolves with any answer, 4xx and 5xx included; rejects as fetch does when none came. */
export function sendServiceRequest(endpoint: ServiceEndpoint, call: ServiceCall): Promise<Response> {
  return endpoint.fetch(call.url, {
    method: call.method,
    headers: {
      [API_KEY_HEADER]: endpoint.apiKey,
      [ACCESS_TOKEN_HEADER]: call.token,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    signal: AbortSignal.timeout(call.timeoutMs),
    redirect: 'error',
  });
}
