// Event times are evidence, not truth. Two clocks stamp a lock's events, the lock's own and the
// service's; a lock's or a doorbell's clock can run ahead or be reset. Each clock keeps its own order;
// a device time further ahead of the signature than its tolerance is a jumped clock and counts as the
// signature's time; across clocks a lock time is read through how far that lock runs ahead, and saved
// marks in the future are brought back to the present.
import { DEFAULT_TOLERANCE_SECONDS } from '../settings.js';

/** What the receiver knows about one delivery, all in epoch milliseconds. */
export interface DeliveryContext {
  receivedAt: number;
  /** The signature's `t`. */
  signedAt: number;
  /** The tolerance the signature was checked with (webhook.toleranceSeconds); the default when absent. */
  toleranceMs?: number | undefined;
}

export const DEFAULT_TOLERANCE_MS = DEFAULT_TOLERANCE_SECONDS * 1000;

/**
 * How far an event time may lie after the signature's `t` and still count as its own: `t` is often
 * whole seconds, so an event sent a moment after it happened can carry a slightly later
 * millisecond time. Anything later comes from a clock that runs fast.
 */
export const EVENT_TIME_SLACK_MS = 2_000;

/**
 * The time a service-stamped event is ordered by: its own, unless it lies more than two seconds
 * after the signature's `t`. The service stamps and signs with one clock and no honest event
 * happened after the service sent it, so such a time counts as "now" (the signature's `t`) and can
 * neither freeze the state nor hide the next real event.
 */
export function orderingTime(at: number | undefined, context: DeliveryContext): number | undefined {
  if (at === undefined) return undefined;
  return beyondSignature(at, context) ? context.signedAt : at;
}

function beyondSignature(at: number, context: DeliveryContext): boolean {
  return at > context.signedAt + EVENT_TIME_SLACK_MS;
}

/** A device's clock jumped: its time lies further ahead of `t` than the signature tolerance. */
function aheadBeyondTolerance(at: number, context: DeliveryContext): boolean {
  return at - context.signedAt > (context.toleranceMs ?? DEFAULT_TOLERANCE_MS);
}

/** Older than the last applied event of its aspect; an event without a time is never older. */
export function isOlder(time: number | undefined, mark: number | undefined): boolean {
  return time !== undefined && mark !== undefined && time < mark;
}

/** What the ordering rule says about one event of an aspect whose last applied event is at `mark`. */
export interface Ordering {
  /** Older than the last applied event: it changes nothing. */
  stale: boolean;
  /** The aspect's mark once the event is applied. */
  mark: number | undefined;
}

/**
 * The time an event stamped by a device's own clock (a doorbell's press, motion or recording start)
 * counts as: its own, unless it lies further ahead of the signature's `t` than the signature
 * tolerance. That clock jumped (a year off, a unit slip), so its time means nothing and counts as `t`:
 * the same rule as a lock's jumped clock.
 */
export function deviceTime(at: number | undefined, context: DeliveryContext): number | undefined {
  if (at === undefined) return undefined;
  return aheadBeyondTolerance(at, context) ? context.signedAt : at;
}

/**
 * The ordering rule for one aspect of a device with one clock of its own (a doorbell's presses,
 * motion and recordings): an event older than the last applied one changes nothing. Without a
 * time: arrival order, the mark stays. A jumped clock's time (beyond `t` plus the tolerance) counts
 * as now: the event applies, and the mark moves to `t` unless it is already later ("now" is never
 * older than what applied), so one bad clock never freezes the events after it.
 */
export function order(at: number | undefined, mark: number | undefined, context: DeliveryContext): Ordering {
  if (at === undefined) return { stale: false, mark };
  if (aheadBeyondTolerance(at, context)) return { stale: false, mark: Math.max(mark ?? context.signedAt, context.signedAt) };
  if (isOlder(at, mark)) return { stale: true, mark };
  return { stale: false, mark: at };
}

/**
 * Marks saved before times were bounded can lie in the future and would freeze an aspect for good:
 * any mark beyond now plus the tolerance becomes now. Returns undefined when nothing needed repair.
 */
