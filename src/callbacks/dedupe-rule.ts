// Which key a delivered callback is deduplicated by (design section 6, "Dedupe"). accept() asks
// only this, so the rule of what counts as "the same delivery" lives here and nowhere else.
import { dedupeKey } from './dedupe.js';
import type { CallbackPayload, CallbackRoute } from './payloads.js';

/** The service's EventID when present (scoped by route), else the hash of the exact raw body. */
export function dedupeKeyOf(route: CallbackRoute, callback: CallbackPayload, raw: Buffer): string {
  return dedupeKey(route, callback.payload.EventID, raw);
}
