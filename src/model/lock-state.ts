// Pure state of one lock: what the callbacks told us, with the design's ordering rule.
// Plain JSON, kept by the device registry, so the last known state shows at once after a restart.
import { z } from 'zod/v3';

import { clockJumped, isOlder, learnLead, orderingTime, orderTwoClocks, repairMarks, serviceTime, type ClockMarks, type DeliveryContext, type Stamp, type StampClock } from './event-time.js';
import { describeEvent } from './event-words.js';
import type { LockEvent } from './events.js';
import { LAST_ACTIONS, lastActionOf, type LastAction } from './last-action.js';
import { reachabilityProof } from './reachability.js';
import { transient } from '../util/transient.js';

/** Aspects with their own ordering: an older event of one aspect changes nothing. */
export type LockAspect = 'lock' | 'door' | 'battery' | 'keypadBattery' | 'online';

/** How many recent events the state keeps (for diagnostics; the UI's event log is separate). */
export const RECENT_EVENTS = 10;

/** The service's battery word (battery-words.ts says what it means; the views how to show it). */
const batterySchema = z.object({ raw: z.string() });

export const recentEventSchema = z.object({
  kind: z.string(),
  at: z.number().optional(),
  receivedAt: z.number(),
  text: z.string(),
  /** false when the ordering rule (or a duplicate) left the state unchanged */
  applied: z.boolean(),
});

/** The saved state's schema, made when saved state is read (at start) and then left to the collector. */
const lockStateSchema = transient(() =>
  z.object({
    version: z.literal(1),
    lock: z.enum(['locked', 'unlocked', 'unknown']),
    door: z.enum(['open', 'closed', 'ajar', 'unknown']),
    /** A door event (of any value) has arrived: the ContactSensor stays from then on. */
    doorSensorSeen: z.boolean(),
    battery: batterySchema.nullable(),
    keypadBattery: batterySchema.nullable(),
    /** A keypad battery event has arrived: the keypad Battery service stays from then on. */
    keypadSeen: z.boolean(),
    online: z.boolean(),
    flags: z.object({ privacyMode: z.boolean().optional(), vacationMode: z.boolean().optional(), keypadEnabled: z.boolean().optional() }),
    /** How the lock was last operated (absent until the first operation). */
    lastAction: z.enum(LAST_ACTIONS).optional(),
    /** Name from the last lock_name_changed, cleared when config or discovery give a different name. */
    eventName: z.string().optional(),
    /** The entry (config/discovery) name the state last saw, to tell a changed config from a restart. */
    entryName: z.string().optional(),
    /**
     * When the service last reported this lock's clock as drifted (lock_log_timestamp_drifted). Times
     * before it are no evidence of order: a lock whose clock was reset stamps everything in the past.
     */
    clockResetAt: z.number().optional(),
    lastAt: z.object({
      lock: z.number().optional(),
      door: z.number().optional(),
      battery: z.number().optional(),
      keypadBattery: z.number().optional(),
      online: z.number().optional(),
    }),
    /**
     * The lock clock's own time of the last applied lock-stamped event, per aspect stamped by it: one
     * lock clock keeps its own order by its own times, however far ahead it runs.
     */
    lockAt: z.object({ lock: z.number().optional(), door: z.number().optional() }).optional(),
    /** How far this lock's clock runs ahead of the service's, learnt from its deliveries (ms). */
    clockLead: z.number().optional(),
    recent: z.array(recentEventSchema),
  }),
);

export type LockState = z.infer<ReturnType<typeof lockStateSchema>>;
export type RecentEvent = z.infer<typeof recentEventSchema>;

export function initialLockState(): LockState {
  return {
    version: 1,
    lock: 'unknown',
    door: 'unknown',
    doorSensorSeen: false,
    battery: null,
    keypadBattery: null,
    keypadSeen: false,
    online: true,
    flags: {},
    lastAt: {},
    recent: [],
  };
}

