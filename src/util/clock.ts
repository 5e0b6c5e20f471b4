// Time as the device models see it: the current epoch ms and one-shot timers. The models take a
// clock instead of calling Date.now and setTimeout, so every countdown is tested with fake timers.
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock. Its timers never keep Homebridge running on their own: a countdown that is due
 * after shutdown has nothing left to act on.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** The real clock with another source of "now" (a test's or the caller's). */
export function clockWithNow(now: (() => number) | undefined): Clock {
  return now === undefined ? systemClock : { ...systemClock, now };
}
