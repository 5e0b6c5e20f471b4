// The simulator's notion of time, injectable so tests can run expiry and retry schedules in fake time.

export interface SimClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time. Globals are looked up at call time so vitest fake timers installed later still apply. */
export const realClock: SimClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** A hand-driven clock for tests: timers run only when `advance` passes their due time. */
export class ManualClock implements SimClock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { due: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward, running due timers in due order (each at its own due time). */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let nextId: number | undefined;
      let nextDue = Infinity;
      for (const [id, t] of this.timers) {
        if (t.due <= end && t.due < nextDue) {
          nextDue = t.due;
          nextId = id;
        }
      }
      if (nextId === undefined) break;
      const timer = this.timers.get(nextId);
      this.timers.delete(nextId);
      this.time = nextDue;
      timer?.fn();
    }
    this.time = end;
  }

  /** Milliseconds until the earliest pending timer, or undefined when none is pending. */
  nextDelay(): number | undefined {
    let min: number | undefined;
    for (const t of this.timers.values()) min = min === undefined ? t.due - this.time : Math.min(min, t.due - this.time);
    return min;
  }

  pending(): number {
    return this.timers.size;
  }
}
