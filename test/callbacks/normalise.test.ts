import { describe, expect, it } from 'vitest';

import { actorOf, checkRoute, normalise } from '../../src/callbacks/normalise.js';
import { BATTERY_WORDS, batteryWord } from '../../src/model/battery-words.js';
import { classifyPayload, type CallbackRoute } from '../../src/callbacks/callback-kinds.js';
import type { CallbackPayload } from '../../src/callbacks/payloads.js';
import type { DeviceEvent } from '../../src/model/events.js';
import { DOORBELL_ID, LOCK_ID, T0, fixtures } from './fixtures.js';

function parse(body: unknown): CallbackPayload {
  const result = classifyPayload(JSON.parse(JSON.stringify(body)));
  if (!result.ok || result.payload === undefined) throw new Error(`not a known payload: ${JSON.stringify(result)}`);
  return result.payload;
}
const events = (body: unknown, route: CallbackRoute = 'lock'): DeviceEvent[] => normalise(parse(body), route);
const one = (body: unknown, route: CallbackRoute = 'lock'): DeviceEvent => {
  const [first, ...rest] = events(body, route);
  expect(rest).toHaveLength(0);
  if (first === undefined) throw new Error('no event');
  return first;
};

describe('spec Events: every callback shape validates', () => {
  it.each(Object.entries(fixtures))('%s is a known kind', (_name, body) => {
    expect(classifyPayload(JSON.parse(JSON.stringify(body)))).toMatchObject({ ok: true, payload: { kind: expect.any(String) as string } });
  });
  it('extra fields are allowed', () => {
    expect(parse({ ...fixtures.privacy, Something: { new: 1 } }).kind).toBe('configFlag');
  });
  it('imageInfo may be null, "n/a" or an object', () => {
    for (const imageInfo of [null, 'n/a', { original: { url: 'x' } }]) {
      expect(parse({ ...fixtures.appUnlock, User: { ...fixtures.appUnlock.User, imageInfo } }).kind).toBe('lockOperation');
    }
  });
  it('an unknown EventType or Event is classified as unknown, not invalid', () => {
    expect(classifyPayload({ EventType: 'future', Event: 'x' })).toMatchObject({ ok: true, payload: undefined });
    expect(classifyPayload({ EventType: 'operation', Event: 'jammed', LockID: LOCK_ID })).toMatchObject({ ok: true, payload: undefined });
    expect(classifyPayload({})).toMatchObject({ ok: true, payload: undefined });
  });
  it('a known kind with a value the spec does not list is read, and maps to no event (it changes nothing)', () => {
    const battery = classifyPayload({ ...fixtures.lockBattery, warningLevel: 'lock_state_battery_warning_3day' });
    expect(battery).toMatchObject({ ok: true, payload: { kind: 'lockBatteryAlert' } });
    if (battery.ok && battery.payload) expect(normalise(battery.payload, 'lock')).toEqual([]);
  });
  it('LockID as a one-element array is read on every systemstatus callback, the clock-drift notice included', () => {
    const drift = classifyPayload({ ...fixtures.drift, LockID: [LOCK_ID] });
    expect(drift).toMatchObject({ ok: true, payload: { kind: 'clockDrift', payload: { LockID: LOCK_ID } } });
  });
  it('a known kind with a broken field is a schema violation', () => {
    expect(classifyPayload({ ...fixtures.online, LockID: [] })).toMatchObject({ ok: false, reason: 'schema-violation' });
    expect(classifyPayload({ ...fixtures.video, dvrID: undefined })).toMatchObject({ ok: false, reason: 'schema-violation' });
  });
  it('a body that is not an object is refused', () => {
    expect(classifyPayload([1])).toMatchObject({ ok: false, reason: 'not-an-object' });
    expect(classifyPayload(null)).toMatchObject({ ok: false, reason: 'not-an-object' });
  });
});

