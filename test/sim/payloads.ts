// Builders for every callback payload shape in the spec's Events section, with the spec's exact
// field names and types. One exported function per shape; times are 13-digit epoch milliseconds.
import { randomUUID } from 'node:crypto';

export interface ImageVariant {
  width: number;
  height: number;
  format: string;
  url: string;
  secure_url: string;
}

export type ImageInfo = null | 'n/a' | { original: ImageVariant; thumbnail: ImageVariant };

/** The full User object of the spec's shared structures. */
export interface CallbackUser {
  UserID: string;
  FirstName: string;
  LastName: string;
  PhoneNo: string;
  Email: string;
  imageInfo: ImageInfo;
  UserType?: string;
  AccessType?: string;
  PartnerUserID?: string;
}

/** For manual operations and door-state changes the User object holds only UserID. */
export interface ReservedUser {
  UserID: 'manualunlock' | 'manuallock' | 'DoorStateChanged';
}

export type UserType = 'user' | 'superuser';
export type AccessType = 'rule_access_always' | 'rule_access_temporary' | 'rule_access_recurring';
export type PinState = 'load' | 'disable' | 'enable' | 'delete' | 'update';

export interface PinObject {
  state: PinState;
  action: string;
  pin: string;
  accessType: string;
  accessTimes: string;
  accessRecurrence: string;
}

interface Times {
  /** Time the event happened (Timestamp). */
  at?: number;
  /** Time the webhook was sent (timeStamp). */
  sentAt?: number;
  eventId?: string;
}

const now = (): number => Date.now();

export function person(fields: Partial<CallbackUser> & { UserID: string }): CallbackUser {
  const { UserID, ...rest } = fields;
  return {
    UserID,
    FirstName: 'Alex',
    LastName: 'Example',
    PhoneNo: '+15555550100',
    Email: 'alex@example.com',
    imageInfo: null,
    ...rest,
  };
}

/** An imageInfo object (both variants), for payloads where a user picture is set. */
export function imageInfo(baseUrl: string): ImageInfo {
  const variant = (size: number): ImageVariant => ({
    width: size, height: size, format: 'jpg',
    url: `${baseUrl.replace(/^https:/, 'http:')}/user-${size}.jpg`,
    secure_url: `${baseUrl.replace(/^http:/, 'https:')}/user-${size}.jpg`,
  });
  return { original: variant(512), thumbnail: variant(128) };
}

function reservedPerson(userId: string, firstName: string, lastName: string): CallbackUser {
  return { UserID: userId, FirstName: firstName, LastName: lastName, PhoneNo: 'n/a', Email: 'n/a', imageInfo: 'n/a' };
}

// ---- Lock: operation ----

