// One "dirty flag + quiet write" for the files the plugin rewrites while callbacks flow (status,
// event log, duplicate filter). A burst of changes costs one write after the burst; writes are
// chained, so two never overlap and the last one carries the newest state; a failed write leaves
// the state dirty, so the next change (or the flush on close) tries again; a file that must not wait
// for the next change (what the devices keep) is also tried again on its own after a wait.
import type { KeptFileRetry } from './kept-file.js';
import { QuietTimer } from './quiet-timer.js';

export interface QuietWriterOptions {
  /** Writes the whole current state. Runs only when something changed, one call at a time. */
  write: () => Promise<void>;
  /** A write waits for changes to pause this long... */
  quietMs: number;
  /** ...but never longer than this after the first change since the last write. */
  maxDelayMs: number;
  /** Told why a write failed; without `retry`, nothing else is done about it until the next change. */
  onError: (error: unknown) => void;
  /** Tries a failed write again after a wait, without waiting for the next change. */
  retry?: KeptFileRetry;
  /** A write succeeded after failing (with `retry`). */
  onRecovered?: () => void;
}

export class QuietWriter {
  private readonly timer: QuietTimer;
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: QuietWriterOptions) {
    this.timer = new QuietTimer(() => void this.writeIfDirty(), options.quietMs, options.maxDelayMs);
  }

  /** True while a change has not reached the file yet. */
  get pending(): boolean {
    return this.dirty;
  }

  /** A change: written after the next quiet spell. */
  touch(): void {
    this.dirty = true;
    this.timer.touch();
  }

  /** A change not worth a write of its own: it goes out with the next one (or the flush). */
  markDirty(): void {
    this.dirty = true;
  }

  /** Writes pending changes now and waits for any write in flight. Never rejects. */
  flush(): Promise<void> {
    this.timer.cancel();
    return this.writeIfDirty();
  }

  /** The last write on shutdown. */
  close(): Promise<void> {
    return this.flush();
  }

  private writeIfDirty(): Promise<void> {
    this.writing = this.writing.then(async () => {
      // Checked when its turn comes: a write queued behind another may find nothing left to do.
      if (!this.dirty) return;
      this.dirty = false;
      const { retry } = this.options;
      try {
        await this.options.write();
      } catch (error) {
        this.dirty = true;
        this.report(error);
        retry?.failed(() => void this.writeIfDirty());
        return;
      }
      if (retry !== undefined && retry.failures > 0) {
        retry.succeeded();
        this.options.onRecovered?.();
      }
    });
    return this.writing;
  }

  /** A throwing error handler must not break the chain or surface as an unhandled rejection. */
  private report(error: unknown): void {
    try {
      this.options.onError(error);
    } catch {
      // Nothing sensible is left to tell.
    }
  }
}
