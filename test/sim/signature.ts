// The `X-Svc-Signature` header the service puts on every callback:
// `t=<timestamp>,v=<HMAC-SHA256 of "t.body" keyed by the API key>`.
import { createHmac } from 'node:crypto';

export interface SignatureOptions {
  /** Text encoding of `v` (the spec leaves it open): hex by default. */
  encoding?: 'hex' | 'base64';
  /** Unit of `t`: unix seconds by default, or epoch milliseconds. */
  timestampUnit?: 's' | 'ms';
}

/** Per-delivery overrides for negative tests (stale, wrong key, tampered header). */
export interface SignatureOverrides extends SignatureOptions {
  /** Added to the clock before computing `t` (negative = in the past). */
  skewMs?: number;
  /** Sign with this secret instead of the API key. */
  secret?: string;
  /** Send this exact header value instead of a computed one. */
  header?: string;
  /** Send no signature header at all. */
  omit?: boolean;
}

export function signPayload(body: string, secret: string, nowMs: number, options: SignatureOptions = {}): string {
  const t = options.timestampUnit === 'ms' ? String(Math.floor(nowMs)) : String(Math.floor(nowMs / 1000));
  const v = createHmac('sha256', secret).update(`${t}.${body}`).digest(options.encoding ?? 'hex');
  return `t=${t},v=${v}`;
}