describe('spec Lock: operation -> lockState / doorState', () => {
  it('app unlock: unlocked by a person, event time from Timestamp', () => {
    expect(one(fixtures.appUnlock)).toEqual({
      kind: 'lockState', lockId: LOCK_ID, at: T0, state: 'unlocked', source: 'operation', device: 'lock', eventId: 'e-app-unlock',
      actor: { kind: 'person', userId: 'user-1', firstName: 'Ada', lastName: 'Lovelace' },
    });
  });
  it('keypad lock: locked on the keypad', () => {
    expect(one(fixtures.keypadLock)).toMatchObject({ kind: 'lockState', state: 'locked', device: 'keypad' });
  });
  it('manual unlock: User has only UserID manualunlock', () => {
    expect(one(fixtures.manualUnlock)).toMatchObject({ state: 'unlocked', actor: { kind: 'manual', userId: 'manualunlock' }, at: T0 });
  });
  it('onetouchlock: locked, one touch, keypad', () => {
    expect(one(fixtures.oneTouch)).toMatchObject({ kind: 'lockState', state: 'locked', oneTouch: true, device: 'keypad', actor: { kind: 'oneTouch', firstName: 'One Touch' } });
  });
  it('status lock: source status', () => {
    expect(one(fixtures.status)).toMatchObject({ kind: 'lockState', state: 'locked', source: 'status' });
  });
  it.each([
    ['doorOpen', 'open'], ['doorClosed', 'closed'], ['doorAjar', 'ajar'], ['doorInit', 'init'], ['doorUnknown', 'unknown'],
  ] as const)('door %s -> doorState %s', (name, state) => {
    expect(one(fixtures[name])).toMatchObject({ kind: 'doorState', lockId: LOCK_ID, state });
  });
  it('without Timestamp the time comes from timeStamp, and without either it is undefined', () => {
    expect(one({ ...fixtures.appUnlock, Timestamp: undefined })).toMatchObject({ at: T0 + 100 });
    expect(one(fixtures.doorInit).at).toBeUndefined();
  });
  it('a 10-digit seconds time is read as seconds', () => {
    expect(one({ ...fixtures.doorOpen, Timestamp: T0 / 1000 }).at).toBe(T0);
  });
  it('a digit string is a time; a malformed time drops the time and keeps the event', () => {
    expect(one({ ...fixtures.doorOpen, Timestamp: String(T0) }).at).toBe(T0);
    expect(one({ ...fixtures.doorOpen, Timestamp: String(T0 / 1000) }).at).toBe(T0);
    for (const bad of ['soon', '12.5', '-5', -5, { t: T0 }, true, null, Number.POSITIVE_INFINITY, '12345678901234']) {
      expect(one({ ...fixtures.doorOpen, Timestamp: bad, timeStamp: undefined })).toMatchObject({ kind: 'doorState', state: 'open', at: undefined });
    }
  });
  it('a malformed Timestamp falls back to timeStamp', () => {
    expect(one({ ...fixtures.appUnlock, Timestamp: 'soon' })).toMatchObject({ at: T0 + 100 });
  });
});

describe('spec Lock: configuration', () => {
  it('lock_name_changed -> lockName', () => {
    expect(one(fixtures.nameChanged)).toMatchObject({ kind: 'lockName', name: 'Back Door', actor: { kind: 'person' } });
  });
  it.each([
    ['privacy', 'privacyMode', true], ['vacation', 'vacationMode', false], ['keypadEnabled', 'keypadEnabled', false],
  ] as const)('%s -> configFlag %s = %s', (name, flag, value) => {
    expect(one(fixtures[name])).toMatchObject({ kind: 'configFlag', flag, value });
  });
  it('keypad_pin_managed -> pinManaged with state, PIN user and owner', () => {
    expect(one(fixtures.pinManaged)).toMatchObject({ kind: 'pinManaged', state: 'load', masterPin: false, pinUser: { userId: 'user-2' }, actor: { userId: 'user-1' }, at: T0 });
  });
  it('master PIN change with an empty Pin -> pinManaged masterPin', () => {
    expect(one(fixtures.masterPin)).toMatchObject({ kind: 'pinManaged', masterPin: true, pinUser: { kind: 'masterPin' } });
  });
});

