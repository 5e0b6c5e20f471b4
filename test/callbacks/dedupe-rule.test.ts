import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { dedupeClass, dedupeKey, isOneShot } from '../../src/callbacks/dedupe-rule.js';
import { normalise } from '../../src/callbacks/normalise.js';
import { classifyPayload, type CallbackRoute } from '../../src/callbacks/callback-kinds.js';
import type { DeviceEvent } from '../../src/model/events.js';
import { DOORBELL_ID, LOCK_ID, fixtures } from './fixtures.js';

type FixtureName = keyof typeof fixtures;

function parsed(body: unknown, route: CallbackRoute): { events: DeviceEvent[]; raw: Buffer } {
  const raw = Buffer.from(JSON.stringify(body));
  const result = classifyPayload(JSON.parse(raw.toString('utf8')));
  if (!result.ok || result.payload === undefined) throw new Error('not a known payload');
  return { events: normalise(result.payload, route), raw };
}

/** The signature time of the fixtures' deliveries (ms). */
const T = 1_700_000_000_000;

function classOf(body: unknown, route: CallbackRoute = 'lock', signedAt = T) {
  const { events, raw } = parsed(body, route);
  return dedupeClass(events, route, raw, signedAt);
}

const ONE_SHOT: FixtureName[] = [
  'appUnlock', 'keypadLock', 'manualUnlock', 'oneTouch', 'pinManaged', 'masterPin',
  'userAdd', 'userRemove', 'userType', 'accessType', 'motion', 'press', 'video',
  // A door that opened or closed is something that happened: a late redelivery must not undo a newer position.
  'doorOpen', 'doorClosed', 'doorAjar', 'doorInit', 'doorUnknown',
];
const STATE_REPORTS: FixtureName[] = [
  'status', 'nameChanged', 'privacy', 'vacation', 'keypadEnabled',
  'keypadBattery', 'lockBattery', 'announcedBattery', 'online', 'offline', 'drift',
];
const USER_ROUTE: FixtureName[] = ['membershipAdd', 'membershipType', 'lifecycle'];

const routeOf = (name: FixtureName): CallbackRoute => (USER_ROUTE.includes(name) ? 'user' : ['motion', 'press', 'video'].includes(name) ? 'doorbell' : 'lock');

describe('one-shot events and state reports', () => {
  it('every fixture is sorted into one class', () => {
    expect([...ONE_SHOT, ...STATE_REPORTS, ...USER_ROUTE].sort()).toEqual(Object.keys(fixtures).sort());
  });

  it.each(ONE_SHOT)('%s is one-shot: remembered by the duplicate filter', (name) => {
    expect(classOf(fixtures[name], routeOf(name)).oneShot).toBe(true);
  });

  it.each(STATE_REPORTS)('%s is a state report: applied every time, never remembered', (name) => {
    expect(classOf(fixtures[name], routeOf(name))).toEqual({ oneShot: false });
  });

  it('membership changes and the account-deleted notice on the user hook are one-shot', () => {
    for (const name of USER_ROUTE) expect(classOf(fixtures[name], 'user').oneShot).toBe(true);
  });

  it('a status callback reports the present state; an operation callback with the same values is an action', () => {
    const [status] = parsed(fixtures.status, 'lock').events;
    const operation = { ...fixtures.status, EventType: 'operation' };
    const [action] = parsed(operation, 'lock').events;
    expect(status && isOneShot(status)).toBe(false);
    expect(action && isOneShot(action)).toBe(true);
  });

  it('no battery, reachability, flag or drift report is ever remembered, whatever it carries (property)', () => {
    const report = fc.oneof(
      fc.record({ LockID: fc.constant([LOCK_ID]), EventType: fc.constant('systemstatus'), Event: fc.constantFrom('online', 'offline') }),
      fc.record({ LockID: fc.constant(LOCK_ID), EventType: fc.constant('system'), Event: fc.constant('lock_battery_alert'), warningLevel: fc.constantFrom('lock_state_battery_warning_none', 'lock_state_battery_warning_2day'), userID: fc.string() }),
      fc.record({ LockID: fc.constant(LOCK_ID), EventType: fc.constant('configuration'), Event: fc.constantFrom('privacy_mode', 'vacation_mode', 'keypad_enabled'), Value: fc.boolean() }),
      fc.record({ LockID: fc.constant(LOCK_ID), EventType: fc.constant('systemstatus'), Event: fc.constant('lock_log_timestamp_drifted'), warningLevel: fc.string(), Timestamp: fc.nat(), TimestampDrifted: fc.nat() }),
    );
    fc.assert(
      fc.property(report, fc.option(fc.uuid(), { nil: undefined }), (body, eventId) => {
        expect(classOf(eventId === undefined ? body : { ...body, EventID: eventId })).toEqual({ oneShot: false });
      }),
    );
  });
});

