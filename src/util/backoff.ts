// The one back-off schedule: how long to wait before the next try after `failures` failures in a
// row. Every retry in the plugin (cloud requests, registrations, the token file, Matter, the
// self-check, motion stills) takes its delay from here, so they all grow and cap the same way.

export interface Doubling {
  /** The delay after the first failure. */
  firstMs: number;
  /** The longest delay. */
  maxMs: number;
}

/** Doubles with each failure in a row (1 = the first), up to the longest delay. */
export function doublingDelay(failures: number, schedule: Doubling): number {
  return Math.min(schedule.maxMs, schedule.firstMs * 2 ** Math.max(0, failures - 1));
}

/** A schedule written out as a list (the delay after the first failure first); undefined past its end. */
export function listedDelay(schedule: readonly number[], failures: number): number | undefined {
  return failures < 1 ? undefined : schedule[failures - 1];
}

/**
 * "Full jitter": a uniform delay between 0 and the doubling delay, so many clients that failed
 * together do not come back together. `random` gives numbers in [0, 1); anything else counts as 0
 * (or just under 1), so a bad source never makes a negative or overlong delay.
 */
export function jitteredDelay(failures: number, schedule: Doubling, random: () => number): number {
  return Math.floor(unitInterval(random()) * doublingDelay(failures, schedule));
}

export function unitInterval(value: number): number {
  if (!Number.isFinite(value) || value < 0) return 0;
  return value >= 1 ? 0.999_999 : value;
}
