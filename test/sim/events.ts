// Named events for `sim.fire(name, options)` and `POST /_sim/fire`: each builds its payload(s) from
// the device model, updates the model, and delivers to the matching registrations.
import { MAIN_ACCOUNT, type SimAccount } from './accounts.js';
import type { SimCore } from './core.js';
import type { DeliveryResult } from './delivery.js';
import type { DoorState, KeypadBatteryLevel, LockBatteryLevel, SimLock } from './devices.js';
import { MOTION_IMAGE } from './media-constants.js';
import * as p from './payloads.js';
import type { SignatureOverrides } from './signature.js';

export interface FireOptions {
  lockId?: string;
  doorbellId?: string;
  /**
   * The account whose user acts (app operations, status, `me` in membership events, battery and
   * lifecycle notices, the user hook of `raw`): by default the first account holding the lock, else
   * the main account.
   */
  account?: string;
  /** Event time (epoch ms) where the payload has one; the clock's now by default. */
  at?: number;
  /** `unlock` / `lock`: who operated it. */
  by?: 'app' | 'keypad' | 'manual';
  /** Boolean configuration events. */
  value?: boolean;
  /** `lock-name-changed`. */
  name?: string;
  /** `pin-managed`: load | disable | enable | delete | update. */
  state?: p.PinState;
  pin?: string;
  /** Battery events: none | warning | critical (keypad, announced) or none | 2week | 1week | 2day (lock). */
  level?: string;
  /** `battery-level`: lock | keypad. */
  device?: 'lock' | 'keypad';
  /** Membership events: the account user (`me`, also sent to the user hook) or a guest (default). */
  subject?: 'me' | 'guest';
  userType?: p.UserType;
  accessType?: p.AccessType;
  /** `video-available`: buttonpush (default) or doorbell_motion_detected. */
  cause?: 'buttonpush' | 'doorbell_motion_detected';
  dvrId?: string;
  /** `motion`: the still's address (as both Url and SecureURL) instead of the simulator's own picture. */
  imageUrl?: string;
  /**
   * `clock-drift`: how far the lock's clock is off, ms (default: the lock's own offset, else +1 day).
   * `lock-clock-jump`: how far it jumps ahead (default +1 year); `lock-clock-reset`: where it is
   * reset to, as an offset (default back to 2000-01-01, the spec's battery run-out).
   */
  driftMs?: number;
  warningLevel?: string;
  /** `user-deleted`: the lifecycle Event (default user_deleted). */
  event?: string;
  /** `raw`: send this payload as is (with lockId / doorbellId / user as the target). */
  payload?: object;
  user?: boolean;
  signature?: SignatureOverrides;
}

export const GUEST: p.CallbackUser = p.person({ UserID: 'user-guest-0002', FirstName: 'Jamie', LastName: 'Guest', Email: 'jamie@example.com', PhoneNo: '+15555550101' });

type Handler = (core: SimCore, o: FireOptions) => Promise<DeliveryResult[]>;

function lockOf(core: SimCore, o: FireOptions): SimLock {
  const id = o.lockId ?? core.locks.keys().next().value;
  if (id === undefined) throw new FireError('the account has no lock');
  const lock = core.locks.get(id);
  if (!lock) throw new FireError(`unknown lock ${id}`);
  return lock;
}

function doorbellIdOf(core: SimCore, o: FireOptions): string {
  const id = o.doorbellId ?? core.doorbells.keys().next().value;
  if (id === undefined) throw new FireError('the account has no doorbell');
  if (!core.doorbells.has(id)) throw new FireError(`unknown doorbell ${id}`);
  return id;
}

export class FireError extends Error {}

/** The acting account (FireOptions.account). */
function actorOf(core: SimCore, o: FireOptions, lock?: SimLock): SimAccount {
  const id = o.account ?? lock?.accounts[0] ?? MAIN_ACCOUNT;
  const account = core.accounts.get(id);
  if (!account) throw new FireError(`unknown account "${id}"; known: ${core.accounts.all().map((a) => a.id).join(', ')}`);
  return account;
}

const userOf = (core: SimCore, o: FireOptions, lock?: SimLock): p.CallbackUser => core.accounts.userOf(actorOf(core, o, lock).id);

