// Which callbacks the duplicate filter remembers, and under which key. accept() asks only this, so
// the rule of what counts as "the same delivery" lives here and nowhere else. The service signs
// every delivery attempt afresh (it retries for a day, a signature counts for minutes), so a retry
// carries a new `t` and is recognised by what identifies the event, never by `t`: its EventID; else
// a doorbell's dvrID (press, recording) or its still's Url (motion); else the raw body when it
// carries the event's own time. A body with none of these (an app operation without a time) is
// applied each time it arrives with a new `t`: the plugin acknowledges within milliseconds, so a
// repeat is likelier than a retry. The very same bytes with the very same `t` are always a replay.
// One-shot events (something happened: an operation, the door opening or closing, a press, a
// motion, a recording, a membership or PIN change) are remembered; a door report counts because a
// redelivered "closed" after a newer "open" could start an auto-lock countdown. State reports
// (online, battery, flags, the present lock state, the name) are applied every time and never
// enter the store: offline, online, offline, online must end online. Pure.
import { createHash } from 'node:crypto';

import type { DeviceEvent } from '../model/events.js';
import type { CallbackRoute } from './callback-kinds.js';

/** EventIDs longer than this are hashed, so the dedupe file stays bounded. */
const MAX_PLAIN_ID_LENGTH = 128;

/**
 * `earlierKeys`: the keys earlier versions stored the same delivery under (route and EventID without
 * the device; the body together with `t`). The store keeps keys for days, so a redelivery or replay
 * that arrives just after an upgrade is still recognised by them; new keys are always stored in the
 * current form.
 */
export type DedupeClass = { oneShot: false } | { oneShot: true; key: string; earlierKeys: readonly string[] };

/** Whether applying the event twice would do something twice. */
export function isOneShot(event: DeviceEvent): boolean {
  switch (event.kind) {
    case 'lockState':
      // `operation` is an action (who did what); `status` reports the present state.
      return event.source === 'operation';
    case 'doorState':
    case 'doorbellPress':
    case 'motion':
    case 'videoAvailable':
    case 'membership':
    case 'pinManaged':
    case 'accountDeleted':
      return true;
    case 'battery':
    case 'online':
    case 'configFlag':
    case 'clockDrift':
    case 'lockName':
      return false;
  }
}

/** The device an event belongs to: the lock or doorbell id, or the account for account notices. */
function deviceOf(event: DeviceEvent): string {
  if ('lockId' in event) return event.lockId;
  if ('doorbellId' in event) return event.doorbellId;
  return 'account';
}

/** What identifies one event apart from the delivery, as a key suffix; undefined when nothing does. */
function identity(event: DeviceEvent, rawBody: Buffer): string | undefined {
  if (hasId(event.eventId)) return `id:${plainId(event.eventId)}`;
  // A press and the recording it started share their dvrID, so the kind is part of the key.
  if (event.kind === 'doorbellPress' && hasId(event.dvrId)) return `press:${plainId(event.dvrId)}`;
  if (event.kind === 'videoAvailable' && hasId(event.dvrId)) return `video:${plainId(event.dvrId)}`;
  if (event.kind === 'motion') {
    // Url is kept as the fallback when a SecureURL differs; without a Url the SecureURL names the still.
    const still = event.fallbackImageUrl ?? event.imageUrl;
    // Hashed: a still's address does not belong in a file on disk.
    if (hasId(still)) return `still:${sha256(still)}`;
  }
  if (event.at !== undefined) return `sha256:${sha256(rawBody)}`;
  return undefined;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** The key of one delivery (body and `t`), as the signature itself is computed: what a replay repeats. */
function deliveryKey(scope: string, rawBody: Buffer, signedAtMs: number): string {
  return `${scope}:sha256t:${createHash('sha256').update(`${signedAtMs}.`).update(rawBody).digest('hex')}`;
}

/**
 * The key of a one-shot event: route and device (the user hook and a lock hook deliver one
 * membership change separately, with different effects), then what identifies the event, else the
 * delivery itself (the signature's `t` and the exact raw body).
 */
export function dedupeKey(route: CallbackRoute, event: DeviceEvent, rawBody: Buffer, signedAtMs: number): string {
  const scope = `${route}/${deviceOf(event)}`;
  const id = identity(event, rawBody);
  return id === undefined ? deliveryKey(scope, rawBody, signedAtMs) : `${scope}:${id}`;
}

const hasId = (value: string | undefined): value is string => value !== undefined && value !== '';
const plainId = (value: string) => (value.length <= MAX_PLAIN_ID_LENGTH ? value : sha256(value));


/**
 * Whether a stored key has a form that an earlier key of some delivery could equal. The store counts
 * them, so while it holds none a callback skips making its earlier keys (a second SHA-256 of the
 * body) and looking them up. A body key of this version (no identity, no event time) counts too:
 * it cannot be told from an earlier delivery key, and counting one more than needed costs only time.
 */
export function mayBeEarlierKey(key: string): boolean {
  // An earlier version's EventID key names the route without the device.
  return key.startsWith('lock:id:') || key.startsWith('doorbell:id:') || key.startsWith('user:id:') || key.includes(':sha256t:');
}

/**
 * One callback's class: remembered under a key when any of its events is one-shot, else not at all.
 * `withEarlierKeys`: false when the store holds no key of an earlier form (see mayBeEarlierKey), so
 * none of the earlier keys could be found and none is made.
 */
export function dedupeClass(events: readonly DeviceEvent[], route: CallbackRoute, rawBody: Buffer, signedAtMs: number, withEarlierKeys = true): DedupeClass {
  const oneShot = events.find(isOneShot);
  if (oneShot === undefined) return { oneShot: false };
  const key = dedupeKey(route, oneShot, rawBody, signedAtMs);
  const earlierKeys: string[] = [];
  if (!withEarlierKeys) return { oneShot: true, key, earlierKeys };
  if (hasId(oneShot.eventId)) earlierKeys.push(`${route}:id:${plainId(oneShot.eventId)}`);
  const delivery = deliveryKey(`${route}/${deviceOf(oneShot)}`, rawBody, signedAtMs);
  if (delivery !== key) earlierKeys.push(delivery);
  return { oneShot: true, key, earlierKeys };
}
