// The model's vocabulary: what a callback means, independent of its wire shape.
// src/callbacks/normalise.ts produces these; src/model/ reduces them into device state, which HomeKit and Matter render.

import type { UiMessage } from '../util/ui-message.js';

/** Who did it, as far as the callback tells. `kind` separates people from the reserved actors. */
export interface Actor {
  kind: 'person' | 'manual' | 'doorSensor' | 'oneTouch' | 'masterPin' | 'unknown';
  userId?: string;
  firstName?: string;
  lastName?: string;
}

interface Base {
  /** Event time in epoch milliseconds (Timestamp, timeStamp or startTime), undefined when the payload has none. */
  at: number | undefined;
  /** The service's EventID when present. */
  eventId?: string | undefined;
}

export type LockEvent = Base & { lockId: string } & (
  | { kind: 'lockState'; state: 'locked' | 'unlocked'; source: 'operation' | 'status'; device: 'lock' | 'keypad'; actor: Actor; oneTouch?: boolean }
  | { kind: 'doorState'; state: 'open' | 'closed' | 'ajar' | 'init' | 'unknown' }
  /** level 0-100 and low flag per the design's mapping table; raw is the service's word. */
  | { kind: 'battery'; device: 'lock' | 'keypad'; raw: string; serialNumber?: string }
  | { kind: 'online'; online: boolean }
  | { kind: 'lockName'; name: string; actor?: Actor }
  | { kind: 'configFlag'; flag: 'privacyMode' | 'vacationMode' | 'keypadEnabled'; value: boolean }
  | { kind: 'pinManaged'; state: string; pinUser: Actor; actor: Actor; masterPin: boolean; /** The code's schedule (days and hours, worded by whoever shows it); the code itself is never kept. */ schedule?: UiMessage }
  | { kind: 'membership'; change: 'added' | 'removed' | 'userType' | 'accessType'; user: Actor; value?: string; viaUserHook: boolean }
  | { kind: 'clockDrift'; warningLevel?: string; driftedTo?: number }
);

export type DoorbellEvent = Base & { doorbellId: string } & (
  | { kind: 'doorbellPress'; dvrId?: string }
  /** imageUrl is SecureURL when given, else Url; fallbackImageUrl is Url when SecureURL could not be fetched. */
  | { kind: 'motion'; imageUrl?: string; fallbackImageUrl?: string; width?: number; height?: number }
  | { kind: 'videoAvailable'; dvrId: string; cause: string; startTime?: number }
);

export type AccountEvent = Base & { kind: 'accountDeleted'; event: string };

export type DeviceEvent = LockEvent | DoorbellEvent | AccountEvent;

export type DeviceEventKind = DeviceEvent['kind'];

export function isLockEvent(event: DeviceEvent): event is LockEvent {
  return 'lockId' in event;
}

export function isDoorbellEvent(event: DeviceEvent): event is DoorbellEvent {
  return 'doorbellId' in event;
}
