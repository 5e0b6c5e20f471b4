import { describe, expect, it } from 'vitest';
import * as p from './payloads.js';

// Field tables transcribed from the spec's Events section: field -> type.
type FieldType = 'string' | 'integer' | 'boolean' | 'uuid' | 'epochMs' | 'object' | 'array1' | 'user' | 'userIdOnly' | 'lockName' | 'pin' | 'emptyObject';
type Table = Record<string, FieldType>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USER_FIELDS = ['UserID', 'FirstName', 'LastName', 'PhoneNo', 'Email', 'imageInfo'];

function check(payload: object, table: Table): void {
  expect(Object.keys(payload).sort()).toEqual(Object.keys(table).sort());
  for (const [field, type] of Object.entries(table)) {
    const value = (payload as Record<string, unknown>)[field];
    switch (type) {
      case 'string': expect(typeof value, field).toBe('string'); break;
      case 'integer': expect(Number.isInteger(value), field).toBe(true); break;
      case 'boolean': expect(typeof value, field).toBe('boolean'); break;
      case 'uuid': expect(value, field).toMatch(UUID); break;
      case 'epochMs': expect(String(value), field).toMatch(/^\d{13}$/); expect(Number.isInteger(value)).toBe(true); break;
      case 'array1': expect(Array.isArray(value) && value.length === 1 && typeof value[0] === 'string', field).toBe(true); break;
      case 'userIdOnly': expect(Object.keys(value as object), field).toEqual(['UserID']); break;
      case 'lockName': expect(Object.keys(value as object)).toEqual(['Name']); expect(typeof (value as { Name: unknown }).Name).toBe('string'); break;
      case 'emptyObject': expect(value).toEqual({}); break;
      case 'pin': {
        const pin = value as Record<string, unknown>;
        expect(Object.keys(pin).sort()).toEqual(['accessRecurrence', 'accessTimes', 'accessType', 'action', 'pin', 'state']);
        for (const v of Object.values(pin)) expect(typeof v).toBe('string');
        expect(pin.pin).toMatch(/^\d+$/);
        expect(pin.accessTimes).toMatch(/^STARTSEC=\d+;ENDSEC=\d+$/);
        expect(pin.accessRecurrence).toMatch(/FREQ=\w+;BYDAY=([A-Z]{2},)*[A-Z]{2}/);
        break;
      }
      case 'user': {
        const user = value as Record<string, unknown>;
        for (const f of USER_FIELDS) expect(user, `${field}.${f}`).toHaveProperty(f);
        for (const f of ['UserID', 'FirstName', 'LastName', 'PhoneNo', 'Email']) expect(typeof user[f], `${field}.${f}`).toBe('string');
        const info = user.imageInfo;
        expect(info === null || info === 'n/a' || (typeof info === 'object' && 'original' in info && 'thumbnail' in info)).toBe(true);
        break;
      }
      case 'object': expect(typeof value).toBe('object'); break;
    }
  }
}

const alex = p.person({ UserID: 'u1' });
const stamps = { at: 1_767_225_600_000, sentAt: 1_767_225_601_000 };

