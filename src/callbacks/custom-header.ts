// The registered custom header: when present it must equal the stored webhook
// token; when absent, only the kinds the spec sends without it are let through.
import { timingSafeEqual } from 'node:crypto';

import type { Envelope } from './callback-kinds.js';

export type CustomHeaderCheck = { ok: true; present: boolean } | { ok: false; status: 401 | 503; reason: 'bad-token' | 'token-not-ready' };

/** Header values as one string; duplicates (an array) are joined the way Node joins unknown headers. */
function headerText(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value.join(', ');
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  // Compare equal-length buffers only; a length mismatch still costs one compare of b with itself.
  return a.length === b.length ? timingSafeEqual(a, b) : !timingSafeEqual(b, b);
}

/**
 * Checks a present header against the stored token. `storedToken` is read only when the header is
 * there; without a stored token yet the answer is 503, so the sender retries once it exists.
 */
export function checkCustomHeader(header: string | readonly string[] | undefined, storedToken: () => string | undefined): CustomHeaderCheck {
  const given = headerText(header);
  if (given === undefined) return { ok: true, present: false };
  const stored = storedToken();
  if (stored === undefined || stored === '') return { ok: false, status: 503, reason: 'token-not-ready' };
  if (!sameSecret(given, stored)) return { ok: false, status: 401, reason: 'bad-token' };
  return { ok: true, present: true };
}

/** Kinds the service sends without the custom header (PIN management and remote operate). */
export function exemptFromToken(envelope: Envelope): boolean {
  return envelope.eventType === 'status' || envelope.eventType === 'operation' || envelope.event === 'keypad_pin_managed';
}
