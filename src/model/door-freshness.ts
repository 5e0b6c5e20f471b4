// Whether the door position in force happened after the last moment the plugin could have missed a
// door change (its start, the bridge back online, a door `unknown`/`init`, events resuming). Two
// moments are compared in the clock that both can be read in: two stamps of the lock's own clock as
// they are (a lead learnt anew on each delivery, or one inside the whole-second slack that is not
// learnt at all, would move one and not the other), else the service's clock, else this machine's.
// Where a reading is uncertain, the position is read as early as it may have been: auto-lock acting
// on an old "closed" is worse than waiting for the next one.
import type { DeliveryContext } from './event-time.js';

/** An event's own time: in the service's clock, and as the lock stamped it (when it did, and its clock did not jump). */
export interface EventTimes {
  service: number;
  lock: number | undefined;
}

/** When something happened, in each clock it can be read in. */
interface Moment {
  /** The order the plugin learnt of it in: ties go to the one learnt later. */
  seq: number;
  /** Carried its own time; else it counts by when the plugin learnt of it. */
  timed: boolean;
  machine: number;
  service?: number | undefined;
  lock?: number | undefined;
}

type Slot = 'untimed' | 'service' | 'lock';

/** Field by field the later of two moments of one kind: a position must lie after both anyway. */
function later(a: Moment | undefined, b: Moment): Moment {
  if (a === undefined) return b;
  const max = (x: number | undefined, y: number | undefined) => (x === undefined ? y : y === undefined ? x : Math.max(x, y));
  return { seq: Math.max(a.seq, b.seq), timed: b.timed, machine: Math.max(a.machine, b.machine), service: max(a.service, b.service), lock: max(a.lock, b.lock) };
}

function isAfter(position: Moment, missed: Moment): boolean {
  // Noted when it was learnt: whatever the plugin learnt before it happened before it.
  if (!missed.timed && position.seq < missed.seq) return false;
  const [a, b] = position.lock !== undefined && missed.lock !== undefined
    ? [position.lock, missed.lock]
    : position.service !== undefined && missed.service !== undefined
      ? [position.service, missed.service]
      : [position.machine, missed.machine];
  return a > b || (a === b && position.seq > missed.seq);
}

/** How far this machine's clock is from the service's, as one delivery shows it. */
const offsetOf = (context: DeliveryContext) => context.receivedAt - context.signedAt;

export class DoorFreshness {
  private seq = 0;
  private readonly missed: Partial<Record<Slot, Moment>> = {};
  private position: Moment | undefined;

  /** `startedAt`: the plugin's start (this machine's clock), the first moment a change may have been missed. */
  constructor(startedAt: number) {
    this.missedNow(startedAt);
  }

  /** The position in force happened after every moment a change may have been missed. */
  get fresh(): boolean {
    const position = this.position;
    if (position === undefined) return false;
    return Object.values(this.missed).every((moment) => isAfter(position, moment));
  }

  /** A change may have been missed up to now (this machine's clock). */
  missedNow(now: number): void {
    this.note('untimed', { seq: this.nextSeq(), timed: false, machine: now });
  }

  /** An event shows a change may have been missed before it happened; `times` undefined: it counts by its arrival. */
  missedAt(times: EventTimes | undefined, context: DeliveryContext): void {
    if (times === undefined) {
      this.missedNow(context.receivedAt);
      return;
    }
    const machine = Math.min(context.receivedAt, times.service + offsetOf(context));
    this.note(times.lock === undefined ? 'service' : 'lock', { seq: this.nextSeq(), timed: true, machine, service: times.service, lock: times.lock });
  }

  /** A door position was applied; `times` undefined: it counts by its arrival. */
  positionAt(times: EventTimes | undefined, context: DeliveryContext): void {
    const seq = this.nextSeq();
    if (times === undefined) {
      this.position = { seq, timed: false, machine: context.receivedAt };
      return;
    }
    // Nothing happened after it was sent: a lock clock ahead by less than the slack (a lead that is
    // not learnt) would otherwise read the report later than it was.
    const service = Math.min(times.service, context.signedAt);
    const machine = Math.min(context.receivedAt, service + offsetOf(context));
    this.position = { seq, timed: true, machine, service, lock: times.lock };
  }

  /** The lock's clock was reset: stamps from before it cannot be compared with stamps after it. */
  clockReset(): void {
    const lockMoment = this.missed.lock;
    if (lockMoment !== undefined) {
      delete this.missed.lock;
      this.note('service', { ...lockMoment, lock: undefined });
    }
    if (this.position !== undefined) this.position = { ...this.position, lock: undefined };
  }

  private note(slot: Slot, moment: Moment): void {
    this.missed[slot] = later(this.missed[slot], moment);
  }

  private nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }
}