describe('"a redelivery is the same delivery of the same event, not the same bytes"', () => {
  const keyOf = (body: unknown, route: CallbackRoute = 'lock', signedAt = T): string => {
    const found = classOf(body, route, signedAt);
    if (!found.oneShot) throw new Error('not one-shot');
    return found.key;
  };

  it('the EventID is the key: a redelivery with different bytes is still the same event', () => {
    const again = { ...fixtures.manualUnlock, timeStamp: fixtures.manualUnlock.timeStamp + 30_000 };
    expect(keyOf(again)).toBe(keyOf(fixtures.manualUnlock));
    expect(keyOf(fixtures.manualUnlock)).toBe(`lock/${LOCK_ID}:id:e-manual`);
  });

  it('without EventID a body with its own event time is keyed by the SHA-256 of the body alone: a retry signed afresh has the same key', () => {
    expect(keyOf(fixtures.keypadLock)).toMatch(new RegExp(`^lock/${LOCK_ID}:sha256:[0-9a-f]{64}$`));
    expect(keyOf(fixtures.keypadLock, 'lock', T + 240_000)).toBe(keyOf(fixtures.keypadLock));
    expect(keyOf({ ...fixtures.keypadLock, Timestamp: fixtures.keypadLock.Timestamp + 1 })).not.toBe(keyOf(fixtures.keypadLock));
  });

  it('a doorbell press and its recording are known by their dvrID, a motion by its still, whatever t', () => {
    expect(keyOf(fixtures.press, 'doorbell')).toBe(`doorbell/${DOORBELL_ID}:press:${fixtures.press.dvrID}`);
    expect(keyOf(fixtures.press, 'doorbell', T + 60_000)).toBe(keyOf(fixtures.press, 'doorbell'));
    expect(keyOf({ ...fixtures.video, dvrID: fixtures.press.dvrID }, 'doorbell')).toBe(`doorbell/${DOORBELL_ID}:video:${fixtures.press.dvrID}`);
    expect(keyOf(fixtures.motion, 'doorbell', T + 60_000)).toBe(keyOf(fixtures.motion, 'doorbell'));
    expect(keyOf(fixtures.motion, 'doorbell')).toMatch(/:still:[0-9a-f]{64}$/);
    expect(keyOf(fixtures.motion, 'doorbell')).not.toContain('img');
    expect(keyOf({ ...fixtures.motion, Url: 'http://img/other.jpg' }, 'doorbell')).not.toBe(keyOf(fixtures.motion, 'doorbell'));
  });

  it('a body with no identity and no event time is keyed by the signature\'s t and the raw body', () => {
    const oneTouch = { ...fixtures.oneTouch } as Record<string, unknown>;
    delete oneTouch.Timestamp;
    expect(keyOf(oneTouch)).toMatch(new RegExp(`^lock/${LOCK_ID}:sha256t:[0-9a-f]{64}$`));
    expect(keyOf(oneTouch, 'lock', T + 5_000)).not.toBe(keyOf(oneTouch, 'lock', T));
    expect(keyOf(oneTouch, 'lock', T)).toBe(keyOf(oneTouch, 'lock', T));
    const raw = Buffer.from('x');
    // sha256("1000.x")
    expect(dedupeKey('lock', { kind: 'doorState', lockId: 'L1', at: undefined, state: 'open' }, raw, 1000)).toBe('lock/L1:sha256t:2232513bc66547c88a863770eba3a15be8540f8432090ed4888bb83e7a10573c');
    expect(dedupeKey('lock', { kind: 'doorState', lockId: 'L1', at: undefined, state: 'open', eventId: '' }, raw, 1000)).toMatch(/^lock\/L1:sha256t:/);
  });

  it('earlier keys: the EventID without the device, and the delivery (body and t) the previous version stored', () => {
    const found = classOf(fixtures.keypadLock);
    if (!found.oneShot) throw new Error('not one-shot');
    expect(found.earlierKeys).toEqual([expect.stringMatching(new RegExp(`^lock/${LOCK_ID}:sha256t:[0-9a-f]{64}$`))]);
    const withId = classOf(fixtures.manualUnlock);
    if (!withId.oneShot) throw new Error('not one-shot');
    expect(withId.earlierKeys[0]).toBe('lock:id:e-manual');
  });

  it('an EventID wins over t: a redelivery signed again is still the same event', () => {
    expect(keyOf(fixtures.manualUnlock, 'lock', T + 30_000)).toBe(keyOf(fixtures.manualUnlock, 'lock', T));
  });

  it('keys are per device: one EventID on two locks is two events', () => {
    expect(keyOf({ ...fixtures.appUnlock, LockID: 'LOCK-A' })).not.toBe(keyOf({ ...fixtures.appUnlock, LockID: 'LOCK-B' }));
  });

  it('the user hook and a lock hook deliver one membership change separately (they have different effects)', () => {
    const viaLock = keyOf({ ...fixtures.membershipAdd }, 'lock');
    const viaUser = keyOf({ ...fixtures.membershipAdd }, 'user');
    expect(viaLock).not.toBe(viaUser);
    expect(viaUser).toBe(`user/${LOCK_ID}:id:e-m-add`);
    expect(keyOf(fixtures.lifecycle, 'user')).toMatch(/^user\/account:sha256t:/);
  });

  it('a very long EventID is hashed so the dedupe file stays bounded', () => {
    expect(dedupeKey('user', { kind: 'doorState', lockId: 'L1', at: undefined, state: 'open', eventId: 'e'.repeat(1000) }, Buffer.alloc(0), T)).toMatch(/^user\/L1:id:[0-9a-f]{64}$/);
  });
});
