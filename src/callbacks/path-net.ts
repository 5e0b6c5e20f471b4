// The duplicate net across accounts' paths. A device two accounts hold can have a registration of
// each for a moment (a handover, a registration the old owner has not deleted yet), and the service
// then delivers one event on both paths, each signed afresh. A body with nothing that identifies
// the event (no EventID, dvrID, still or event time) gets past the duplicate filter each time its
// `t` is new, so the very same bytes for the same device on another account's path within 60 s are
// taken as that one event. On one path the filter alone decides: there, a repeat is a new event.
import { createHash } from 'node:crypto';

/** How long a body counts as already delivered on another account's path. */
export const PATH_NET_MS = 60_000;
/** Far above a household's callbacks in 60 s; past it the oldest bodies are forgotten first. */
const MAX_BODIES = 10_000;

interface Arrivals {
  /** The path's account ('' for the main account's) and when the body last arrived on it. */
  readonly byAccount: Map<string, number>;
  /** The newest arrival on any path. */
  last: number;
}

export class PathNet {
  /** Device and body hash -> arrivals; kept in order of each entry's newest arrival. */
  private readonly seen = new Map<string, Arrivals>();

  constructor(private readonly windowMs = PATH_NET_MS) {}

  /**
   * Notes that `body` arrived for `device` (`lock/ID`, `doorbell/ID`) on `account`'s path, and
   * tells whether it arrived on another account's path within the window.
   */
  arrived(device: string, body: Buffer, account: string, now: number): boolean {
    this.forget(now);
    const key = `${device}:${createHash('sha256').update(body).digest('hex')}`;
    const arrivals = this.seen.get(key) ?? { byAccount: new Map<string, number>(), last: now };
    let elsewhere = false;
    for (const [other, at] of arrivals.byAccount) if (other !== account && now - at < this.windowMs) elsewhere = true;
    arrivals.byAccount.set(account, now);
    arrivals.last = now;
    // Moved to the end: the map stays in order of newest arrival, so forgetting stops at the first live entry.
    this.seen.delete(key);
    this.seen.set(key, arrivals);
    if (this.seen.size > MAX_BODIES) {
      const oldest = this.seen.keys().next();
      if (oldest.done !== true) this.seen.delete(oldest.value);
    }
    return elsewhere;
  }

  private forget(now: number): void {
    for (const [key, arrivals] of this.seen) {
      if (now - arrivals.last < this.windowMs) return;
      this.seen.delete(key);
    }
  }
}
