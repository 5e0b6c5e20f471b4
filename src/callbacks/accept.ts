// The receiver's whole acceptance pipeline as one pure call, in the spirit of a
// one-call verify-and-parse: request parts in, verdict out. No I/O, no clock, no writes: the HTTP
// adapter (receiver.ts) answers with the verdict's status, records what it says, then hands the
// events on. Order: size -> signature on the raw bytes -> custom header -> JSON -> kind -> schema
// -> route and path id -> readiness -> dedupe.
import type { DeviceEvent } from '../model/events.js';
import { MAX_CALLBACK_BYTES } from '../settings.js';
import { checkCustomHeader, exemptFromToken } from './custom-header.js';
import { dedupeClass } from './dedupe-rule.js';
import { printable } from './log-safe.js';
import { bodyDeviceId, checkRoute, normalise } from './normalise.js';
import { classifyPayload, readEnvelope, type CallbackRoute } from './callback-kinds.js';
import { parseJsonSafely } from './safe-json.js';
import { SIGNATURE_FAILURE_STATUS, verifySignature } from './signature.js';
import type { SignatureFailure } from './signature.js';

export interface CallbackContext {
  route: CallbackRoute;
  pathId?: string;
  receivedAt: number;
  /** The signature's `t` in epoch milliseconds. */
  signedAt: number;
  /** webhook.toleranceSeconds in ms: event times beyond signedAt plus this count as signedAt. */
  toleranceMs: number;
  /** The duplicate filter's key, for one-shot events only (state reports are never remembered). */
  dedupeKey?: string;
  eventType?: string;
  event?: string;
  /** The extra account whose path it came on (`/a/<id>/…`); undefined on the main account's paths. */
  account?: string;
}

/** The parts of an HTTP request the pipeline reads. */
export interface CallbackRequest {
  route: CallbackRoute;
  /** The decoded `:id` of the lock and doorbell routes; undefined on the user route. */
  pathId: string | undefined;
  /** The exact raw body. */
  body: Buffer;
  /** X-Svc-Signature as Node gives it. */
  signature: string | readonly string[] | undefined;
  /** The registered custom header as Node gives it. */
  token: string | readonly string[] | undefined;
  /** Epoch ms at arrival: the injected clock. */
  receivedAt: number;
}

/** The duplicate store, read only: accept() looks keys up, the adapter claims the verdict's key. */
export interface DuplicateLookup {
  readonly ready: boolean;
  /** The store holds a key of a form earlier versions stored: only then are earlier keys looked up. */
  readonly holdsEarlierKeys: boolean;
  has(key: string): boolean;
}

/** What stays the same from one request to the next. Functions are reads, called only when needed. */
export interface AcceptEnv {
  apiKey: string;
  toleranceSeconds: number;
  /** The current stored webhook token (may change at run time). */
  storedToken: () => string | undefined;
  /** False while the event sink cannot take events yet. */
  sinkReady: () => boolean;
  dedupe: DuplicateLookup;
}

export type RejectionReason =
  | SignatureFailure
  | 'too-large'
  | 'token-not-ready'
  | 'bad-token'
  | 'missing-token'
  | 'invalid-json'
  | 'prototype-key'
  | 'not-an-object'
  | 'schema-violation'
  | 'wrong-route'
  | 'path-id-mismatch'
  | 'not-ready'
  | 'dedupe-not-ready';

/** When the adapter should note a callback as seen for this device (or 'user'), and for which key. */
export interface LastCallback {
  key: string;
  at: number;
}

/**
 * The pipeline's answer. `status` is the HTTP status; `reason` names the outcome for logs and
 * counters (never a secret); `record` is what the adapter must write down once it answers.
 */
export type Verdict =
  | { kind: 'accepted'; status: 200; reason: 'accepted'; events: DeviceEvent[]; context: CallbackContext; record: { claim?: DedupeClaim; lastCallback: LastCallback } }
  | Duplicate
  | { kind: 'ignored'; status: 200; reason: 'unknown-kind'; kindName: string; record: { lastCallback: LastCallback } }
  | Rejected;

export interface Duplicate {
  kind: 'duplicate';
  status: 200;
  reason: 'duplicate';
  record: { lastCallback: LastCallback };
}

/**
 * A one-shot event's duplicate key for the adapter to claim in the store, and the answer when the
 * claim fails (a redelivery of the same event got there first): the adapter only carries it out.
 */
export interface DedupeClaim {
  key: string;
  taken: Duplicate;
}

export function duplicate(lastCallback: LastCallback): Duplicate {
  return { kind: 'duplicate', status: 200, reason: 'duplicate', record: { lastCallback } };
}