export function repairMarks<T extends Record<string, number | undefined>>(marks: T, now: number, toleranceMs = DEFAULT_TOLERANCE_MS): T | undefined {
  let repaired: T | undefined;
  for (const [key, mark] of Object.entries(marks)) {
    if (mark === undefined || mark <= now + toleranceMs) continue;
    repaired ??= { ...marks };
    (repaired as Record<string, number | undefined>)[key] = now;
  }
  return repaired;
}

/**
 * Two clocks stamp a lock's events: the lock's own (door, keypad, manual, one-touch) and the
 * service's (app and API operations, status answers, the signature's `t`).
 */
export type StampClock = 'lock' | 'service';

/**
 * An aspect's marks: the service-clock time of the last applied service-stamped event (or of a
 * jumped lock stamp, read as `t`), and the lock-clock time of the last applied lock-stamped event.
 */
export interface ClockMarks {
  service: number | undefined;
  lock: number | undefined;
}

/** One event's time and the clock that stamped it. */
export interface Stamp {
  at: number | undefined;
  clock: StampClock;
}

/** A lock stamp further ahead of `t` than the signature tolerance: the lock's clock jumped, its time means nothing. */
export function clockJumped(stamp: Stamp, context: DeliveryContext): boolean {
  return stamp.clock === 'lock' && stamp.at !== undefined && aheadBeyondTolerance(stamp.at, context);
}

/**
 * How far the lock's clock runs ahead of the service's, learnt from one more delivery. A stamp ahead
 * of `t` shows the clock is that far ahead (the event happened before it was sent; within the
 * whole-second slack it is right), and the newest such delivery is believed, so a clock set right
 * again is followed at its next prompt delivery. A stamp behind `t` teaches nothing (late deliveries
 * are normal), and a lead beyond the tolerance is a jumped clock, not a lead.
 */
export function learnLead(lead: number | undefined, stamp: Stamp, context: DeliveryContext): number | undefined {
  if (stamp.clock !== 'lock' || stamp.at === undefined || clockJumped(stamp, context)) return lead;
  const ahead = stamp.at - context.signedAt;
  if (ahead < 0) return lead;
  return ahead > EVENT_TIME_SLACK_MS ? ahead : undefined;
}

/**
 * The event's time read in the service's clock: a lock stamp less the lock's learnt lead (a jumped
 * one as `t`), a service stamp as it is (one beyond `t` plus the slack as `t`).
 */
export function serviceTime(stamp: Stamp, lead: number | undefined, context: DeliveryContext): number | undefined {
  if (stamp.at === undefined) return undefined;
  if (stamp.clock === 'service') return orderingTime(stamp.at, context);
  return clockJumped(stamp, context) ? context.signedAt : stamp.at - (lead ?? 0);
}

/** What the two-clock rule says about one event of an aspect. */
export interface ClockOrdering {
  /** Older than the last applied event: it changes nothing. */
  stale: boolean;
  /** The aspect's marks once the event is applied. */
  marks: ClockMarks;
}

/**
 * The ordering rule for one aspect with two clocks. Events of the same lock clock keep their order
 * by their own times, even when that clock runs ahead (a late bridge log or a re-signed retry of an
 * older event must not overwrite a newer one). Across clocks a lock time is read in the service's
 * clock through the learnt lead. A time that can only be "now" (a jumped lock clock, a service time
 * beyond `t`) is never older and moves the service mark to `t`. Without a time: arrival order, the
 * marks stay. `lead` is the lead after learning from this very delivery.
 */
export function orderTwoClocks(stamp: Stamp, marks: ClockMarks, lead: number | undefined, context: DeliveryContext): ClockOrdering {
  const { at } = stamp;
  if (at === undefined) return { stale: false, marks };
  const asNow = stamp.clock === 'lock' ? clockJumped(stamp, context) : beyondSignature(at, context);
  if (asNow) return { stale: false, marks: { ...marks, service: Math.max(marks.service ?? context.signedAt, context.signedAt) } };
  if (stamp.clock === 'lock') {
    const read = at - (lead ?? 0);
    const stale = isOlder(at, marks.lock) || isOlder(read, marks.service);
    return stale ? { stale, marks } : { stale, marks: { ...marks, lock: at } };
  }
  const stale = isOlder(at, marks.service) || isOlder(at, marks.lock === undefined ? undefined : marks.lock - (lead ?? 0));
  return stale ? { stale, marks } : { stale, marks: { ...marks, service: at } };
}