describe('spec Lock: operation', () => {
  const table: Table = { EventType: 'string', Event: 'string', Device: 'string', LockID: 'string', User: 'user', EventID: 'uuid', Timestamp: 'epochMs', timeStamp: 'epochMs' };

  it('unlock, lock with the app or API (Device lock) and at the keypad (Device keypad): full User object', () => {
    for (const device of ['lock', 'keypad'] as const) {
      for (const event of ['lock', 'unlock'] as const) {
        const payload = p.lockOperation({ lockId: 'L1', event, device, user: alex, ...stamps });
        check(payload, table);
        expect(payload).toMatchObject({ EventType: 'operation', Event: event, Device: device, LockID: 'L1', Timestamp: stamps.at, timeStamp: stamps.sentAt });
      }
    }
  });

  it('turned by hand: User has only UserID manualunlock or manuallock; timeStamp, EventID, Timestamp present', () => {
    const unlock = p.manualOperation({ lockId: 'L1', event: 'unlock' });
    check(unlock, { ...table, User: 'userIdOnly' });
    expect(unlock.User).toEqual({ UserID: 'manualunlock' });
    expect(unlock.Device).toBe('lock');
    expect(p.manualOperation({ lockId: 'L1', event: 'lock' }).User).toEqual({ UserID: 'manuallock' });
  });

  it('onetouchlock: Device keypad; User fixed: onetouchlock, One Touch, Lock, other fields n/a', () => {
    const payload = p.oneTouchLock({ lockId: 'L1' });
    check(payload, table);
    expect(payload).toMatchObject({ Event: 'onetouchlock', Device: 'keypad' });
    expect(payload.User).toEqual({ UserID: 'onetouchlock', FirstName: 'One Touch', LastName: 'Lock', PhoneNo: 'n/a', Email: 'n/a', imageInfo: 'n/a' });
  });

  it('door states open, closed, ajar and the older init, unknown: User has only UserID DoorStateChanged', () => {
    for (const state of ['open', 'closed', 'ajar', 'init', 'unknown'] as const) {
      const payload = p.doorState({ lockId: 'L1', state });
      check(payload, { ...table, User: 'userIdOnly' });
      expect(payload).toMatchObject({ EventType: 'operation', Event: state, Device: 'lock', User: { UserID: 'DoorStateChanged' } });
    }
  });

  it('status: EventType status, Event the current state (lock, unlock), User the one who checked', () => {
    for (const state of ['lock', 'unlock'] as const) {
      const payload = p.lockStatus({ lockId: 'L1', state, user: alex });
      check(payload, { EventType: 'string', Event: 'string', Device: 'string', LockID: 'string', User: 'user', Timestamp: 'epochMs', timeStamp: 'epochMs' });
      expect(payload).toMatchObject({ EventType: 'status', Event: state, User: { UserID: 'u1' } });
    }
  });

  it('a user picture is the imageInfo object with original and thumbnail (width, height, format, url, secure_url)', () => {
    const info = p.imageInfo('http://127.0.0.1:1/media') as unknown as { original: Record<string, unknown>; thumbnail: Record<string, unknown> };
    for (const variant of [info.original, info.thumbnail]) {
      expect(Object.keys(variant).sort()).toEqual(['format', 'height', 'secure_url', 'url', 'width']);
      expect(Number.isInteger(variant.width) && Number.isInteger(variant.height)).toBe(true);
      expect(variant.secure_url).toMatch(/^https:/);
    }
  });
});

describe('spec Lock: configuration', () => {
  it('lock_name_changed: Lock.Name, User', () => {
    const payload = p.lockNameChanged({ lockId: 'L1', name: 'Porch', user: alex });
    check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', User: 'user' });
    expect(payload).toMatchObject({ EventType: 'configuration', Event: 'lock_name_changed', Lock: { Name: 'Porch' } });
  });

  it('privacy_mode, vacation_mode, keypad_enabled: boolean Value', () => {
    for (const [build, event] of [[p.privacyMode, 'privacy_mode'], [p.vacationMode, 'vacation_mode'], [p.keypadEnabled, 'keypad_enabled']] as const) {
      for (const value of [true, false]) {
        const payload = build({ lockId: 'L1', value });
        check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Value: 'boolean' });
        expect(payload).toEqual({ EventType: 'configuration', Event: event, LockID: 'L1', Value: value });
      }
    }
  });

  it('keypad_pin_managed: Lock.Name, Pin, PinUser (with PartnerUserID), User, Timestamp for every Pin.state', () => {
    for (const state of ['load', 'disable', 'enable', 'delete', 'update'] as const) {
      const payload = p.keypadPinManaged({ lockId: 'L1', lockName: 'Front', state, pinUser: p.person({ UserID: 'u2' }), user: alex, at: stamps.at });
      check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', Pin: 'pin', PinUser: 'user', User: 'user', Timestamp: 'epochMs' });
      expect(payload.Pin).toMatchObject({ state, action: 'commit', accessType: 'recurring' });
      expect(typeof payload.PinUser.PartnerUserID).toBe('string');
    }
  });

  it('master PIN: Pin empty, PinUser and User with UserID masterpin (Master, PIN, other fields n/a)', () => {
    const payload = p.masterPinChanged({ lockId: 'L1', lockName: 'Front' });
    check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', Pin: 'emptyObject', PinUser: 'user', User: 'user', Timestamp: 'epochMs' });
    const master = { UserID: 'masterpin', FirstName: 'Master', LastName: 'PIN', PhoneNo: 'n/a', Email: 'n/a', imageInfo: 'n/a' };
    expect(payload.User).toEqual(master);
    expect(payload.PinUser).toEqual(master);
  });
});

