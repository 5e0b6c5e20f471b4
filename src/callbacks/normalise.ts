// Pure mapping of validated callback payloads to the model's DeviceEvent vocabulary
// (src/model/events.ts), keeping only the battery words the spec lists, and the route rules
// (a kind only on its route, the path id equal to the body's id). No I/O.
import { batteryWord } from '../model/battery-words.js';
import { keypadSchedule } from '../model/keypad-schedule.js';
import type { Actor, DeviceEvent, LockEvent } from '../model/events.js';
import { ROUTE_KINDS, type CallbackRoute } from './callback-kinds.js';
import type { CallbackPayload, CallbackUser } from './payloads.js';
import { epochMs } from './sent-time.js';


const RESERVED_ACTORS: Record<string, Actor['kind']> = {
  manualunlock: 'manual',
  manuallock: 'manual',
  DoorStateChanged: 'doorSensor',
  onetouchlock: 'oneTouch',
  masterpin: 'masterPin',
};

export function actorOf(user: CallbackUser | undefined): Actor {
  if (user === undefined) return { kind: 'unknown' };
  const kind = RESERVED_ACTORS[user.UserID] ?? 'person';
  const actor: Actor = { kind, userId: user.UserID };
  if (user.FirstName !== undefined && user.FirstName !== 'n/a') actor.firstName = user.FirstName;
  if (user.LastName !== undefined && user.LastName !== 'n/a') actor.lastName = user.LastName;
  return actor;
}

/** The event time used for ordering: Timestamp, else timeStamp, else startTime (each when it is a time). */
function eventTime(payload: { Timestamp?: unknown; timeStamp?: unknown; startTime?: unknown }): number | undefined {
  return epochMs(payload.Timestamp) ?? epochMs(payload.timeStamp) ?? epochMs(payload.startTime);
}

export type RouteCheck = { ok: true } | { ok: false; reason: 'wrong-route' | 'path-id-mismatch'; detail: string };

/** The route and path id rules: a kind only on its route, and the path id equal to the body's id. */
export function checkRoute(callback: CallbackPayload, route: CallbackRoute, pathId: string | undefined): RouteCheck {
  if (!ROUTE_KINDS[route].has(callback.kind)) {
    return { ok: false, reason: 'wrong-route', detail: `a ${callback.kind} callback does not belong on the ${route} route` };
  }
  const bodyId = bodyDeviceId(callback);
  if (route !== 'user' && bodyId !== pathId) {
    return { ok: false, reason: 'path-id-mismatch', detail: `the ${route} id in the path does not match the body` };
  }
  return { ok: true };
}

/** The device id a payload names (LockID or DoorbellID), undefined for account-level payloads. */
export function bodyDeviceId(callback: CallbackPayload): string | undefined {
  switch (callback.kind) {
    case 'lifecycle':
      return undefined;
    case 'motion':
    case 'buttonPush':
    case 'videoAvailable':
      return callback.payload.DoorbellID;
    default:
      return callback.payload.LockID;
  }
}

function withId<T extends { eventId?: string | undefined }>(event: T, eventId: string | undefined): T {
  if (eventId !== undefined) event.eventId = eventId;
  return event;
}

type PayloadOf<K extends CallbackPayload['kind']> = Extract<CallbackPayload, { kind: K }>['payload'];

function lockOperation(p: PayloadOf<'lockOperation'>): LockEvent {
  const oneTouch = p.Event === 'onetouchlock';
  const event: LockEvent = {
    kind: 'lockState',
    lockId: p.LockID,
    at: eventTime(p),
    state: p.Event === 'unlock' ? 'unlocked' : 'locked',
    source: p.EventType,
    device: p.Device === 'keypad' || oneTouch ? 'keypad' : 'lock',
    actor: actorOf(p.User),
  };
  if (oneTouch) event.oneTouch = true;
  return withId(event, p.EventID);
}

function pinManaged(p: PayloadOf<'pinManaged'>): LockEvent {
  const masterPin = p.PinUser?.UserID === 'masterpin' || p.User?.UserID === 'masterpin' || Object.keys(p.Pin).length === 0;
  const state = p.Pin.state ?? (masterPin ? 'master' : 'changed');
  // The code's digits (Pin.pin) are never read into an event: only who, what and when.
  const schedule = masterPin ? undefined : keypadSchedule(p.Pin);
  const event: LockEvent = { kind: 'pinManaged', lockId: p.LockID, at: eventTime(p), state, pinUser: actorOf(p.PinUser), actor: actorOf(p.User), masterPin };
  if (schedule !== undefined) event.schedule = schedule;
  return withId(event, p.EventID);
}

function battery(callback: Extract<CallbackPayload, { kind: 'keypadBattery' | 'lockBatteryAlert' | 'announcedBattery' }>): LockEvent[] {
  const p = callback.payload;
  const raw = callback.kind === 'lockBatteryAlert' ? callback.payload.warningLevel : callback.payload.Event;
  const device = callback.kind === 'keypadBattery' ? 'keypad' : callback.kind === 'lockBatteryAlert' ? 'lock' : callback.payload.DeviceType;
  // A word the spec does not list tells nothing that can be shown: it changes nothing.
  if (batteryWord(raw) === undefined) return [];
  const event: LockEvent = { kind: 'battery', lockId: p.LockID, at: eventTime(p), device, raw };
  const serial = callback.kind === 'lockBatteryAlert' ? undefined : callback.payload.DeviceSerialNumber;
  if (serial !== undefined) event.serialNumber = serial;
  return [withId(event, p.EventID)];
}