describe('battery mapping table', () => {
  it.each([
    ['lock_state_battery_warning_none', 100, false],
    ['lock_state_battery_warning_2week', 15, true],
    ['lock_state_battery_warning_1week', 10, true],
    ['lock_state_battery_warning_2day', 5, true],
  ] as const)('lock %s -> %i, low %s', (warningLevel, level, low) => {
    expect(one({ ...fixtures.lockBattery, warningLevel })).toMatchObject({ kind: 'battery', device: 'lock', raw: warningLevel });
    expect([batteryWord(warningLevel)?.percent, batteryWord(warningLevel)?.warning !== 'none']).toEqual([level, low]);
  });
  it.each([
    ['keypad_battery_none', 100, false], ['keypad_battery_warning', 20, true], ['keypad_battery_critical', 5, true],
  ] as const)('keypad %s -> %i, low %s', (Event, level, low) => {
    expect(one({ ...fixtures.keypadBattery, Event })).toMatchObject({ kind: 'battery', device: 'keypad', raw: Event, serialNumber: 'K123' });
    expect([batteryWord(Event)?.percent, batteryWord(Event)?.warning !== 'none']).toEqual([level, low]);
  });
  it.each([
    ['battery_level_none', 'lock', 100, false], ['battery_level_warning', 'keypad', 20, true], ['battery_level_critical', 'lock', 5, true],
  ] as const)('announced %s on %s -> %i, low %s', (Event, DeviceType, level, low) => {
    expect(one({ ...fixtures.announcedBattery, Event, DeviceType })).toMatchObject({ kind: 'battery', device: DeviceType, raw: Event });
    expect([batteryWord(Event)?.percent, batteryWord(Event)?.warning !== 'none']).toEqual([level, low]);
  });
  it('the table has exactly the ten words of the design', () => {
    expect(Object.keys(BATTERY_WORDS)).toHaveLength(10);
  });
});

describe('spec Lock: systemstatus', () => {
  it('online/offline with LockID as an array of one string', () => {
    expect(one(fixtures.online)).toMatchObject({ kind: 'online', lockId: LOCK_ID, online: true });
    expect(one(fixtures.offline)).toMatchObject({ kind: 'online', online: false });
  });
  it('lock_log_timestamp_drifted: Timestamp is the send time, TimestampDrifted the lock clock', () => {
    expect(one(fixtures.drift)).toEqual({ kind: 'clockDrift', lockId: LOCK_ID, at: T0, warningLevel: 'warning', driftedTo: T0 + 86_400_000 });
  });
});

describe('spec Lock: accessmgmt and User: lockmembership', () => {
  it.each([
    ['userAdd', 'added', undefined], ['userRemove', 'removed', undefined], ['userType', 'userType', 'superuser'], ['accessType', 'accessType', 'rule_access_recurring'],
  ] as const)('lock hook %s -> membership %s', (name, change, value) => {
    const event = one(fixtures[name]);
    expect(event).toMatchObject({ kind: 'membership', change, viaUserHook: false, user: { userId: 'user-1' } });
    expect((event as { value?: string }).value).toBe(value);
  });
  it('user hook lockmembership carries LockID and UserID in the body', () => {
    expect(one(fixtures.membershipAdd, 'user')).toMatchObject({ kind: 'membership', lockId: LOCK_ID, change: 'added', viaUserHook: true, user: { userId: 'user-3' }, eventId: 'e-m-add' });
    expect(one(fixtures.membershipType, 'user')).toMatchObject({ change: 'userType', value: 'user' });
  });
  it('lifecycle (any Event) -> accountDeleted', () => {
    expect(one(fixtures.lifecycle, 'user')).toMatchObject({ kind: 'accountDeleted', event: 'user_deleted' });
    expect(one({ EventType: 'lifecycle', Event: 'something_else' }, 'user')).toMatchObject({ kind: 'accountDeleted', event: 'something_else' });
  });
});