export interface OperationPayload {
  EventType: 'operation';
  Event: 'lock' | 'unlock';
  Device: 'lock' | 'keypad';
  LockID: string;
  User: CallbackUser;
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

/** Lock or unlock with the app or the API (Device `lock`) or at the keypad (Device `keypad`); full User. */
export function lockOperation(o: { lockId: string; event: 'lock' | 'unlock'; device: 'lock' | 'keypad'; user: CallbackUser } & Times): OperationPayload {
  const at = o.at ?? now();
  return { EventType: 'operation', Event: o.event, Device: o.device, LockID: o.lockId, User: o.user, EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at };
}

export interface ManualOperationPayload {
  EventType: 'operation';
  Event: 'lock' | 'unlock';
  Device: 'lock';
  LockID: string;
  User: { UserID: 'manualunlock' | 'manuallock' };
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

/** Turned by hand: User has only UserID `manualunlock` / `manuallock`; timeStamp, EventID, Timestamp present. */
export function manualOperation(o: { lockId: string; event: 'lock' | 'unlock' } & Times): ManualOperationPayload {
  const at = o.at ?? now();
  return {
    EventType: 'operation', Event: o.event, Device: 'lock', LockID: o.lockId,
    User: { UserID: o.event === 'unlock' ? 'manualunlock' : 'manuallock' },
    EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at,
  };
}

export interface OneTouchLockPayload {
  EventType: 'operation';
  Event: 'onetouchlock';
  Device: 'keypad';
  LockID: string;
  User: CallbackUser;
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

/** One-touch lock at the keypad: the fixed `onetouchlock` user. */
export function oneTouchLock(o: { lockId: string } & Times): OneTouchLockPayload {
  const at = o.at ?? now();
  return {
    EventType: 'operation', Event: 'onetouchlock', Device: 'keypad', LockID: o.lockId,
    User: reservedPerson('onetouchlock', 'One Touch', 'Lock'),
    EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at,
  };
}

export type DoorStateEvent = 'open' | 'closed' | 'ajar' | 'init' | 'unknown';

export interface DoorStatePayload {
  EventType: 'operation';
  Event: DoorStateEvent;
  Device: 'lock';
  LockID: string;
  User: { UserID: 'DoorStateChanged' };
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

/** Door sensor: open, closed, ajar, and the older init / unknown. */
export function doorState(o: { lockId: string; state: DoorStateEvent } & Times): DoorStatePayload {
  const at = o.at ?? now();
  return {
    EventType: 'operation', Event: o.state, Device: 'lock', LockID: o.lockId, User: { UserID: 'DoorStateChanged' },
    EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at,
  };
}

export interface StatusPayload {
  EventType: 'status';
  Event: 'lock' | 'unlock';
  Device: 'lock';
  LockID: string;
  User: CallbackUser;
  Timestamp: number;
  timeStamp: number;
}

/** Sent to all listeners when anyone calls remote-operate status: Event = present state, User = who checked. */
export function lockStatus(o: { lockId: string; state: 'lock' | 'unlock'; user: CallbackUser; at?: number; sentAt?: number }): StatusPayload {
  const at = o.at ?? now();
  return { EventType: 'status', Event: o.state, Device: 'lock', LockID: o.lockId, User: o.user, Timestamp: at, timeStamp: o.sentAt ?? at };
}

// ---- Lock: configuration ----

export interface LockNameChangedPayload {
  EventType: 'configuration';
  Event: 'lock_name_changed';
  LockID: string;
  Lock: { Name: string };
  User: CallbackUser;
}

export function lockNameChanged(o: { lockId: string; name: string; user: CallbackUser }): LockNameChangedPayload {
  return { EventType: 'configuration', Event: 'lock_name_changed', LockID: o.lockId, Lock: { Name: o.name }, User: o.user };
}

export interface ConfigurationFlagPayload<E extends string> {
  EventType: 'configuration';
  Event: E;
  LockID: string;
  Value: boolean;
}

/** true: lock in privacy mode (keypad disabled, PINs and master code do not unlock). */
export function privacyMode(o: { lockId: string; value: boolean }): ConfigurationFlagPayload<'privacy_mode'> {
  return { EventType: 'configuration', Event: 'privacy_mode', LockID: o.lockId, Value: o.value };
}

/** Locks with integrated keypads only. */
export function vacationMode(o: { lockId: string; value: boolean }): ConfigurationFlagPayload<'vacation_mode'> {
  return { EventType: 'configuration', Event: 'vacation_mode', LockID: o.lockId, Value: o.value };
}

/** Locks with detached keypads only; false: keypad disabled. */
export function keypadEnabled(o: { lockId: string; value: boolean }): ConfigurationFlagPayload<'keypad_enabled'> {
  return { EventType: 'configuration', Event: 'keypad_enabled', LockID: o.lockId, Value: o.value };
}

export interface PinManagedPayload {
  EventType: 'configuration';
  Event: 'keypad_pin_managed';
  LockID: string;
  Lock: { Name: string };
  Pin: PinObject | Record<string, never>;
  PinUser: CallbackUser;
  User: CallbackUser;
  Timestamp: number;
}

/** A PIN added, deleted, enabled, disabled or changed. `User` managed it; `PinUser` owns the PIN. */
export function keypadPinManaged(o: {
  lockId: string; lockName: string; state: PinState; pinUser: CallbackUser; user: CallbackUser; pin?: Partial<PinObject>; at?: number;
}): PinManagedPayload {
  return {
    EventType: 'configuration', Event: 'keypad_pin_managed', LockID: o.lockId, Lock: { Name: o.lockName },
    Pin: {
      state: o.state, action: 'commit', pin: '123456', accessType: 'recurring',
      accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
      ...o.pin,
    },
    PinUser: { PartnerUserID: 'n/a', ...o.pinUser },
    User: o.user,
    Timestamp: o.at ?? now(),
  };
}

/** Master PIN changed (built-in keypad): Pin empty, PinUser and User the `masterpin` actor. */
export function masterPinChanged(o: { lockId: string; lockName: string; at?: number }): PinManagedPayload {
  return {
    EventType: 'configuration', Event: 'keypad_pin_managed', LockID: o.lockId, Lock: { Name: o.lockName },
    Pin: {},
    PinUser: reservedPerson('masterpin', 'Master', 'PIN'),
    User: reservedPerson('masterpin', 'Master', 'PIN'),
    Timestamp: o.at ?? now(),
  };
}

// ---- Lock: battery ----

export type KeypadBatteryEvent = 'keypad_battery_none' | 'keypad_battery_warning' | 'keypad_battery_critical';

export interface KeypadBatteryPayload {
  EventType: 'battery';
  LockID: string;
  Event: KeypadBatteryEvent;
  DeviceType: 'keypad';
  DeviceSerialNumber: string;
}

export function keypadBattery(o: { lockId: string; event: KeypadBatteryEvent; serialNumber: string }): KeypadBatteryPayload {
  return { EventType: 'battery', LockID: o.lockId, Event: o.event, DeviceType: 'keypad', DeviceSerialNumber: o.serialNumber };
}

export type LockBatteryWarningLevel = 'lock_state_battery_warning_none' | 'lock_state_battery_warning_2week' | 'lock_state_battery_warning_1week' | 'lock_state_battery_warning_2day';

export interface LockBatteryAlertPayload {
  EventType: 'system';
  LockID: string;
  Event: 'lock_battery_alert';
  warningLevel: LockBatteryWarningLevel;
  userID: string;
}

/** The lock's own battery; userID is the user who registered the hook. */
export function lockBatteryAlert(o: { lockId: string; warningLevel: LockBatteryWarningLevel; userId: string }): LockBatteryAlertPayload {
  return { EventType: 'system', LockID: o.lockId, Event: 'lock_battery_alert', warningLevel: o.warningLevel, userID: o.userId };
}

export type BatteryLevelEvent = 'battery_level_none' | 'battery_level_warning' | 'battery_level_critical';

export interface BatteryLevelPayload {
  EventType: 'battery';
  DeviceType: 'keypad' | 'lock';
  LockID: string;
  UserID: string;
  Event: BatteryLevelEvent;
}

/** The announced future battery shape for lock and keypad. */
export function batteryLevel(o: { lockId: string; deviceType: 'keypad' | 'lock'; event: BatteryLevelEvent; userId: string }): BatteryLevelPayload {
  return { EventType: 'battery', DeviceType: o.deviceType, LockID: o.lockId, UserID: o.userId, Event: o.event };
}

// ---- Lock: systemstatus ----

export interface SystemStatusPayload {
  EventType: 'systemstatus';
  LockID: [string];
  Event: 'online' | 'offline';
}

/** The bridge's reachability; LockID is an array of one string here. */
export function systemStatus(o: { lockId: string; event: 'online' | 'offline' }): SystemStatusPayload {
  return { EventType: 'systemstatus', LockID: [o.lockId], Event: o.event };
}

export interface ClockDriftPayload {
  EventType: 'systemstatus';
  LockID: string;
  Event: 'lock_log_timestamp_drifted';
  warningLevel: string;
  Timestamp: number;
  TimestampDrifted: number;
}

/** Timestamp is when the webhook was sent; TimestampDrifted is the lock's (wrong) time. */
export function clockDrift(o: { lockId: string; driftedTo: number; warningLevel?: string; sentAt?: number }): ClockDriftPayload {
  return {
    EventType: 'systemstatus', LockID: o.lockId, Event: 'lock_log_timestamp_drifted',
    warningLevel: o.warningLevel ?? 'warning', Timestamp: o.sentAt ?? now(), TimestampDrifted: o.driftedTo,
  };
}

// ---- Lock: accessmgmt (EventType authorization) ----

export interface LockMembershipPayload {
  EventType: 'authorization';
  Event: 'lock_user_add' | 'lock_user_remove';
  LockID: string;
  Lock: { Name: string };
  User: CallbackUser;
}

export function lockUserAdd(o: { lockId: string; lockName: string; user: CallbackUser }): LockMembershipPayload {
  return { EventType: 'authorization', Event: 'lock_user_add', LockID: o.lockId, Lock: { Name: o.lockName }, User: o.user };
}

export function lockUserRemove(o: { lockId: string; lockName: string; user: CallbackUser }): LockMembershipPayload {
  return { EventType: 'authorization', Event: 'lock_user_remove', LockID: o.lockId, Lock: { Name: o.lockName }, User: o.user };
}

export interface LockUserTypeChangedPayload {
  EventType: 'authorization';
  Event: 'lock_usertype_changed';
  LockID: string;
  Lock: { Name: string };
  User: CallbackUser & { UserType: UserType };
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

/** UserType `user`: now a guest; `superuser`: now an owner. */
export function lockUserTypeChanged(o: { lockId: string; lockName: string; user: CallbackUser; userType: UserType } & Times): LockUserTypeChangedPayload {
  const at = o.at ?? now();
  return {
    EventType: 'authorization', Event: 'lock_usertype_changed', LockID: o.lockId, Lock: { Name: o.lockName },
    User: { ...o.user, UserType: o.userType }, EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at,
  };
}

export interface LockAccessTypeChangedPayload {
  EventType: 'authorization';
  Event: 'lock_accesstype_changed';
  LockID: string;
  Lock: { Name: string };
  User: CallbackUser & { AccessType: AccessType };
  EventID: string;
  Timestamp: number;
  timeStamp: number;
}

export function lockAccessTypeChanged(o: { lockId: string; lockName: string; user: CallbackUser; accessType: AccessType } & Times): LockAccessTypeChangedPayload {
  const at = o.at ?? now();
  return {
    EventType: 'authorization', Event: 'lock_accesstype_changed', LockID: o.lockId, Lock: { Name: o.lockName },
    User: { ...o.user, AccessType: o.accessType }, EventID: o.eventId ?? randomUUID(), Timestamp: at, timeStamp: o.sentAt ?? at,
  };
}

// ---- Doorbell ----

export interface DoorbellMotionPayload {
  EventType: 'doorbell_motion_detected';
  DoorbellID: string;
  Url: string;
  SecureURL: string;
  Width: number;
  Height: number;
}

/** A still image taken at the motion: Url (http) and SecureURL (https) of the same picture. */
export function doorbellMotion(o: { doorbellId: string; url: string; secureUrl?: string; width: number; height: number }): DoorbellMotionPayload {
  return {
    EventType: 'doorbell_motion_detected', DoorbellID: o.doorbellId, Url: o.url,
    SecureURL: o.secureUrl ?? o.url.replace(/^http:/, 'https:'), Width: o.width, Height: o.height,
  };
}

export interface ButtonPushPayload {
  EventType: 'buttonpush';
  DoorbellID: string;
  dvrID: string;
}

export function doorbellButtonPush(o: { doorbellId: string; dvrId?: string }): ButtonPushPayload {
  return { EventType: 'buttonpush', DoorbellID: o.doorbellId, dvrID: o.dvrId ?? randomUUID() };
}

export interface VideoAvailablePayload {
  EventType: 'doorbell_video_upload_available';
  DoorbellID: string;
  dvrID: string;
  cause: 'doorbell_motion_detected' | 'buttonpush';
  startTime: number;
}

export function doorbellVideoAvailable(o: { doorbellId: string; dvrId?: string; cause: 'doorbell_motion_detected' | 'buttonpush'; startTime?: number }): VideoAvailablePayload {
  return { EventType: 'doorbell_video_upload_available', DoorbellID: o.doorbellId, dvrID: o.dvrId ?? randomUUID(), cause: o.cause, startTime: o.startTime ?? now() };
}

// ---- User ----

export interface UserMembershipPayload {
  EventType: 'authorization';
  Event: 'lock_user_add' | 'lock_user_remove';
  UserID: string;
  LockID: string;
  timeStamp: number;
  EventID: string;
  Timestamp: number;
}

/** lockmembership on the user hook: the user was added to or removed from a lock. */
export function userLockMembership(o: { userId: string; lockId: string; event: 'lock_user_add' | 'lock_user_remove' } & Times): UserMembershipPayload {
  const at = o.at ?? now();
  return { EventType: 'authorization', Event: o.event, UserID: o.userId, LockID: o.lockId, timeStamp: o.sentAt ?? at, EventID: o.eventId ?? randomUUID(), Timestamp: at };
}

export interface UserTypeChangedPayload {
  EventType: 'authorization';
  Event: 'lock_usertype_changed';
  UserID: string;
  LockID: string;
  UserType: UserType;
  timeStamp: number;
  EventID: string;
  Timestamp: number;
}

export function userLockUserTypeChanged(o: { userId: string; lockId: string; userType: UserType } & Times): UserTypeChangedPayload {
  const at = o.at ?? now();
  return { EventType: 'authorization', Event: 'lock_usertype_changed', UserID: o.userId, LockID: o.lockId, UserType: o.userType, timeStamp: o.sentAt ?? at, EventID: o.eventId ?? randomUUID(), Timestamp: at };
}

export interface AccessTypeChangedPayload {
  EventType: 'authorization';
  Event: 'lock_accesstype_changed';
  UserID: string;
  LockID: string;
  AccessType: AccessType;
  timeStamp: number;
  EventID: string;
  Timestamp: number;
}

export function userLockAccessTypeChanged(o: { userId: string; lockId: string; accessType: AccessType } & Times): AccessTypeChangedPayload {
  const at = o.at ?? now();
  return { EventType: 'authorization', Event: 'lock_accesstype_changed', UserID: o.userId, LockID: o.lockId, AccessType: o.accessType, timeStamp: o.sentAt ?? at, EventID: o.eventId ?? randomUUID(), Timestamp: at };
}

export interface LifecyclePayload {
  EventType: 'lifecycle';
  Event: string;
  UserID: string;
  timeStamp: number;
}

/** The spec does not show it; the design settles EventType `lifecycle` (e.g. Event `user_deleted`). */
export function userLifecycle(o: { userId: string; event?: string; sentAt?: number }): LifecyclePayload {
  return { EventType: 'lifecycle', Event: o.event ?? 'user_deleted', UserID: o.userId, timeStamp: o.sentAt ?? now() };
}

// ---- Routing ----

export type NotificationType =
  | 'operation' | 'configuration' | 'battery' | 'systemstatus' | 'accessmgmt'
  | 'motiondetected' | 'videoavailable' | 'buttonpush'
  | 'lockmembership' | 'lifecycle';

/** Which notification type selects a payload, for a registration of the given kind. */
export function notificationTypeOf(payload: object, kind: 'lock' | 'doorbell' | 'user'): NotificationType | undefined {
  const eventType = (payload as { EventType?: unknown }).EventType;
  switch (eventType) {
    case 'operation':
    case 'status':
      return 'operation';
    case 'configuration':
      return 'configuration';
    case 'battery':
    case 'system':
      return 'battery';
    case 'systemstatus':
      return 'systemstatus';
    case 'authorization':
      return kind === 'user' ? 'lockmembership' : 'accessmgmt';
    case 'doorbell_motion_detected':
      return 'motiondetected';
    case 'buttonpush':
      return 'buttonpush';
    case 'doorbell_video_upload_available':
      return 'videoavailable';
    case 'lifecycle':
      return 'lifecycle';
    default:
      return undefined;
  }
}
