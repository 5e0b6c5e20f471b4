// zod schemas of every callback shape in the spec's Events section. Tolerant where the spec is
// loose: extra fields pass through, times may be numbers or digit strings, imageInfo may be null,
// 'n/a' or an object. Which schema a body must meet is callback-kinds.ts's: by (EventType, Event).
import { z } from 'zod/v3';

/** A time as the service sends it, kept as sent: see sent-time.ts. */
const sentTime = z.unknown();

const imageSchema = z.object({
  width: z.number().optional(),
  height: z.number().optional(),
  format: z.string().optional(),
  url: z.string().optional(),
  secure_url: z.string().optional(),
}).passthrough();

export const userSchema = z.object({
  UserID: z.string(),
  FirstName: z.string().optional(),
  LastName: z.string().optional(),
  PhoneNo: z.string().optional(),
  Email: z.string().optional(),
  // null is the common value: checked first, without a union's try-each-option.
  imageInfo: z.union([z.string(), z.object({ original: imageSchema.optional(), thumbnail: imageSchema.optional() }).passthrough()]).nullable().optional(),
  UserType: z.string().optional(),
  AccessType: z.string().optional(),
  PartnerUserID: z.string().optional(),
}).passthrough();

const lockRef = z.object({ Name: z.string().optional() }).passthrough();

/** Fields every lock callback may carry; LockID is required so the path id can be checked. */
const lockBase = {
  LockID: z.string().min(1),
  EventID: z.string().optional(),
  Timestamp: sentTime,
  timeStamp: sentTime,
};

const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

export const lockOperationSchema = z.object({
  ...lockBase,
  EventType: z.enum(['operation', 'status']),
  Event: z.enum(['lock', 'unlock', 'onetouchlock']),
  Device: z.string().optional(),
  User: userSchema.optional(),
}).passthrough();

export const doorStateSchema = z.object({
  ...lockBase,
  EventType: z.literal('operation'),
  Event: z.enum(['open', 'closed', 'ajar', 'init', 'unknown']),
  Device: z.string().optional(),
  User: userSchema.optional(),
}).passthrough();

export const lockNameChangedSchema = z.object({
  ...lockBase,
  EventType: z.literal('configuration'),
  Event: z.literal('lock_name_changed'),
  Lock: z.object({ Name: z.string() }).passthrough(),
  User: userSchema.optional(),
}).passthrough();

export const configFlagSchema = z.object({
  ...lockBase,
  EventType: z.literal('configuration'),
  Event: z.enum(['privacy_mode', 'vacation_mode', 'keypad_enabled']),
  Value: flag,
}).passthrough();

export const pinManagedSchema = z.object({
  ...lockBase,
  EventType: z.literal('configuration'),
  Event: z.literal('keypad_pin_managed'),
  Lock: lockRef.optional(),
  // The master-PIN variant sends an empty object.
  Pin: z.object({
    state: z.string().optional(),
    action: z.string().optional(),
    pin: z.string().optional(),
    accessType: z.string().optional(),
    accessTimes: z.string().optional(),
    accessRecurrence: z.string().optional(),
  }).passthrough(),
  PinUser: userSchema.optional(),
  User: userSchema.optional(),
}).passthrough();

export const KEYPAD_BATTERY_EVENTS = ['keypad_battery_none', 'keypad_battery_warning', 'keypad_battery_critical'] as const;
export const LOCK_BATTERY_LEVELS = [
  'lock_state_battery_warning_none',
  'lock_state_battery_warning_2week',
  'lock_state_battery_warning_1week',
  'lock_state_battery_warning_2day',
] as const;
export const ANNOUNCED_BATTERY_EVENTS = ['battery_level_none', 'battery_level_warning', 'battery_level_critical'] as const;

export const keypadBatterySchema = z.object({
  ...lockBase,
  EventType: z.literal('battery'),
  Event: z.enum(KEYPAD_BATTERY_EVENTS),
  DeviceType: z.literal('keypad').optional(),
  DeviceSerialNumber: z.string().optional(),
}).passthrough();

export const lockBatteryAlertSchema = z.object({
  ...lockBase,
  EventType: z.literal('system'),
  Event: z.literal('lock_battery_alert'),
  // Any text: a level the table does not list is acknowledged and changes nothing (a 400 would
  // lose the callback for good, since the service never retries one).
  warningLevel: z.string(),
  userID: z.string().optional(),
}).passthrough();

export const announcedBatterySchema = z.object({
  ...lockBase,
  EventType: z.literal('battery'),
  Event: z.enum(ANNOUNCED_BATTERY_EVENTS),
  DeviceType: z.enum(['lock', 'keypad']),
  UserID: z.string().optional(),
  DeviceSerialNumber: z.string().optional(),
}).passthrough();

/** The spec shows LockID as an array of one string on systemstatus callbacks; a plain string is accepted too. */
const systemLockId = z.union([z.tuple([z.string().min(1)]), z.string().min(1)]).transform((value) => (typeof value === 'string' ? value : value[0]));

