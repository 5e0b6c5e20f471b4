// Writes tokens a grant has just produced, and never loses them to a storage fault: when the disk
// is full, read-only or failing, the new tokens stay in memory (and in use), the write is retried
// with back-off until it succeeds, and the link status says they are not saved yet and why. A
// refresh token the service just issued exists nowhere else, so dropping it would end the link.
import { doublingDelay } from '../../util/backoff.js';
import type { Logger } from '../../util/logger.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { type MachineState, step, type UnsavedTokens } from './token-machine.js';
import { notSavedMessage, type TokenRecord, type TokenStore } from './token-store.js';

/** First retry of an unsaved write, doubling up to SAVE_RETRY_MAX_MS. */
export const SAVE_RETRY_FIRST_MS = 5_000;
export const SAVE_RETRY_MAX_MS = 10 * 60_000;

/** What the user can do about a file system error, by its code; the raw message could name paths. */
const STORAGE_FAULTS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full (ENOSPC)',
  EDQUOT: 'the disk quota is used up (EDQUOT)',
  EROFS: 'the file system is read-only (EROFS)',
  EIO: 'the disk reported an input/output error (EIO)',
  EACCES: 'permission denied on the plugin\'s storage folder (EACCES)',
  EPERM: 'permission denied on the plugin\'s storage folder (EPERM)',
};

export function describeStorageFault(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' ? STORAGE_FAULTS[code] : undefined) ?? safeErrorText(error);
}

export function saveRetryDelayMs(failures: number): number {
  return doublingDelay(failures, { firstMs: SAVE_RETRY_FIRST_MS, maxMs: SAVE_RETRY_MAX_MS });
}

const NO_FILE = -1;

/** Tokens in memory that tokens.json does not hold yet. */
export interface Unsaved extends UnsavedTokens {
  reason: string;
}

export interface TokenSaverHost {
  readonly store: TokenStore;
  readonly log: Logger;
  /** The saved record, or undefined when another process's record superseded ours (it is adopted). */
  onSaved(record: TokenRecord | undefined, superseded: TokenRecord | undefined): void;
  /** The not-saved state began or changed its reason. */
  onUnsavedChange(): void;
}

export class TokenSaver {
  private pending: Unsaved | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;

  constructor(private readonly host: TokenSaverHost) {}

  get unsaved(): Unsaved | undefined {
    return this.pending;
  }

  /**
   * Writes `next` after `base` (call holding the store lock). On a storage fault the record is kept
   * in memory and retried later; the returned record is then the one in memory. Never throws.
   */
  async persist(next: Omit<TokenRecord, 'generation'>, base: TokenRecord | undefined): Promise<TokenRecord> {
    try {
      const written = await this.host.store.write(next, base);
      if (this.pending) this.settle();
      return written;
    } catch (error) {
      const record: TokenRecord = { ...next, generation: (base?.generation ?? 0) + 1 };
      // No file before: any file that appears meanwhile was written by someone else.
      const diskRotations = this.pending?.diskRotations ?? base?.rotations ?? NO_FILE;
      this.fail(record, diskRotations, error, false);
      return record;
    }
  }

  /** Tries the write now (call holding the store lock). True when nothing is left unsaved. */
  async flushLocked(fromRetry = false): Promise<boolean> {
    const pending = this.pending;
    if (!pending) return true;
    try {
      const onDisk = await this.host.store.read();
      // An unlink or a new link made elsewhere wins: a tombstone must never be overwritten by
      // tokens, and a newer link's tokens are the ones the user chose.
      if (onDisk ? onDisk.state === 'unlinked' || onDisk.rotations !== pending.diskRotations : pending.diskRotations !== NO_FILE) {
        this.clear();
        this.host.onSaved(undefined, onDisk);
        this.host.onUnsavedChange();
        return true;
      }
      const written = await this.host.store.write(pending.record, onDisk ?? { ...pending.record, generation: 0 });
      this.host.onSaved(written, undefined);
      this.settle();
      return true;
    } catch (error) {
      this.fail(pending.record, pending.diskRotations, error, fromRetry);
      return false;
    }
  }

  /** The unlink: whatever was unsaved belongs to the link that ends, so nothing may write it later. */
  clear(): void {
    this.pending = undefined;
    this.failures = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Only the timer's own attempts count for the back-off; others in between leave it as it is. */
  private fail(record: TokenRecord, diskRotations: number, error: unknown, fromRetry: boolean): void {
    const reason = describeStorageFault(error);
    // The token machine decides what a failed write means: a warning when the reason is new.
    const decided = step(this.view(), { type: 'writeFailed', reason });
    const changed = decided.effects.some((effect) => effect.type === 'warn');
    this.pending = { record, diskRotations, reason };
    if (changed) {
      this.host.log.warn(`Lock Access: ${notSavedMessage(reason)}`);
      this.host.onUnsavedChange();
    }
    if (fromRetry || this.timer === undefined) {
      this.failures += 1;
      this.scheduleRetry();
    }
  }

  private settle(): void {
    const decided = step(this.view(), { type: 'writeSucceeded' });
    this.clear();
    if (decided.effects.some((effect) => effect.type === 'info')) {
      this.host.log.info('Lock Access: the renewed tokens are saved now.');
      this.host.onUnsavedChange();
    }
  }

  /** The part of the machine's state the saver knows: whether and why tokens are unsaved. */
  private view(): MachineState {
    const view: MachineState = { link: 'linked', granting: false, unlinks: 0 };
    if (this.pending) view.unsaved = this.pending.reason;
    return view;
  }

  private scheduleRetry(): void {
    if (this.timer) clearTimeout(this.timer);
    const delay = saveRetryDelayMs(this.failures);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retrying ??= this.host.store
        .locked(() => this.flushLocked(true))
        .then(
          () => undefined,
          (error: unknown) => {
            // The lock itself could not be taken (the folder is read-only, say): try again later.
            if (this.pending) this.fail(this.pending.record, this.pending.diskRotations, error, true);
          },
        )
        .finally(() => {
          this.retrying = undefined;
        });
    }, delay);
    // Homebridge and the settings server run until stopped, so the retry comes; it must not hold
    // up a shutdown, which would lose the tokens just the same.
    this.timer.unref();
  }

  /** Resolves when a retry that is running now has ended (tests and shutdown). */
  async idle(): Promise<void> {
    if (this.retrying) await this.retrying;
  }
}