function membership(p: PayloadOf<'authorization'>, route: CallbackRoute): LockEvent {
  const change = ({ lock_user_add: 'added', lock_user_remove: 'removed', lock_usertype_changed: 'userType', lock_accesstype_changed: 'accessType' } as const)[p.Event];
  const user: Actor = p.User !== undefined ? actorOf(p.User) : { kind: 'person', userId: p.UserID ?? '' };
  const event: LockEvent = { kind: 'membership', lockId: p.LockID, at: eventTime(p), change, user, viaUserHook: route === 'user' };
  const value = change === 'userType' ? (p.UserType ?? p.User?.UserType) : change === 'accessType' ? (p.AccessType ?? p.User?.AccessType) : undefined;
  if (value !== undefined) event.value = value;
  return withId(event, p.EventID);
}

function motion(p: PayloadOf<'motion'>): DeviceEvent {
  const event: DeviceEvent = { kind: 'motion', doorbellId: p.DoorbellID, at: eventTime(p) };
  const imageUrl = p.SecureURL ?? p.Url;
  if (imageUrl !== undefined && imageUrl !== '') event.imageUrl = imageUrl;
  // Url stays as a second choice: an https still that cannot be fetched may still load over plain http.
  if (p.Url !== undefined && p.Url !== '' && p.Url !== event.imageUrl) event.fallbackImageUrl = p.Url;
  if (p.Width !== undefined) event.width = p.Width;
  if (p.Height !== undefined) event.height = p.Height;
  return withId(event, p.EventID);
}

/** Maps one validated payload (received on `route`) to device events. */
export function normalise(callback: CallbackPayload, route: CallbackRoute): DeviceEvent[] {
  switch (callback.kind) {
    case 'lockOperation':
      return [lockOperation(callback.payload)];
    case 'doorState': {
      const p = callback.payload;
      return [withId<LockEvent>({ kind: 'doorState', lockId: p.LockID, at: eventTime(p), state: p.Event }, p.EventID)];
    }
    case 'lockNameChanged': {
      const p = callback.payload;
      const event: LockEvent = { kind: 'lockName', lockId: p.LockID, at: eventTime(p), name: p.Lock.Name };
      if (p.User !== undefined) event.actor = actorOf(p.User);
      return [withId(event, p.EventID)];
    }
    case 'configFlag': {
      const p = callback.payload;
      const flag = p.Event === 'privacy_mode' ? 'privacyMode' : p.Event === 'vacation_mode' ? 'vacationMode' : 'keypadEnabled';
      return [withId<LockEvent>({ kind: 'configFlag', lockId: p.LockID, at: eventTime(p), flag, value: p.Value }, p.EventID)];
    }
    case 'pinManaged':
      return [pinManaged(callback.payload)];
    case 'keypadBattery':
    case 'lockBatteryAlert':
    case 'announcedBattery':
      return battery(callback);
    case 'systemStatus': {
      const p = callback.payload;
      return [withId<LockEvent>({ kind: 'online', lockId: p.LockID, at: eventTime(p), online: p.Event === 'online' }, p.EventID)];
    }
    case 'clockDrift': {
      const p = callback.payload;
      // On this callback Timestamp is when the webhook was sent; TimestampDrifted is the lock's clock.
      const event: LockEvent = { kind: 'clockDrift', lockId: p.LockID, at: epochMs(p.Timestamp) ?? epochMs(p.timeStamp) };
      if (p.warningLevel !== undefined) event.warningLevel = p.warningLevel;
      const driftedTo = epochMs(p.TimestampDrifted);
      if (driftedTo !== undefined) event.driftedTo = driftedTo;
      return [withId(event, p.EventID)];
    }
    case 'authorization':
      return [membership(callback.payload, route)];
    case 'lifecycle': {
      const p = callback.payload;
      return [withId<DeviceEvent>({ kind: 'accountDeleted', at: eventTime(p), event: p.Event ?? 'lifecycle' }, p.EventID)];
    }
    case 'motion':
      return [motion(callback.payload)];
    case 'buttonPush': {
      const p = callback.payload;
      const event: DeviceEvent = { kind: 'doorbellPress', doorbellId: p.DoorbellID, at: eventTime(p) };
      if (p.dvrID !== undefined) event.dvrId = p.dvrID;
      return [withId(event, p.EventID)];
    }
    case 'videoAvailable': {
      const p = callback.payload;
      const event: DeviceEvent = { kind: 'videoAvailable', doorbellId: p.DoorbellID, at: eventTime(p), dvrId: p.dvrID, cause: p.cause };
      const startTime = epochMs(p.startTime);
      if (startTime !== undefined) event.startTime = startTime;
      return [withId(event, p.EventID)];
    }
  }
}
