// The one rule for a file the plugin keeps (webhook-secret.json, devices.json): only a file that was
// read and holds no valid content may be replaced. One that could not be read at all (permissions,
// an I/O error, too many open files) may hold what the plugin needs, so it is kept and read again
// after a wait, never written over; a write that fails is tried again after a wait as well.
import { errorText } from './error-text.js';

/** What one read of a kept file found. */
export type KeptRead<T> =
  | { kind: 'found'; value: T }
  | { kind: 'missing' }
  /** Read, but no valid content: may be replaced. */
  | { kind: 'damaged'; reason: string }
  /** Not read at all: keep it, read it again later. */
  | { kind: 'unreadable'; reason: string };

/**
 * Runs one read (undefined: there is no file). A read error marked `damaged` (src/storage.ts marks
 * bad JSON and a wrong shape so) means a damaged file; any other error an unreadable one.
 */
export async function readKept<T>(read: () => Promise<T | undefined>): Promise<KeptRead<T>> {
  try {
    const value = await read();
    return value === undefined ? { kind: 'missing' } : { kind: 'found', value };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    const damaged = (error as { damaged?: unknown } | null)?.damaged === true;
    return { kind: damaged ? 'damaged' : 'unreadable', reason: `${errorText(error)}${cause}` };
  }
}

/** How long to wait before the next try at a kept file, by failures in a row; the last repeats. */
export const KEPT_FILE_RETRY_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/**
 * One pending retry at a time on a back-off schedule. Its timer never keeps Homebridge (or the
 * settings server) from exiting.
 */
export class KeptFileRetry {
  private timer: NodeJS.Timeout | undefined;
  private failuresInRow = 0;
  private stopped = false;

  /** Failures since the last success. */
  get failures(): number {
    return this.failuresInRow;
  }

  /** A try failed: `task` runs after the wait for this many failures in a row (unless one is already waiting). */
  failed(task: () => void): void {
    this.failuresInRow += 1;
    if (this.stopped || this.timer !== undefined) return;
    const delay = KEPT_FILE_RETRY_MS[Math.min(this.failuresInRow, KEPT_FILE_RETRY_MS.length) - 1] ?? 1_000;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) task();
    }, delay);
    this.timer.unref();
  }

  /** A try succeeded: the next failure waits the shortest time again. */
  succeeded(): void {
    this.failuresInRow = 0;
  }

  /** No more tries (shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
