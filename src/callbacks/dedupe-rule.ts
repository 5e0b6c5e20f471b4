// Which callbacks the duplicate filter remembers, and under which key (design section 6, revised).
// accept() asks only this, so the rule of what counts as "the same delivery" lives here and nowhere
// else. A redelivery is the same event, not the same bytes. One-shot events (something happened: an
// operation, a press, a motion, a recording, a membership or PIN change) must have one effect, so
// they are remembered per device by EventID, else by a hash of the raw body. State reports (the
// bridge is online, the battery is low, a flag is set, the door is closed, the name is X) carry no
// EventID or event time that would tell a repeat from a redelivery; applying one again is harmless
// and dropping it is not (offline, online, offline, online must end online), so they never enter
// the store. Pure.
import { createHash } from 'node:crypto';

import type { DeviceEvent } from '../model/events.js';
import type { CallbackRoute } from './payloads.js';

/** EventIDs longer than this are hashed, so the dedupe file stays bounded. */
const MAX_PLAIN_ID_LENGTH = 128;

/**
 * `earlierKeys`: the keys earlier versions stored the same delivery under (route, then EventID or
 * body hash, without the device). The store keeps keys for 72 h, so a redelivery that arrives just
 * after an upgrade is still recognised by them; new keys are always stored in the current form.
 */
export type DedupeClass = { oneShot: false } | { oneShot: true; key: string; earlierKeys: readonly string[] };

/** Whether applying the event twice would do something twice. */
export function isOneShot(event: DeviceEvent): boolean {
  switch (event.kind) {
    case 'lockState':
      // `operation` is an action (who did what); `status` reports the present state.
      return event.source === 'operation';
    case 'doorbellPress':
    case 'motion':
    case 'videoAvailable':
    case 'membership':
    case 'pinManaged':
    case 'accountDeleted':
      return true;
    case 'doorState':
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
 * exact raw body.
 */
export function dedupeKey(route: CallbackRoute, device: string, eventId: string | undefined, rawBody: Buffer): string {
  return keyIn(`${route}/${device}`, eventId, rawBody);
}

/** The key as earlier versions wrote it: no device in the scope. */
export function earlierDedupeKey(route: CallbackRoute, eventId: string | undefined, rawBody: Buffer): string {
  return keyIn(route, eventId, rawBody);
}

function keyIn(scope: string, eventId: string | undefined, rawBody: Buffer): string {
  if (eventId !== undefined && eventId !== '') {
    const id = eventId.length <= MAX_PLAIN_ID_LENGTH ? eventId : createHash('sha256').update(eventId).digest('hex');
    return `${scope}:id:${id}`;
  }
  return `${scope}:sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}

/** One callback's class: remembered under a key when any of its events is one-shot, else not at all. */
export function dedupeClass(events: readonly DeviceEvent[], route: CallbackRoute, rawBody: Buffer): DedupeClass {
  const oneShot = events.find(isOneShot);
  if (oneShot === undefined) return { oneShot: false };
  return { oneShot: true, key: dedupeKey(route, deviceOf(oneShot), oneShot.eventId, rawBody), earlierKeys: [earlierDedupeKey(route, oneShot.eventId, rawBody)] };
}