/** `lock_log_timestamp_drifted`: TimestampDrifted is the lock's clock, Timestamp when the webhook was sent. */
function driftNotice(core: SimCore, lock: SimLock, offsetMs: number, o: FireOptions): Promise<DeliveryResult[]> {
  const now = core.clock.now();
  return core.send(p.clockDrift({ lockId: lock.id, driftedTo: now + offsetMs, sentAt: now, ...(o.warningLevel ? { warningLevel: o.warningLevel } : {}) }), { lockId: lock.id, signature: o.signature });
}

function pick<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, what: string): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new FireError(`${what} must be one of: ${allowed.join(', ')}`);
}

const times = (core: SimCore, o: FireOptions): { at: number; sentAt: number } => ({ at: o.at ?? core.clock.now(), sentAt: core.clock.now() });
/** Times of an event the lock stamps itself: its own clock, which may be off (SimLock.clockOffsetMs). */
const lockTimes = (core: SimCore, lock: SimLock, o: FireOptions): { at: number; sentAt: number } => ({ at: o.at ?? core.clock.now() + lock.clockOffsetMs, sentAt: core.clock.now() });

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
/** Where a lock's clock starts after its batteries ran out. */
export const LOCK_CLOCK_RESET_TO = Date.UTC(2000, 0, 1);

function operation(event: 'lock' | 'unlock'): Handler {
  return (core, o) => {
    const lock = lockOf(core, o);
    lock.lockState = event === 'lock' ? 'locked' : 'unlocked';
    const by = pick(o.by, ['app', 'keypad', 'manual'], 'app', 'by');
    const payload = by === 'manual'
      ? p.manualOperation({ lockId: lock.id, event, ...lockTimes(core, lock, o) })
      : p.lockOperation({ lockId: lock.id, event, device: by === 'keypad' ? 'keypad' : 'lock', user: by === 'keypad' ? GUEST : userOf(core, o, lock), ...lockTimes(core, lock, o) });
    return core.send(payload, { lockId: lock.id, signature: o.signature });
  };
}

function door(state: DoorState): Handler {
  return (core, o) => {
    const lock = lockOf(core, o);
    lock.doorState = state;
    return core.send(p.doorState({ lockId: lock.id, state, ...lockTimes(core, lock, o) }), { lockId: lock.id, signature: o.signature });
  };
}

function flag(event: 'privacy-mode' | 'vacation-mode' | 'keypad-enabled'): Handler {
  return (core, o) => {
    const lock = lockOf(core, o);
    const value = o.value ?? (event !== 'keypad-enabled');
    if (event === 'privacy-mode') lock.privacyMode = value;
    if (event === 'vacation-mode') lock.vacationMode = value;
    if (event === 'keypad-enabled') lock.keypadEnabled = value;
    const build = event === 'privacy-mode' ? p.privacyMode : event === 'vacation-mode' ? p.vacationMode : p.keypadEnabled;
    return core.send(build({ lockId: lock.id, value }), { lockId: lock.id, signature: o.signature });
  };
}

function membership(event: 'lock-user-add' | 'lock-user-remove' | 'lock-usertype-changed' | 'lock-accesstype-changed'): Handler {
  return async (core, o) => {
    const lock = lockOf(core, o);
    const me = pick(o.subject, ['me', 'guest'], 'guest', 'subject') === 'me';
    const actor = actorOf(core, o, lock);
    const subject = me ? core.accounts.userOf(actor.id) : GUEST;
    const t = times(core, o);
    const userType = pick(o.userType, ['user', 'superuser'], 'user', 'userType');
    const accessType = pick(o.accessType, ['rule_access_always', 'rule_access_temporary', 'rule_access_recurring'], 'rule_access_recurring', 'accessType');
    const base = { lockId: lock.id, lockName: lock.name, user: subject };
    const lockPayload =
      event === 'lock-user-add' ? p.lockUserAdd(base)
        : event === 'lock-user-remove' ? p.lockUserRemove(base)
          : event === 'lock-usertype-changed' ? p.lockUserTypeChanged({ ...base, userType, ...t })
            : p.lockAccessTypeChanged({ ...base, accessType, ...t });
    // Deliveries to the lock hook and the user hook are independent events of their own.
    const results = [...await core.send(lockPayload, { lockId: lock.id, signature: o.signature })];
    if (me) {
      const userBase = { userId: subject.UserID, lockId: lock.id, ...t };
      const userPayload =
        event === 'lock-user-add' ? p.userLockMembership({ ...userBase, event: 'lock_user_add' })
          : event === 'lock-user-remove' ? p.userLockMembership({ ...userBase, event: 'lock_user_remove' })
            : event === 'lock-usertype-changed' ? p.userLockUserTypeChanged({ ...userBase, userType })
              : p.userLockAccessTypeChanged({ ...userBase, accessType });
      results.push(...await core.send(userPayload, { user: true, userId: actor.userId, signature: o.signature }));
      // The account lost the lock: its discovery stops listing it (a lock nobody holds is gone).
      if (event === 'lock-user-remove') core.release('lock', lock.id, actor.id);
    }
    return results;
  };
}