export const systemStatusSchema = z.object({
  ...lockBase,
  LockID: systemLockId,
  EventType: z.literal('systemstatus'),
  Event: z.enum(['online', 'offline']),
}).passthrough();

export const clockDriftSchema = z.object({
  ...lockBase,
  LockID: systemLockId,
  EventType: z.literal('systemstatus'),
  Event: z.literal('lock_log_timestamp_drifted'),
  warningLevel: z.string().optional(),
  TimestampDrifted: sentTime,
}).passthrough();

export const MEMBERSHIP_EVENTS = ['lock_user_add', 'lock_user_remove', 'lock_usertype_changed', 'lock_accesstype_changed'] as const;

/** accessmgmt on the lock hook (User object) and lockmembership on the user hook (UserID, LockID). */
export const authorizationSchema = z
  .object({
    ...lockBase,
    EventType: z.literal('authorization'),
    Event: z.enum(MEMBERSHIP_EVENTS),
    Lock: lockRef.optional(),
    User: userSchema.optional(),
    UserID: z.string().optional(),
    UserType: z.string().optional(),
    AccessType: z.string().optional(),
  })
  .passthrough()
  .refine((value) => value.User !== undefined || value.UserID !== undefined, { message: 'User or UserID is required' });

export const lifecycleSchema = z.object({
  EventType: z.literal('lifecycle'),
  Event: z.string().optional(),
  EventID: z.string().optional(),
  UserID: z.string().optional(),
  Timestamp: sentTime,
  timeStamp: sentTime,
}).passthrough();

const doorbellBase = {
  DoorbellID: z.string().min(1),
  EventID: z.string().optional(),
  Timestamp: sentTime,
  timeStamp: sentTime,
};

export const motionSchema = z.object({
  ...doorbellBase,
  EventType: z.literal('doorbell_motion_detected'),
  Url: z.string().optional(),
  SecureURL: z.string().optional(),
  Width: z.number().optional().catch(undefined),
  Height: z.number().optional().catch(undefined),
}).passthrough();

export const buttonPushSchema = z.object({
  ...doorbellBase,
  EventType: z.literal('buttonpush'),
  dvrID: z.string().optional(),
}).passthrough();

export const videoAvailableSchema = z.object({
  ...doorbellBase,
  EventType: z.literal('doorbell_video_upload_available'),
  dvrID: z.string().min(1),
  cause: z.string().default('unknown'),
  startTime: sentTime,
}).passthrough();

export type LockOperationPayload = z.infer<typeof lockOperationSchema>;
export type DoorStatePayload = z.infer<typeof doorStateSchema>;
export type LockNameChangedPayload = z.infer<typeof lockNameChangedSchema>;
export type ConfigFlagPayload = z.infer<typeof configFlagSchema>;
export type PinManagedPayload = z.infer<typeof pinManagedSchema>;
export type KeypadBatteryPayload = z.infer<typeof keypadBatterySchema>;
export type LockBatteryAlertPayload = z.infer<typeof lockBatteryAlertSchema>;
export type AnnouncedBatteryPayload = z.infer<typeof announcedBatterySchema>;
export type SystemStatusPayload = z.infer<typeof systemStatusSchema>;
export type ClockDriftPayload = z.infer<typeof clockDriftSchema>;
export type AuthorizationPayload = z.infer<typeof authorizationSchema>;
export type LifecyclePayload = z.infer<typeof lifecycleSchema>;
export type MotionPayload = z.infer<typeof motionSchema>;
export type ButtonPushPayload = z.infer<typeof buttonPushSchema>;
export type VideoAvailablePayload = z.infer<typeof videoAvailableSchema>;
export type CallbackUser = z.infer<typeof userSchema>;

/** A validated callback, tagged with its kind. */
export type CallbackPayload =
  | { kind: 'lockOperation'; payload: LockOperationPayload }
  | { kind: 'doorState'; payload: DoorStatePayload }
  | { kind: 'lockNameChanged'; payload: LockNameChangedPayload }
  | { kind: 'configFlag'; payload: ConfigFlagPayload }
  | { kind: 'pinManaged'; payload: PinManagedPayload }
  | { kind: 'keypadBattery'; payload: KeypadBatteryPayload }
  | { kind: 'lockBatteryAlert'; payload: LockBatteryAlertPayload }
  | { kind: 'announcedBattery'; payload: AnnouncedBatteryPayload }
  | { kind: 'systemStatus'; payload: SystemStatusPayload }
  | { kind: 'clockDrift'; payload: ClockDriftPayload }
  | { kind: 'authorization'; payload: AuthorizationPayload }
  | { kind: 'lifecycle'; payload: LifecyclePayload }
  | { kind: 'motion'; payload: MotionPayload }
  | { kind: 'buttonPush'; payload: ButtonPushPayload }
  | { kind: 'videoAvailable'; payload: VideoAvailablePayload };

export type CallbackKind = CallbackPayload['kind'];