describe('spec Doorbell', () => {
  it('motion -> motion with SecureURL preferred', () => {
    expect(one(fixtures.motion, 'doorbell')).toEqual({ kind: 'motion', doorbellId: DOORBELL_ID, at: undefined, imageUrl: 'https://img/m.jpg', fallbackImageUrl: 'http://img/m.jpg', width: 640, height: 480 });
  });
  it('motion without SecureURL uses Url', () => {
    const event = one({ ...fixtures.motion, SecureURL: undefined }, 'doorbell');
    expect(event).toMatchObject({ imageUrl: 'http://img/m.jpg' });
    expect(event).not.toHaveProperty('fallbackImageUrl');
  });
  it('buttonpush -> doorbellPress with dvrID', () => {
    expect(one(fixtures.press, 'doorbell')).toEqual({ kind: 'doorbellPress', doorbellId: DOORBELL_ID, at: undefined, dvrId: fixtures.press.dvrID });
  });
  it('video available -> videoAvailable, event time from startTime', () => {
    expect(one(fixtures.video, 'doorbell')).toEqual({ kind: 'videoAvailable', doorbellId: DOORBELL_ID, at: T0, dvrId: fixtures.video.dvrID, cause: 'buttonpush', startTime: T0 });
  });
});

describe('routes and path ids', () => {
  it('a lock payload belongs on the lock route with its LockID', () => {
    expect(checkRoute(parse(fixtures.appUnlock), 'lock', LOCK_ID)).toEqual({ ok: true });
    expect(checkRoute(parse(fixtures.appUnlock), 'lock', 'OTHER')).toMatchObject({ ok: false, reason: 'path-id-mismatch' });
    expect(checkRoute(parse(fixtures.online), 'lock', LOCK_ID)).toEqual({ ok: true });
  });
  it('a doorbell payload belongs on the doorbell route with its DoorbellID', () => {
    expect(checkRoute(parse(fixtures.press), 'doorbell', DOORBELL_ID)).toEqual({ ok: true });
    expect(checkRoute(parse(fixtures.press), 'doorbell', 'OTHER')).toMatchObject({ ok: false, reason: 'path-id-mismatch' });
  });
  it('a known payload on the wrong route is refused', () => {
    expect(checkRoute(parse(fixtures.press), 'lock', DOORBELL_ID)).toMatchObject({ ok: false, reason: 'wrong-route' });
    expect(checkRoute(parse(fixtures.appUnlock), 'user', undefined)).toMatchObject({ ok: false, reason: 'wrong-route' });
    expect(checkRoute(parse(fixtures.lifecycle), 'lock', LOCK_ID)).toMatchObject({ ok: false, reason: 'wrong-route' });
  });
  it('membership and lifecycle belong on the user route (no path id)', () => {
    expect(checkRoute(parse(fixtures.membershipAdd), 'user', undefined)).toEqual({ ok: true });
    expect(checkRoute(parse(fixtures.lifecycle), 'user', undefined)).toEqual({ ok: true });
  });
});

describe('spec shared structures: actors', () => {
  it('reserved UserIDs are not people', () => {
    expect(actorOf({ UserID: 'manuallock' }).kind).toBe('manual');
    expect(actorOf({ UserID: 'DoorStateChanged' }).kind).toBe('doorSensor');
    expect(actorOf({ UserID: 'onetouchlock' }).kind).toBe('oneTouch');
    expect(actorOf({ UserID: 'masterpin', FirstName: 'Master', LastName: 'PIN' })).toEqual({ kind: 'masterPin', userId: 'masterpin', firstName: 'Master', lastName: 'PIN' });
    expect(actorOf(undefined)).toEqual({ kind: 'unknown' });
  });
  it('"n/a" names are dropped', () => {
    expect(actorOf({ UserID: 'x', FirstName: 'n/a', LastName: 'n/a' })).toEqual({ kind: 'person', userId: 'x' });
  });
});