describe('spec Lock: battery', () => {
  it('keypad: EventType battery, LockID, Event, DeviceType keypad, DeviceSerialNumber', () => {
    for (const event of ['keypad_battery_none', 'keypad_battery_warning', 'keypad_battery_critical'] as const) {
      const payload = p.keypadBattery({ lockId: 'L1', event, serialNumber: 'K1' });
      check(payload, { EventType: 'string', LockID: 'string', Event: 'string', DeviceType: 'string', DeviceSerialNumber: 'string' });
      expect(payload).toEqual({ EventType: 'battery', LockID: 'L1', Event: event, DeviceType: 'keypad', DeviceSerialNumber: 'K1' });
    }
  });

  it('lock: EventType system, Event lock_battery_alert, warningLevel, userID', () => {
    for (const warningLevel of ['lock_state_battery_warning_none', 'lock_state_battery_warning_2week', 'lock_state_battery_warning_1week', 'lock_state_battery_warning_2day'] as const) {
      const payload = p.lockBatteryAlert({ lockId: 'L1', warningLevel, userId: 'u1' });
      check(payload, { EventType: 'string', LockID: 'string', Event: 'string', warningLevel: 'string', userID: 'string' });
      expect(payload).toEqual({ EventType: 'system', LockID: 'L1', Event: 'lock_battery_alert', warningLevel, userID: 'u1' });
    }
  });

  it('announced shape: EventType battery, DeviceType keypad or lock, LockID, UserID, Event battery_level_*', () => {
    for (const deviceType of ['keypad', 'lock'] as const) {
      for (const event of ['battery_level_none', 'battery_level_warning', 'battery_level_critical'] as const) {
        const payload = p.batteryLevel({ lockId: 'L1', deviceType, event, userId: 'u1' });
        check(payload, { EventType: 'string', DeviceType: 'string', LockID: 'string', UserID: 'string', Event: 'string' });
        expect(payload).toMatchObject({ EventType: 'battery', DeviceType: deviceType, Event: event });
      }
    }
  });
});

describe('spec Lock: systemstatus', () => {
  it('online, offline: LockID is an array of one string', () => {
    for (const event of ['online', 'offline'] as const) {
      const payload = p.systemStatus({ lockId: 'L1', event });
      check(payload, { EventType: 'string', LockID: 'array1', Event: 'string' });
      expect(payload).toEqual({ EventType: 'systemstatus', LockID: ['L1'], Event: event });
    }
  });

  it('lock_log_timestamp_drifted: warningLevel, Timestamp (when sent), TimestampDrifted (the lock\'s time)', () => {
    const payload = p.clockDrift({ lockId: 'L1', driftedTo: 1_799_999_999_999, sentAt: stamps.sentAt });
    check(payload, { EventType: 'string', LockID: 'string', Event: 'string', warningLevel: 'string', Timestamp: 'epochMs', TimestampDrifted: 'epochMs' });
    expect(payload).toMatchObject({ EventType: 'systemstatus', Event: 'lock_log_timestamp_drifted', Timestamp: stamps.sentAt, TimestampDrifted: 1_799_999_999_999 });
  });
});

describe('spec Lock: accessmgmt (EventType authorization)', () => {
  it('lock_user_add, lock_user_remove: Lock.Name, User', () => {
    for (const [build, event] of [[p.lockUserAdd, 'lock_user_add'], [p.lockUserRemove, 'lock_user_remove']] as const) {
      const payload = build({ lockId: 'L1', lockName: 'Front', user: alex });
      check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', User: 'user' });
      expect(payload).toMatchObject({ EventType: 'authorization', Event: event });
    }
  });

  it('lock_usertype_changed: User with UserType (user, superuser), EventID, Timestamp, timeStamp', () => {
    for (const userType of ['user', 'superuser'] as const) {
      const payload = p.lockUserTypeChanged({ lockId: 'L1', lockName: 'Front', user: alex, userType });
      check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', User: 'user', EventID: 'uuid', Timestamp: 'epochMs', timeStamp: 'epochMs' });
      expect(payload.User.UserType).toBe(userType);
      expect(payload.Event).toBe('lock_usertype_changed');
    }
  });

  it('lock_accesstype_changed: User with AccessType (rule_access_always, _temporary, _recurring)', () => {
    for (const accessType of ['rule_access_always', 'rule_access_temporary', 'rule_access_recurring'] as const) {
      const payload = p.lockAccessTypeChanged({ lockId: 'L1', lockName: 'Front', user: alex, accessType });
      check(payload, { EventType: 'string', Event: 'string', LockID: 'string', Lock: 'lockName', User: 'user', EventID: 'uuid', Timestamp: 'epochMs', timeStamp: 'epochMs' });
      expect(payload.User.AccessType).toBe(accessType);
    }
  });
});

