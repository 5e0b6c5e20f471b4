// Which callbacks the duplicate filter remembers, and under which key. accept() asks only this, so
// the rule of what counts as "the same delivery" lives here and nowhere else. A redelivery is the
// same delivery of the same event, not the same bytes. One-shot events (something happened: an
// operation, the door opening or closing, a press, a motion, a recording, a membership or PIN
// change) must have one effect, so they are remembered per device by EventID, else by a hash of
// the raw body together with the signature's `t`: a retry of one delivery carries the `t` it was signed with, while a new
// operation whose body happens to be identical (the same person locking twice from the app, every
// one-touch lock, a keypad lock by the same PIN) is signed anew and is applied. A door report
// counts as one-shot because a redelivered "closed" arriving after a newer "open" would otherwise
// show the door closed and could start an auto-lock countdown. State reports (the bridge is
// online, the battery is low, a flag is set, the present lock state, the name is X) carry no
// EventID or event time that would tell a repeat from a redelivery; applying one again is harmless
// and dropping it is not (offline, online, offline, online must end online), so they never enter
// the store. Pure.
import { createHash } from 'node:crypto';

import type { DeviceEvent } from '../model/events.js';
import type { CallbackRoute } from './payloads.js';

/** EventIDs longer than this are hashed, so the dedupe file stays bounded. */
const MAX_PLAIN_ID_LENGTH = 128;

/**
 * `earlierKeys`: the keys earlier versions stored the same delivery under (route and EventID,
 * without the device). The store keeps keys for 72 h, so a redelivery that arrives just after an
 * upgrade is still recognised by them; new keys are always stored in the current form. Earlier
 * body-only keys are not looked up: they cannot tell a redelivery from a repeated operation.
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

/**
 * The key of a one-shot event: route and device (the user hook and a lock hook deliver one
 * membership change separately, with different effects), then the EventID, else the SHA-256 of the
 * signature's time and the exact raw body (`t.body`, as the signature itself is computed).
 */
export function dedupeKey(route: CallbackRoute, device: string, eventId: string | undefined, rawBody: Buffer, signedAtMs: number): string {
  const scope = `${route}/${device}`;
  if (hasId(eventId)) return `${scope}:id:${plainId(eventId)}`;
  return `${scope}:sha256t:${createHash('sha256').update(`${signedAtMs}.`).update(rawBody).digest('hex')}`;
}

const hasId = (eventId: string | undefined): eventId is string => eventId !== undefined && eventId !== '';
const plainId = (eventId: string) => (eventId.length <= MAX_PLAIN_ID_LENGTH ? eventId : createHash('sha256').update(eventId).digest('hex'));

/** One callback's class: remembered under a key when any of its events is one-shot, else not at all. */
export function dedupeClass(events: readonly DeviceEvent[], route: CallbackRoute, rawBody: Buffer, signedAtMs: number): DedupeClass {
  const oneShot = events.find(isOneShot);
  if (oneShot === undefined) return { oneShot: false };
  const earlierKeys = hasId(oneShot.eventId) ? [`${route}:id:${plainId(oneShot.eventId)}`] : [];
  return { oneShot: true, key: dedupeKey(route, deviceOf(oneShot), oneShot.eventId, rawBody, signedAtMs), earlierKeys };
}
