// Event times are evidence, not truth. A lock's clock can run ahead or be reset, so the time an
// event is ordered by is bounded by when the service signed the callback, and saved ordering marks
// that lie in the future are brought back to the present.
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
 * The time an event is ordered by: its own, unless it lies more than two seconds after the
 * signature's `t`. No honest event happened after the service sent it, so such a time counts as
 * "now" (the signature's `t`): a keypad lock stamped minutes ahead by a fast lock clock neither
 * freezes the state nor hides the app unlock that follows it a second later.
 */
export function orderingTime(at: number | undefined, context: DeliveryContext): number | undefined {
  if (at === undefined) return undefined;
  return beyondSignature(at, context) ? context.signedAt : at;
}

function beyondSignature(at: number, context: DeliveryContext): boolean {
  return at > context.signedAt + EVENT_TIME_SLACK_MS;
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
 * The ordering rule for one aspect (lock, door, battery, keypad battery, online): an event older
 * than the last applied one changes nothing. Without a time: arrival order, the mark stays. A time
 * more than two seconds after the signature's `t` counts as now: the event applies, and the mark
 * moves to `t` unless it is already later ("now" is never older than what applied).
 */
export function order(at: number | undefined, mark: number | undefined, context: DeliveryContext): Ordering {
  if (at === undefined) return { stale: false, mark };
  if (beyondSignature(at, context)) return { stale: false, mark: Math.max(mark ?? context.signedAt, context.signedAt) };
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