describe('spec Doorbell', () => {
  it('motiondetected: EventType doorbell_motion_detected, DoorbellID, Url (http), SecureURL (https), Width, Height', () => {
    const payload = p.doorbellMotion({ doorbellId: 'D1', url: 'http://127.0.0.1:1/m.jpg', width: 320, height: 240 });
    check(payload, { EventType: 'string', DoorbellID: 'string', Url: 'string', SecureURL: 'string', Width: 'integer', Height: 'integer' });
    expect(payload.EventType).toBe('doorbell_motion_detected');
    expect(payload.Url).toMatch(/^http:/);
    expect(payload.SecureURL).toMatch(/^https:/);
  });

  it('buttonpush: EventType buttonpush, DoorbellID, dvrID (UUID)', () => {
    const payload = p.doorbellButtonPush({ doorbellId: 'D1' });
    check(payload, { EventType: 'string', DoorbellID: 'string', dvrID: 'uuid' });
    expect(payload.EventType).toBe('buttonpush');
  });

  it('videoavailable: EventType doorbell_video_upload_available, DoorbellID, dvrID, cause, startTime (epoch ms)', () => {
    for (const cause of ['doorbell_motion_detected', 'buttonpush'] as const) {
      const payload = p.doorbellVideoAvailable({ doorbellId: 'D1', cause, startTime: stamps.at });
      check(payload, { EventType: 'string', DoorbellID: 'string', dvrID: 'uuid', cause: 'string', startTime: 'epochMs' });
      expect(payload).toMatchObject({ EventType: 'doorbell_video_upload_available', cause });
    }
  });
});

describe('spec User', () => {
  const table: Table = { EventType: 'string', Event: 'string', UserID: 'string', LockID: 'string', timeStamp: 'epochMs', EventID: 'uuid', Timestamp: 'epochMs' };

  it('lockmembership: EventType authorization; Event lock_user_add or lock_user_remove; UserID; LockID; timeStamp; EventID; Timestamp', () => {
    for (const event of ['lock_user_add', 'lock_user_remove'] as const) {
      const payload = p.userLockMembership({ userId: 'u1', lockId: 'L1', event });
      check(payload, table);
      expect(payload).toMatchObject({ EventType: 'authorization', Event: event });
    }
  });

  it('lockmembership: lock_usertype_changed with UserType; lock_accesstype_changed with AccessType', () => {
    const typed = p.userLockUserTypeChanged({ userId: 'u1', lockId: 'L1', userType: 'superuser' });
    check(typed, { ...table, UserType: 'string' });
    expect(typed).toMatchObject({ Event: 'lock_usertype_changed', UserType: 'superuser' });
    const access = p.userLockAccessTypeChanged({ userId: 'u1', lockId: 'L1', accessType: 'rule_access_temporary' });
    check(access, { ...table, AccessType: 'string' });
    expect(access).toMatchObject({ Event: 'lock_accesstype_changed', AccessType: 'rule_access_temporary' });
  });

  it('lifecycle (design): EventType lifecycle, Event e.g. user_deleted, UserID, timeStamp', () => {
    const payload = p.userLifecycle({ userId: 'u1' });
    check(payload, { EventType: 'string', Event: 'string', UserID: 'string', timeStamp: 'epochMs' });
    expect(payload).toMatchObject({ EventType: 'lifecycle', Event: 'user_deleted', UserID: 'u1' });
  });
});

describe('Routing by notification type (spec: registration selects by notificationTypes)', () => {
  it('each payload maps to the notification type of its group', () => {
    const lock: Array<[object, p.NotificationType]> = [
      [p.manualOperation({ lockId: 'L', event: 'lock' }), 'operation'],
      [p.lockStatus({ lockId: 'L', state: 'lock', user: alex }), 'operation'],
      [p.privacyMode({ lockId: 'L', value: true }), 'configuration'],
      [p.keypadBattery({ lockId: 'L', event: 'keypad_battery_none', serialNumber: 'K' }), 'battery'],
      [p.lockBatteryAlert({ lockId: 'L', warningLevel: 'lock_state_battery_warning_none', userId: 'u' }), 'battery'],
      [p.systemStatus({ lockId: 'L', event: 'online' }), 'systemstatus'],
      [p.clockDrift({ lockId: 'L', driftedTo: 1 }), 'systemstatus'],
      [p.lockUserAdd({ lockId: 'L', lockName: 'n', user: alex }), 'accessmgmt'],
    ];
    for (const [payload, type] of lock) expect(p.notificationTypeOf(payload, 'lock')).toBe(type);
    expect(p.notificationTypeOf(p.doorbellMotion({ doorbellId: 'D', url: 'http://x/y', width: 1, height: 1 }), 'doorbell')).toBe('motiondetected');
    expect(p.notificationTypeOf(p.doorbellButtonPush({ doorbellId: 'D' }), 'doorbell')).toBe('buttonpush');
    expect(p.notificationTypeOf(p.doorbellVideoAvailable({ doorbellId: 'D', cause: 'buttonpush' }), 'doorbell')).toBe('videoavailable');
    expect(p.notificationTypeOf(p.userLockMembership({ userId: 'u', lockId: 'L', event: 'lock_user_add' }), 'user')).toBe('lockmembership');
    expect(p.notificationTypeOf(p.userLifecycle({ userId: 'u' }), 'user')).toBe('lifecycle');
  });
});
