// Callback bodies shaped like the spec's Events section, for the receiver's own tests.
export const LOCK_ID = 'LOCK-1';
export const DOORBELL_ID = 'DB-1';
export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

const person = {
  UserID: 'user-1',
  FirstName: 'Ada',
  LastName: 'Lovelace',
  PhoneNo: '+10000000000',
  Email: 'ada@example.com',
  imageInfo: {
    original: { width: 10, height: 10, format: 'jpg', url: 'http://img/o.jpg', secure_url: 'https://img/o.jpg' },
    thumbnail: { width: 2, height: 2, format: 'jpg', url: 'http://img/t.jpg', secure_url: 'https://img/t.jpg' },
  },
};
const nonPerson = (UserID: string, FirstName?: string, LastName?: string) =>
  FirstName === undefined ? { UserID } : { UserID, FirstName, LastName, PhoneNo: 'n/a', Email: 'n/a', imageInfo: 'n/a' };

export const fixtures = {
  appUnlock: { LockID: LOCK_ID, EventType: 'operation', Event: 'unlock', Device: 'lock', User: person, EventID: 'e-app-unlock', Timestamp: T0, timeStamp: T0 + 100 },
  keypadLock: { LockID: LOCK_ID, EventType: 'operation', Event: 'lock', Device: 'keypad', User: { ...person, imageInfo: null }, Timestamp: T0 },
  manualUnlock: { LockID: LOCK_ID, EventType: 'operation', Event: 'unlock', Device: 'lock', User: nonPerson('manualunlock'), timeStamp: T0 + 5, EventID: 'e-manual', Timestamp: T0 },
  oneTouch: { LockID: LOCK_ID, EventType: 'operation', Event: 'onetouchlock', Device: 'keypad', User: nonPerson('onetouchlock', 'One Touch', 'Lock'), Timestamp: T0 },
  doorOpen: { LockID: LOCK_ID, EventType: 'operation', Event: 'open', Device: 'lock', User: nonPerson('DoorStateChanged'), Timestamp: T0 },
  doorClosed: { LockID: LOCK_ID, EventType: 'operation', Event: 'closed', Device: 'lock', User: nonPerson('DoorStateChanged'), Timestamp: T0 },
  doorAjar: { LockID: LOCK_ID, EventType: 'operation', Event: 'ajar', Device: 'lock', User: nonPerson('DoorStateChanged'), Timestamp: T0 },
  doorInit: { LockID: LOCK_ID, EventType: 'operation', Event: 'init', Device: 'lock', User: nonPerson('DoorStateChanged') },
  doorUnknown: { LockID: LOCK_ID, EventType: 'operation', Event: 'unknown', Device: 'lock', User: nonPerson('DoorStateChanged') },
  status: { LockID: LOCK_ID, EventType: 'status', Event: 'lock', Device: 'lock', User: person, Timestamp: T0 },
  nameChanged: { LockID: LOCK_ID, EventType: 'configuration', Event: 'lock_name_changed', Lock: { Name: 'Back Door' }, User: person },
  privacy: { LockID: LOCK_ID, EventType: 'configuration', Event: 'privacy_mode', Value: true },
  vacation: { LockID: LOCK_ID, EventType: 'configuration', Event: 'vacation_mode', Value: false },
  keypadEnabled: { LockID: LOCK_ID, EventType: 'configuration', Event: 'keypad_enabled', Value: false },
  pinManaged: {
    LockID: LOCK_ID, EventType: 'configuration', Event: 'keypad_pin_managed', Lock: { Name: 'Front' },
    Pin: { state: 'load', action: 'commit', pin: '1234', accessType: 'recurring', accessTimes: 'STARTSEC=0;ENDSEC=3600', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU' },
    PinUser: { ...person, UserID: 'user-2', PartnerUserID: 'n/a' }, User: person, Timestamp: T0,
  },
  masterPin: {
    LockID: LOCK_ID, EventType: 'configuration', Event: 'keypad_pin_managed', Lock: { Name: 'Front' }, Pin: {},
    PinUser: nonPerson('masterpin', 'Master', 'PIN'), User: nonPerson('masterpin', 'Master', 'PIN'), Timestamp: T0,
  },
  keypadBattery: { LockID: LOCK_ID, EventType: 'battery', Event: 'keypad_battery_warning', DeviceType: 'keypad', DeviceSerialNumber: 'K123' },
  lockBattery: { LockID: LOCK_ID, EventType: 'system', Event: 'lock_battery_alert', warningLevel: 'lock_state_battery_warning_1week', userID: 'user-1' },
  announcedBattery: { LockID: LOCK_ID, EventType: 'battery', Event: 'battery_level_critical', DeviceType: 'lock', UserID: 'user-1' },
  online: { LockID: [LOCK_ID], EventType: 'systemstatus', Event: 'online' },
  offline: { LockID: [LOCK_ID], EventType: 'systemstatus', Event: 'offline' },
  drift: { LockID: LOCK_ID, EventType: 'systemstatus', Event: 'lock_log_timestamp_drifted', warningLevel: 'warning', Timestamp: T0, TimestampDrifted: T0 + 86_400_000 },
  userAdd: { LockID: LOCK_ID, EventType: 'authorization', Event: 'lock_user_add', Lock: { Name: 'Front' }, User: person },
  userRemove: { LockID: LOCK_ID, EventType: 'authorization', Event: 'lock_user_remove', Lock: { Name: 'Front' }, User: person },
  userType: { LockID: LOCK_ID, EventType: 'authorization', Event: 'lock_usertype_changed', Lock: { Name: 'Front' }, User: { ...person, UserType: 'superuser' }, EventID: 'e-ut', Timestamp: T0, timeStamp: T0 },
  accessType: { LockID: LOCK_ID, EventType: 'authorization', Event: 'lock_accesstype_changed', Lock: { Name: 'Front' }, User: { ...person, AccessType: 'rule_access_recurring' }, EventID: 'e-at', Timestamp: T0, timeStamp: T0 },
  motion: { DoorbellID: DOORBELL_ID, EventType: 'doorbell_motion_detected', Url: 'http://img/m.jpg', SecureURL: 'https://img/m.jpg', Width: 640, Height: 480 },
  press: { DoorbellID: DOORBELL_ID, EventType: 'buttonpush', dvrID: '8a2c7e1e-0000-4000-8000-000000000001' },
  video: { DoorbellID: DOORBELL_ID, EventType: 'doorbell_video_upload_available', dvrID: '8a2c7e1e-0000-4000-8000-000000000002', cause: 'buttonpush', startTime: T0 },
  membershipAdd: { EventType: 'authorization', Event: 'lock_user_add', UserID: 'user-3', LockID: LOCK_ID, timeStamp: T0, EventID: 'e-m-add', Timestamp: T0 },
  membershipType: { EventType: 'authorization', Event: 'lock_usertype_changed', UserType: 'user', UserID: 'user-3', LockID: LOCK_ID, timeStamp: T0, EventID: 'e-m-type', Timestamp: T0 },
  lifecycle: { EventType: 'lifecycle', Event: 'user_deleted', UserID: 'user-1' },
} as const;