/** Reads a persisted state back; anything that does not validate starts fresh. */
export function parseLockState(raw: unknown): LockState | undefined {
  const parsed = lockStateSchema().safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

export function aspectOf(event: LockEvent): LockAspect | undefined {
  switch (event.kind) {
    case 'lockState':
      return 'lock';
    case 'doorState':
      // Door `init` and `unknown` carry no door position: they neither order nor are ordered, so
      // a late real position after them still counts by its own time.
      return event.state === 'init' || event.state === 'unknown' ? undefined : 'door';
    case 'battery':
      return event.device === 'keypad' ? 'keypadBattery' : 'battery';
    case 'online':
      return 'online';
    default:
      return undefined;
  }
}

/**
 * Which clock stamped the event: the lock's for the door and for what was done at the lock (keypad,
 * by hand, one-touch, master PIN); the service's for app and API operations, status answers and
 * the bridge's reports.
 */
export function stampClock(event: LockEvent): StampClock {
  if (event.kind === 'doorState') return 'lock';
  if (event.kind !== 'lockState' || event.source !== 'operation') return 'service';
  return event.device === 'keypad' || (event.actor.kind !== 'person' && event.actor.kind !== 'unknown') ? 'lock' : 'service';
}

/** The event's time and clock; a time from before the lock's clock was reset is no evidence (none). */
function stampOf(state: LockState, event: LockEvent): Stamp {
  const at = event.at !== undefined && state.clockResetAt !== undefined && event.at < state.clockResetAt ? undefined : event.at;
  return { at, clock: stampClock(event) };
}

/** The event's own time read in the service's clock, as ordering reads it (after the reduction that applied it); undefined without one. */
export function eventServiceTime(state: LockState, event: LockEvent, context: DeliveryContext): number | undefined {
  return serviceTime(stampOf(state, event), state.clockLead, context);
}

/**
 * The event's own time as the guard reads it: in the service's clock, and as the lock stamped it when
 * it did (its clock not jumped); undefined without one.
 */
export function eventTimes(state: LockState, event: LockEvent, context: DeliveryContext): { service: number; lock: number | undefined } | undefined {
  const stamp = stampOf(state, event);
  const service = serviceTime(stamp, state.clockLead, context);
  if (service === undefined) return undefined;
  return { service, lock: stamp.clock === 'lock' && !clockJumped(stamp, context) ? stamp.at : undefined };
}

const twoClockAspect = (aspect: LockAspect): aspect is 'lock' | 'door' => aspect === 'lock' || aspect === 'door';

function marksOf(state: LockState, aspect: LockAspect): ClockMarks {
  return { service: state.lastAt[aspect], lock: twoClockAspect(aspect) ? state.lockAt?.[aspect] : undefined };
}

export interface LockReduction {
  state: LockState;
  /** false: the event was older than the last applied one of its aspect and changed nothing. */
  applied: boolean;
  text: string;
}

/** The recent events with one more, the oldest dropped beyond RECENT_EVENTS (one new array). */
function remember(state: LockState, entry: RecentEvent): RecentEvent[] {
  const { recent } = state;
  const from = recent.length >= RECENT_EVENTS ? recent.length - RECENT_EVENTS + 1 : 0;
  const next = recent.slice(from);
  next.push(entry);
  return next;
}

/**
 * Applies one event. Ordering: per aspect, an event whose time is older than the last applied one
 * changes nothing (it is still remembered as not applied); events without a time apply in arrival
 * order. Each clock keeps its own order; across clocks a lock time is read through the lock's learnt
 * lead over the service (event-time.ts). A clock-drift notice resets the marks and the lead, and
 * times from before it count as no time: the lock's later stamps come from a clock that was reset,
 * and a status report stamped by the service must not make them look older.
 * An applied operation also becomes the last action: `lastAction` when the caller knows better
 * (the plugin's own auto-lock), else the event's own (last-action.ts).
 *
 * One new state per event, whatever it changes: this runs for every callback.
 */
export function reduceLock(state: LockState, event: LockEvent, context: DeliveryContext, lastAction?: LastAction): LockReduction {
  const { receivedAt } = context;
  const text = describeEvent(event, '');
  const aspect = aspectOf(event);
  const stamp = stampOf(state, event);
  const { at } = stamp;
  // Learnt from every delivery, applied or not: it is about the clock, not the event.
  const lead = learnLead(state.clockLead, stamp, context);
  const ordering = aspect === undefined ? undefined : orderTwoClocks(stamp, marksOf(state, aspect), lead, context);
  const applied = ordering?.stale !== true;
  const next: LockState = { ...state, recent: remember(state, { kind: event.kind, at: event.at, receivedAt, text, applied }) };
  if (lead !== undefined) next.clockLead = lead;
  else delete next.clockLead;
  // Seeing a door or keypad event at all proves the hardware exists, whatever its order or value.
  if (event.kind === 'doorState') next.doorSensorSeen = true;
  if (event.kind === 'battery' && event.device === 'keypad') next.keypadSeen = true;
  if (!applied) return { state: next, applied: false, text };
  if (aspect !== undefined && ordering !== undefined) setMarks(next, aspect, ordering.marks);
  switch (event.kind) {
    case 'lockState':
      next.lock = event.state;
      break;
    case 'doorState':
      // init/unknown carry no door position: keep what we know.
      if (event.state !== 'init' && event.state !== 'unknown') next.door = event.state;
      break;
    case 'battery': {
      const battery = { raw: event.raw };
      if (event.device === 'keypad') next.keypadBattery = battery;
      else next.battery = battery;
      break;
    }
    case 'online':
      next.online = event.online;
      break;
    case 'lockName':
      next.eventName = event.name;
      break;
    case 'configFlag':
      next.flags = { ...state.flags, [event.flag]: event.value };
      break;
    case 'clockDrift':
      next.lastAt = {};
      delete next.lockAt;
      delete next.clockLead;
      next.clockResetAt = Math.max(state.clockResetAt ?? 0, orderingTime(event.at, context) ?? context.signedAt);
      break;
    case 'pinManaged':
    case 'membership':
      break;
  }
  // A status report proves the bridge answers, unless an offline notice is newer than it.
  if (reachabilityProof(event) !== undefined && !isOlder(orderingTime(at, context), state.lastAt.online)) next.online = true;
  const action = lastAction ?? lastActionOf(event);
  if (action !== undefined) next.lastAction = action;
  return { state: next, applied: true, text };
}

function setMarks(next: LockState, aspect: LockAspect, marks: ClockMarks): void {
  if (marks.service !== undefined) next.lastAt = { ...next.lastAt, [aspect]: marks.service };
  if (marks.lock !== undefined && twoClockAspect(aspect)) next.lockAt = { ...next.lockAt, [aspect]: marks.lock };
}

/**
 * A remote command we sent succeeded. It counts as an event without a time: it applies now and
 * leaves the ordering marks alone, so a later-stamped callback still wins. It also proves the
 * bridge answers, so an offline lock is reachable again.
 */
export function commandSucceeded(state: LockState, lock: 'locked' | 'unlocked'): LockState {
  return { ...state, lock, online: true };
}

/** Ordering marks in the future (saved by older versions from a lock whose clock ran ahead) become now. */
export function repairLockMarks(state: LockState, now: number): LockState {
  const lastAt = repairMarks(state.lastAt, now);
  return lastAt === undefined ? state : { ...state, lastAt };
}

/** Config or discovery gave a (possibly new) name: a different one wins over a lock_name_changed name. */
export function withEntryName(state: LockState, entryName: string): LockState {
  if (state.entryName === entryName) return state;
  const { eventName: _dropped, ...rest } = state;
  return state.entryName === undefined ? { ...state, entryName } : { ...rest, entryName };
}

/** The name HomeKit shows. */
export function lockDisplayName(state: LockState, entryName: string): string {
  return state.eventName ?? entryName;
}