const HANDLERS: Record<string, Handler> = {
  unlock: operation('unlock'),
  lock: operation('lock'),
  onetouchlock: (core, o) => {
    const lock = lockOf(core, o);
    lock.lockState = 'locked';
    return core.send(p.oneTouchLock({ lockId: lock.id, ...lockTimes(core, lock, o) }), { lockId: lock.id, signature: o.signature });
  },
  'door-open': door('open'),
  'door-closed': door('closed'),
  'door-ajar': door('ajar'),
  'door-init': door('init'),
  'door-unknown': door('unknown'),
  status: (core, o) => {
    const lock = lockOf(core, o);
    const t = times(core, o);
    return core.send(p.lockStatus({ lockId: lock.id, state: lock.lockState === 'locked' ? 'lock' : 'unlock', user: userOf(core, o, lock), ...t }), { lockId: lock.id, noCustomHeader: true, signature: o.signature });
  },
  'lock-name-changed': (core, o) => {
    const lock = lockOf(core, o);
    lock.name = o.name ?? `${lock.name} (renamed)`;
    return core.send(p.lockNameChanged({ lockId: lock.id, name: lock.name, user: userOf(core, o, lock) }), { lockId: lock.id, signature: o.signature });
  },
  'privacy-mode': flag('privacy-mode'),
  'vacation-mode': flag('vacation-mode'),
  'keypad-enabled': flag('keypad-enabled'),
  'pin-managed': (core, o) => {
    const lock = lockOf(core, o);
    const state = pick(o.state, ['load', 'disable', 'enable', 'delete', 'update'], 'load', 'state');
    const payload = p.keypadPinManaged({ lockId: lock.id, lockName: lock.name, state, pinUser: GUEST, user: userOf(core, o, lock), at: o.at ?? core.clock.now(), ...(o.pin ? { pin: { pin: o.pin } } : {}) });
    return core.send(payload, { lockId: lock.id, signature: o.signature });
  },
  'master-pin-changed': (core, o) => {
    const lock = lockOf(core, o);
    return core.send(p.masterPinChanged({ lockId: lock.id, lockName: lock.name, at: o.at ?? core.clock.now() }), { lockId: lock.id, signature: o.signature });
  },
  'keypad-battery': (core, o) => {
    const lock = lockOf(core, o);
    const level = pick(o.level, ['none', 'warning', 'critical'], 'warning', 'level');
    lock.keypadBattery = `keypad_battery_${level}` as KeypadBatteryLevel;
    return core.send(p.keypadBattery({ lockId: lock.id, event: lock.keypadBattery, serialNumber: lock.keypadSerialNumber }), { lockId: lock.id, signature: o.signature });
  },
  'lock-battery': (core, o) => {
    const lock = lockOf(core, o);
    const level = pick(o.level, ['none', '2week', '1week', '2day'], '2week', 'level');
    lock.battery = `lock_state_battery_warning_${level}` as LockBatteryLevel;
    return core.send(p.lockBatteryAlert({ lockId: lock.id, warningLevel: lock.battery, userId: actorOf(core, o, lock).userId }), { lockId: lock.id, signature: o.signature });
  },
  'battery-level': (core, o) => {
    const lock = lockOf(core, o);
    const level = pick(o.level, ['none', 'warning', 'critical'], 'warning', 'level');
    const device = pick(o.device, ['lock', 'keypad'], 'lock', 'device');
    return core.send(p.batteryLevel({ lockId: lock.id, deviceType: device, event: `battery_level_${level}`, userId: actorOf(core, o, lock).userId }), { lockId: lock.id, signature: o.signature });
  },
  'bridge-offline': (core, o) => {
    const lock = lockOf(core, o);
    lock.bridge = 'offline';
    return core.send(p.systemStatus({ lockId: lock.id, event: 'offline' }), { lockId: lock.id, signature: o.signature });
  },
  'bridge-online': (core, o) => {
    const lock = lockOf(core, o);
    lock.bridge = 'online';
    return core.send(p.systemStatus({ lockId: lock.id, event: 'online' }), { lockId: lock.id, signature: o.signature });
  },
  'clock-drift': (core, o) => {
    const lock = lockOf(core, o);
    return driftNotice(core, lock, o.driftMs ?? (lock.clockOffsetMs !== 0 ? lock.clockOffsetMs : 24 * 60 * 60 * 1000), o);
  },
  // The lock's clock jumps ahead; the service need not notice, so nothing is sent. The lock's
  // operations and door states are stamped by that clock from now on.
  'lock-clock-jump': (core, o) => {
    lockOf(core, o).clockOffsetMs = o.driftMs ?? YEAR_MS;
    return Promise.resolve([]);
  },
  // Batteries ran out: the lock's clock starts again in the past, and the service says so.
  'lock-clock-reset': (core, o) => {
    const lock = lockOf(core, o);
    lock.clockOffsetMs = o.driftMs ?? LOCK_CLOCK_RESET_TO - core.clock.now();
    return driftNotice(core, lock, lock.clockOffsetMs, o);
  },
  // The lock's clock is set right again (the app synchronised it); nothing is sent.
  'lock-clock-fix': (core, o) => {
    lockOf(core, o).clockOffsetMs = 0;
    return Promise.resolve([]);
  },
  'lock-user-add': membership('lock-user-add'),
  'lock-user-remove': membership('lock-user-remove'),
  'lock-usertype-changed': membership('lock-usertype-changed'),
  'lock-accesstype-changed': membership('lock-accesstype-changed'),
  'doorbell-press': (core, o) => {
    const doorbellId = doorbellIdOf(core, o);
    return core.send(p.doorbellButtonPush({ doorbellId, dvrId: o.dvrId ?? core.newDvrId() }), { doorbellId, signature: o.signature });
  },
  motion: (core, o) => {
    const doorbellId = doorbellIdOf(core, o);
    const url = o.imageUrl ?? `${core.url}/media/motion/${encodeURIComponent(doorbellId)}/${core.clock.now()}.jpg`;
    const secureUrl = o.imageUrl === undefined ? {} : { secureUrl: o.imageUrl };
    return core.send(p.doorbellMotion({ doorbellId, url, ...secureUrl, width: MOTION_IMAGE.width, height: MOTION_IMAGE.height }), { doorbellId, signature: o.signature });
  },
  'video-available': (core, o) => {
    const doorbellId = doorbellIdOf(core, o);
    const cause = pick(o.cause, ['buttonpush', 'doorbell_motion_detected'], 'buttonpush', 'cause');
    return core.send(p.doorbellVideoAvailable({ doorbellId, dvrId: o.dvrId ?? core.newDvrId(), cause, startTime: o.at ?? core.clock.now() }), { doorbellId, signature: o.signature });
  },
  'user-deleted': (core, o) => {
    const { userId } = actorOf(core, o);
    return core.send(p.userLifecycle({ userId, event: o.event ?? 'user_deleted', sentAt: core.clock.now() }), { user: true, userId, signature: o.signature });
  },
  raw: (core, o) => {
    if (!o.payload || typeof o.payload !== 'object') throw new FireError('raw needs a payload object');
    return core.send(o.payload, { ...(o.lockId ? { lockId: o.lockId } : {}), ...(o.doorbellId ? { doorbellId: o.doorbellId } : {}), user: o.user ?? false, ...(o.account ? { userId: actorOf(core, o).userId } : {}), signature: o.signature });
  },
};

/** Every name `fire` accepts. */
export const EVENT_NAMES: readonly string[] = Object.keys(HANDLERS);

export async function fireEvent(core: SimCore, name: string, options: FireOptions = {}): Promise<DeliveryResult[]> {
  const handler = HANDLERS[name];
  if (!handler) throw new FireError(`unknown event "${name}"; known: ${EVENT_NAMES.join(', ')}`);
  return handler(core, options);
}
