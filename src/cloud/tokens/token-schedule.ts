// When to run the keep-alive call and the refresh grant: pure arithmetic, so every rule has a
// unit test without waiting.
import { doublingDelay } from '../../util/backoff.js';

export const DAY_MS = 24 * 60 * 60 * 1000;
/** A successful API call at least this often keeps the access token valid (spec: never under 24 h). */
export const KEEP_ALIVE_INTERVAL_MS = DAY_MS;
/** Header tokens are written to disk at most this often (spec: once per 24 h suffices). */
export const HEADER_SAVE_INTERVAL_MS = DAY_MS;
export const MAX_REFRESH_MARGIN_MS = 7 * DAY_MS;
export const REFRESH_MARGIN_SHARE = 0.1;
/** setTimeout cannot wait longer than this; longer waits are split into several timers. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long before expiry the refresh grant is due: the smaller of 7 days and 10% of the lifetime. */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.max(0, Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs * REFRESH_MARGIN_SHARE));
}

/** When the refresh grant is due; undefined when the expiry is unknown (then only a 401 triggers one). */
export function refreshDueAt(expiresAt: number | undefined, issuedAt: number | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  // Without an issue time, assume the spec's usual four months so the margin is the 7-day cap.
  const lifetime = issuedAt !== undefined && issuedAt < expiresAt ? expiresAt - issuedAt : 120 * DAY_MS;
  return expiresAt - refreshMarginMs(lifetime);
}

/**
 * A refresh token is valid for at most one year (spec). Header rotation can keep the access token
 * alive for longer than that, so the grant would never run: the refresh token is spent once it is
 * this old, with two months to spare for outages and retries.
 */
export const REFRESH_TOKEN_SPEND_AGE_MS = 300 * DAY_MS;

/**
 * When the refresh token must be spent for its age: from the last grant, else from the link (a
 * seed's own issue time is unknown, so a seed counts from when it was linked).
 */
export function refreshTokenDueAt(record: { lastRefreshAt?: number | undefined; linkedAt: number }): number {
  return (record.lastRefreshAt ?? record.linkedAt) + REFRESH_TOKEN_SPEND_AGE_MS;
}

/** Expiry from a token response: the JWT's own `exp` wins over `expires_in`. */
export function expiryOf(jwtExpiresAt: number | undefined, expiresInSeconds: number | undefined, receivedAt: number): number | undefined {
  if (jwtExpiresAt !== undefined) return jwtExpiresAt;
  if (expiresInSeconds !== undefined && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0) return receivedAt + expiresInSeconds * 1000;
  return undefined;
}

/** Back-off after a failed keep-alive or refresh: 1 min doubling to 1 h. */
export function retryDelayMs(failures: number): number {
  return doublingDelay(failures, { firstMs: 60_000, maxMs: 60 * 60 * 1000 });
}

/** Delay for the next timer: never negative, never beyond what setTimeout can do. */
export function timerDelay(dueAt: number, now: number, minMs = 1000): number {
  return Math.min(MAX_TIMER_MS, Math.max(minMs, dueAt - now));
}
