// Pure verifier of the X-Svc-Signature header. No I/O; the clock is injected so
// every edge case is testable without sleeping.
//
// Which header problems are 400 and which are 401 (the receiver maps `reason` to a status):
// - missing-signature (401): the header is absent, or empty / only spaces and commas. The sender
//   sent nothing to check, which is an authentication failure, not a malformed request.
// - malformed-signature (400): a header is there but cannot be read as `t=...,v=...`: no `t`
//   element, more than one `t`, a `t` that is not plain digits (sign, fraction, exponent, empty),
//   a `t` of 11, 12 or more than 13 digits, or no `v` element at all. The design's "400 malformed
//   header" covers exactly these.
// - bad-signature (401): the header parses but no `v` equals the HMAC (this includes an empty,
//   truncated, too long or non-hex/non-base64 `v`).
// - stale-timestamp (401): a `v` matches but `|now - t|` exceeds the tolerance (checked after the
//   HMAC so a forged header cannot probe the clock).
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureFailure = 'missing-signature' | 'malformed-signature' | 'bad-signature' | 'stale-timestamp';

/** On a stale timestamp, `offsetMs` is now minus `t`: positive when this clock is ahead of the sender's. */
export type SignatureResult = { ok: true; timestampMs: number } | { ok: false; reason: SignatureFailure; offsetMs?: number };

export interface VerifyInput {
  /** The header value as Node gives it (duplicates may arrive as an array or joined by ", "). */
  header: string | readonly string[] | undefined;
  /** The exact raw request body. A string is taken as its UTF-8 bytes. */
  body: Buffer | string;
  apiKey: string;
  toleranceSeconds: number;
  /** Current time in epoch milliseconds. */
  now: number;
}

const HMAC_BYTES = 32;
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one optional "=" (standard or URL-safe alphabet).
const BASE64_SIGNATURE = /^[A-Za-z0-9+/_-]{43}=?$/;
const DIGITS = /^[0-9]+$/;

/** HTTP status the receiver answers for each failure. */
export const SIGNATURE_FAILURE_STATUS: Record<SignatureFailure, 400 | 401> = {
  'missing-signature': 401,
  'malformed-signature': 400,
  'bad-signature': 401,
  'stale-timestamp': 401,
};

interface ParsedHeader {
  t: string;
  v: string[];
}

/** Splits the header into its `t` and `v` elements; undefined when it is not readable. */
export function parseSignatureHeader(value: string): ParsedHeader | undefined {
  const ts: string[] = [];
  const vs: string[] = [];
  for (const element of value.split(',')) {
    const at = element.indexOf('=');
    // An element without "=" carries no prefix we know; it is ignored like any unknown prefix.
    if (at < 0) continue;
    const prefix = element.slice(0, at).trim();
    const content = element.slice(at + 1).trim();
    if (prefix === 't') ts.push(content);
    else if (prefix === 'v') vs.push(content);
  }
  const [t] = ts;
  if (ts.length !== 1 || t === undefined || vs.length === 0) return undefined;
  return { t, v: vs };
}

/** `t` as epoch milliseconds: up to 10 digits are seconds, exactly 13 are milliseconds. */
export function timestampToMs(t: string): number | undefined {
  if (!DIGITS.test(t)) return undefined;
  if (t.length <= 10) return Number(t) * 1000;
  if (t.length === 13) return Number(t);
  return undefined;
}

/** Decodes one `v` into bytes when it is hex or canonical base64 of 32 bytes; else undefined. */
function decodeSignature(v: string): Buffer | undefined {
  if (HEX_SIGNATURE.test(v)) return Buffer.from(v, 'hex');
  if (!BASE64_SIGNATURE.test(v)) return undefined;
  const standard = v.replace(/-/g, '+').replace(/_/g, '/').replace(/=$/, '');
  const bytes = Buffer.from(standard, 'base64');
  // Reject non-canonical spellings (stray low bits in the last character) so one MAC has one text.
  if (bytes.length !== HMAC_BYTES || bytes.toString('base64').replace(/=$/, '') !== standard) return undefined;
  return bytes;
}

export function computeSignature(apiKey: string, t: string, body: Buffer | string): Buffer {
  return createHmac('sha256', apiKey)
    .update(`${t}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
}

export function verifySignature(input: VerifyInput): SignatureResult {
  const raw = typeof input.header === 'string' ? input.header : input.header?.join(',');
  if (raw === undefined || raw.replace(/[\s,]/g, '') === '') return { ok: false, reason: 'missing-signature' };
  const parsed = parseSignatureHeader(raw);
  if (parsed === undefined) return { ok: false, reason: 'malformed-signature' };
  const timestampMs = timestampToMs(parsed.t);
  if (timestampMs === undefined) return { ok: false, reason: 'malformed-signature' };

  const expected = computeSignature(input.apiKey, parsed.t, input.body);
  let matched = false;
  // Every v is checked (no early exit) so timing does not reveal which element matched.
  for (const v of parsed.v) {
    const candidate = decodeSignature(v);
    if (candidate !== undefined && candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) return { ok: false, reason: 'bad-signature' };
  if (Math.abs(input.now - timestampMs) > input.toleranceSeconds * 1000) return { ok: false, reason: 'stale-timestamp', offsetMs: input.now - timestampMs };
  return { ok: true, timestampMs };
}

/** Builds a header value the way the service does (tests, simulator-free benchmarks). */
export function signatureHeader(apiKey: string, t: string | number, body: Buffer | string, encoding: 'hex' | 'base64' = 'hex'): string {
  const text = String(t);
  return `t=${text},v=${computeSignature(apiKey, text, body).toString(encoding)}`;
}
