// What kind a callback is and whether its body is valid for that kind: the kind is read from
// (EventType, Event) first, then the body is checked against that kind's schema (payloads.ts). A
// known kind whose body breaks its schema is a schema violation (400), an unknown kind is ignored
// (200), and each registered hook may deliver only its own kinds.
import type { z } from 'zod/v3';

import {
  ANNOUNCED_BATTERY_EVENTS,
  announcedBatterySchema,
  authorizationSchema,
  buttonPushSchema,
  clockDriftSchema,
  configFlagSchema,
  doorStateSchema,
  KEYPAD_BATTERY_EVENTS,
  keypadBatterySchema,
  lifecycleSchema,
  lockBatteryAlertSchema,
  lockNameChangedSchema,
  lockOperationSchema,
  MEMBERSHIP_EVENTS,
  motionSchema,
  pinManagedSchema,
  systemStatusSchema,
  videoAvailableSchema,
  type CallbackKind,
  type CallbackPayload,
} from './payloads.js';

export type CallbackRoute = 'lock' | 'doorbell' | 'user';

/** Which kinds each registered hook may deliver; a known kind on another route is a 400. */
export const ROUTE_KINDS: Record<CallbackRoute, ReadonlySet<CallbackKind>> = {
  lock: new Set<CallbackKind>([
    'lockOperation', 'doorState', 'lockNameChanged', 'configFlag', 'pinManaged', 'keypadBattery',
    'lockBatteryAlert', 'announcedBattery', 'systemStatus', 'clockDrift', 'authorization',
  ]),
  doorbell: new Set<CallbackKind>(['motion', 'buttonPush', 'videoAvailable']),
  user: new Set<CallbackKind>(['authorization', 'lifecycle']),
};

/** The two fields that name a callback's kind, read before the full schema. */
export interface Envelope {
  eventType: string | undefined;
  event: string | undefined;
}

export function readEnvelope(body: unknown): Envelope | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return { eventType: text(record.EventType), event: text(record.Event) };
}

const includes = <T extends string>(list: readonly T[], value: string | undefined): value is T => list.includes(value as T);

/** The kind named by (EventType, Event), or undefined for a kind this plugin does not know. */
export function kindOf({ eventType, event }: Envelope): CallbackKind | undefined {
  switch (eventType) {
    case 'operation':
      if (includes(['lock', 'unlock', 'onetouchlock'], event)) return 'lockOperation';
      if (includes(['open', 'closed', 'ajar', 'init', 'unknown'], event)) return 'doorState';
      return undefined;
    case 'status':
      return includes(['lock', 'unlock', 'onetouchlock'], event) ? 'lockOperation' : undefined;
    case 'configuration':
      if (event === 'lock_name_changed') return 'lockNameChanged';
      if (includes(['privacy_mode', 'vacation_mode', 'keypad_enabled'], event)) return 'configFlag';
      if (event === 'keypad_pin_managed') return 'pinManaged';
      return undefined;
    case 'battery':
      if (includes(KEYPAD_BATTERY_EVENTS, event)) return 'keypadBattery';
      if (includes(ANNOUNCED_BATTERY_EVENTS, event)) return 'announcedBattery';
      return undefined;
    case 'system':
      return event === 'lock_battery_alert' ? 'lockBatteryAlert' : undefined;
    case 'systemstatus':
      if (includes(['online', 'offline'], event)) return 'systemStatus';
      if (event === 'lock_log_timestamp_drifted') return 'clockDrift';
      return undefined;
    case 'authorization':
      return includes(MEMBERSHIP_EVENTS, event) ? 'authorization' : undefined;
    case 'lifecycle':
      return 'lifecycle';
    case 'doorbell_motion_detected':
      return 'motion';
    case 'buttonpush':
      return 'buttonPush';
    case 'doorbell_video_upload_available':
      return 'videoAvailable';
    default:
      return undefined;
  }
}

const SCHEMAS: { [K in CallbackKind]: z.ZodType<Extract<CallbackPayload, { kind: K }>['payload'], z.ZodTypeDef, unknown> } = {
  lockOperation: lockOperationSchema,
  doorState: doorStateSchema,
  lockNameChanged: lockNameChangedSchema,
  configFlag: configFlagSchema,
  pinManaged: pinManagedSchema,
  keypadBattery: keypadBatterySchema,
  lockBatteryAlert: lockBatteryAlertSchema,
  announcedBattery: announcedBatterySchema,
  systemStatus: systemStatusSchema,
  clockDrift: clockDriftSchema,
  authorization: authorizationSchema,
  lifecycle: lifecycleSchema,
  motion: motionSchema,
  buttonPush: buttonPushSchema,
  videoAvailable: videoAvailableSchema,
};

export type ClassifyResult =
  | { ok: true; payload: CallbackPayload }
  | { ok: true; payload: undefined; envelope: Envelope }
  | { ok: false; reason: 'not-an-object' | 'schema-violation'; detail: string };

/** Validates a parsed JSON body: a typed payload, undefined for an unknown kind, or why it is invalid. */
export function classifyPayload(body: unknown): ClassifyResult {
  const envelope = readEnvelope(body);
  if (envelope === undefined) return { ok: false, reason: 'not-an-object', detail: 'the body is not a JSON object' };
  const kind = kindOf(envelope);
  if (kind === undefined) return { ok: true, payload: undefined, envelope };
  const parsed = SCHEMAS[kind].safeParse(body);
  if (!parsed.success) {
    const detail = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; ');
    return { ok: false, reason: 'schema-violation', detail };
  }
  return { ok: true, payload: { kind, payload: parsed.data } as CallbackPayload };
}