export interface Rejected {
  kind: 'rejected';
  status: 400 | 401 | 503;
  reason: RejectionReason;
  /** What exactly was wrong, for a debug line; built from schema paths, never from secrets. */
  detail?: string;
  /** A stale or future signature: this machine's time minus the signature's `t` (ms). */
  offsetMs?: number;
}

function reject(status: Rejected['status'], reason: RejectionReason, detail?: string): Rejected {
  return detail === undefined ? { kind: 'rejected', status, reason } : { kind: 'rejected', status, reason, detail };
}

/** Verifies, parses, classifies, route-checks and dedupes one callback. Never throws for bad input. */
export function accept(request: CallbackRequest, env: AcceptEnv): Verdict {
  const { route, pathId, body: raw, receivedAt } = request;
  // Fastify enforces the same limit before reading further; this keeps the rule whole here too.
  if (raw.length > MAX_CALLBACK_BYTES) return reject(400, 'too-large');

  const signature = verifySignature({ header: request.signature, body: raw, apiKey: env.apiKey, toleranceSeconds: env.toleranceSeconds, now: receivedAt });
  if (!signature.ok) {
    const rejected = reject(SIGNATURE_FAILURE_STATUS[signature.reason], signature.reason);
    if (signature.offsetMs !== undefined) rejected.offsetMs = signature.offsetMs;
    return rejected;
  }

  const customHeader = checkCustomHeader(request.token, env.storedToken);
  if (!customHeader.ok) return reject(customHeader.status, customHeader.reason);

  const json = parseJsonSafely(raw);
  if (!json.ok) return reject(400, json.reason);
  const envelope = readEnvelope(json.value);
  if (envelope === undefined) return reject(400, 'not-an-object');
  if (!customHeader.present && !exemptFromToken(envelope)) return reject(401, 'missing-token');

  const classified = classifyPayload(json.value);
  if (!classified.ok) return reject(400, classified.reason, classified.detail);
  const callback = classified.payload;
  const lastCallback: LastCallback = { key: route === 'user' ? 'user' : `${route}:${pathId ?? ''}`, at: receivedAt };
  if (callback === undefined) {
    // Well signed but of a kind this plugin does not know: acknowledged so it is not retried.
    return { kind: 'ignored', status: 200, reason: 'unknown-kind', kindName: `${printable(envelope.eventType)}/${printable(envelope.event)}`, record: { lastCallback } };
  }
  const routeCheck = checkRoute(callback, route, pathId);
  if (!routeCheck.ok) return reject(400, routeCheck.reason, routeCheck.detail);

  if (!env.sinkReady()) return reject(503, 'not-ready');
  const events = normalise(callback, route);
  if (events.length === 0) {
    // A known kind with a value the spec does not list: acknowledged (a 400 is never retried, so
    // the event would be lost for good), logged once, and nothing it cannot map is changed.
    return { kind: 'ignored', status: 200, reason: 'unknown-kind', kindName: `${printable(envelope.eventType)}/${printable(envelope.event)} with a value this plugin does not know${unmappedValue(json.value)}`, record: { lastCallback } };
  }
  // One-shot events are looked up in the duplicate store; state reports are applied every time.
  const dedupe = dedupeClass(events, route, raw, signature.timestampMs, env.dedupe.holdsEarlierKeys);
  if (dedupe.oneShot) {
    if (!env.dedupe.ready) return reject(503, 'dedupe-not-ready');
    if (env.dedupe.has(dedupe.key) || dedupe.earlierKeys.some((key) => env.dedupe.has(key))) return duplicate(lastCallback);
  }

  const context: CallbackContext = { route, receivedAt, signedAt: signature.timestampMs, toleranceMs: env.toleranceSeconds * 1000 };
  if (dedupe.oneShot) context.dedupeKey = dedupe.key;
  const deviceId = bodyDeviceId(callback);
  if (pathId !== undefined) context.pathId = pathId;
  else if (deviceId !== undefined && route !== 'user') context.pathId = deviceId;
  if (envelope.eventType !== undefined) context.eventType = envelope.eventType;
  if (envelope.event !== undefined) context.event = envelope.event;
  return { kind: 'accepted', status: 200, reason: 'accepted', events, context, record: dedupe.oneShot ? { claim: { key: dedupe.key, taken: duplicate(lastCallback) }, lastCallback } : { lastCallback } };
}

/** The value that could not be mapped, for the one log line: the battery level is the only such field. */
function unmappedValue(body: unknown): string {
  const level = (body as { warningLevel?: unknown }).warningLevel;
  return typeof level === 'string' ? ` (warningLevel ${printable(level)})` : '';
}
