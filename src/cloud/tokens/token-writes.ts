// What a link, an unlink or a config seed writes to the token file (storage/token-file.ts), and
// the saver: writes that keep new tokens in memory and retry when the disk fails.
import { createHash } from 'node:crypto';

import type { TokenRecord, TokenStore } from '../../storage/token-file.js';
import { doublingDelay } from '../../util/backoff.js';
import { reasonOf } from '../../util/reason-messages.js';
import { storageFaultText } from '../../util/storage-fault.js';
import type { UiMessage } from '../../util/ui-message.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { decodeJwtTimes } from '../http/oauth.js';

/** SHA-256 (hex) of a seed: lets us recognise a seed without storing it twice. */
export function hashSeed(seed: string): string {
  return createHash('sha256').update(seed, 'utf8').digest('hex');
}

// Tokens in the plugin's config are seeds: spent once to link, remembered by hash so a
// seed left in the config never links again, and replaced only by a different seed (a re-link).
export interface Seeds {
  refreshToken?: string;
  accessToken?: string;
}

/** Seed hashes remembered per link. */
export const SEED_HASH_MEMORY = 20;

function dedupeTail(values: string[], limit: number): string[] {
  return [...new Set(values)].slice(-limit);
}

/** A fresh link record that remembers every seed already seen, so a stale seed never re-links. */
export function newLinkRecord(
  previous: TokenRecord | undefined,
  tokens: { refreshToken?: string },
  seeds: Seeds | undefined,
  now: number,
): Omit<TokenRecord, 'generation'> {
  const known = [...(previous?.knownSeedHashes ?? [])];
  if (previous?.seedHash !== undefined) known.push(previous.seedHash);
  const configSeed = seeds?.refreshToken?.trim() || seeds?.accessToken?.trim();
  if (configSeed) known.push(hashSeed(configSeed));
  if (tokens.refreshToken !== undefined) known.push(hashSeed(tokens.refreshToken));
  const link: Omit<TokenRecord, 'generation'> = {
    version: 1,
    rotations: (previous?.rotations ?? 0) + 1,
    state: 'linked',
    linkedAt: now,
    knownSeedHashes: dedupeTail(known, SEED_HASH_MEMORY),
  };
  if (previous?.unlinks !== undefined) link.unlinks = previous.unlinks;
  if (tokens.refreshToken !== undefined) link.refreshToken = tokens.refreshToken;
  else link.refreshTokenLost = 'none';
  return link;
}

/**
 * The tombstone an unlink leaves: no token at all, but every seed seen so far, the
 * config's included, so a token left in config.json never links again after a restart. Only a new
 * seed or a link in the settings UI ends it.
 */
export function unlinkedRecord(previous: TokenRecord | undefined, seeds: Seeds | undefined, now: number): Omit<TokenRecord, 'generation'> {
  const known = [...(previous?.knownSeedHashes ?? [])];
  if (previous?.seedHash !== undefined) known.push(previous.seedHash);
  for (const seed of [seeds?.refreshToken?.trim(), seeds?.accessToken?.trim()]) if (seed) known.push(hashSeed(seed));
  if (previous?.refreshToken !== undefined) known.push(hashSeed(previous.refreshToken));
  return {
    version: 1,
    rotations: (previous?.rotations ?? 0) + 1,
    state: 'unlinked',
    linkedAt: previous?.linkedAt ?? now,
    unlinkedAt: now,
    unlinks: (previous?.unlinks ?? 0) + 1,
    refreshTokenLost: 'none',
    knownSeedHashes: dedupeTail(known, SEED_HASH_MEMORY),
  };
}

/**
 * The new link a config seed makes, or undefined when there is no seed or this store has seen it
 * (then the stored tokens win).
 */
export function seedLink(seeds: Seeds | undefined, record: TokenRecord | undefined, now: number): Omit<TokenRecord, 'generation'> | undefined {
  const refreshToken = seeds?.refreshToken?.trim() ?? '';
  const accessToken = seeds?.accessToken?.trim() ?? '';
  const seed = refreshToken !== '' ? refreshToken : accessToken;
  if (seed === '') return undefined;
  const seedHash = hashSeed(seed);
  if (record && (record.seedHash === seedHash || record.knownSeedHashes.includes(seedHash))) return undefined;
  const link = newLinkRecord(record, refreshToken !== '' ? { refreshToken } : {}, seeds, now);
  link.seedHash = seedHash;
  link.knownSeedHashes = dedupeTail([...link.knownSeedHashes, seedHash], SEED_HASH_MEMORY);
  if (accessToken !== '') {
    const times = decodeJwtTimes(accessToken);
    link.accessToken = accessToken;
    if (times.expiresAt !== undefined) link.accessTokenExpiresAt = times.expiresAt;
    if (times.issuedAt !== undefined) link.accessTokenIssuedAt = times.issuedAt;
  }
  return link;
}


// Writes that must not lose tokens: when the disk is full, read-only or failing, the tokens a grant
// or a link just produced stay in memory (and in use), the write is retried with back-off until it
// succeeds, and the status says they are not saved yet and why. A refresh token the service just
// issued exists nowhere else, so dropping it would end the link.
/** First retry of an unsaved write, doubling up to SAVE_RETRY_MAX_MS. */
export const SAVE_RETRY_FIRST_MS = 5_000;
export const SAVE_RETRY_MAX_MS = 10 * 60_000;

/** Words for a file system fault: by its code when known, since the raw message could name paths. */
export function describeStorageFault(error: unknown): string {
  return storageFaultText(error) ?? safeErrorText(error);
}

export function saveRetryDelayMs(failures: number): number {
  return doublingDelay(failures, { firstMs: SAVE_RETRY_FIRST_MS, maxMs: SAVE_RETRY_MAX_MS });
}

const NO_FILE = -1;

/** Tokens in memory that tokens.json does not hold yet. */
export interface Unsaved {
  record: TokenRecord;
  /** `rotations` of the record on disk they replace: a different value there means someone else linked. */
  diskRotations: number;
  reason: string;
  /** The reason as a code the settings page words (`reason.file` with the error code). */
  cause: UiMessage;
}

export interface TokenSaverHost {
  readonly store: TokenStore;
  /** The saved record, or undefined when another process's record superseded ours (it is adopted). */
  onSaved(record: TokenRecord | undefined, superseded: TokenRecord | undefined): void;
  /** Why tokens are not saved went from `before` to `after` (undefined: all saved); the session tells the user. */
  onUnsavedChange(before: string | undefined, after: string | undefined): void;
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
    const before = this.pending?.reason;
    this.pending = { record, diskRotations, reason: describeStorageFault(error), cause: reasonOf(error) };
    this.host.onUnsavedChange(before, this.pending.reason);
    if (fromRetry || this.timer === undefined) {
      this.failures += 1;
      this.scheduleRetry();
    }
  }

  private settle(): void {
    const before = this.pending?.reason;
    this.clear();
    this.host.onUnsavedChange(before, undefined);
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
