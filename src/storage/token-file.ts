// The token file (`tokens.json`) and the lock that serialises every change to it between the
// plugin and its settings UI server. Every write bumps `generation`, so a process that held the
// lock can tell whether someone else changed the file since it last looked. What is written to it,
// and when, is decided in cloud/tokens/.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { type FileLockOptions, withFileLock } from '../util/file-lock.js';

export const TOKENS_FILE = 'tokens.json';
export const TOKENS_LOCK_FILE = 'tokens.lock';

const inFlightSchema = z.object({ pid: z.number(), nonce: z.string(), startedAt: z.number() });

const pendingSchema = z.object({
  token: z.string(),
  expiresAt: z.number().optional(),
  issuedAt: z.number(),
});

export const tokenRecordSchema = z.object({
  version: z.literal(1),
  /** Bumped by every write. */
  generation: z.number().int(),
  /** Bumped by every new refresh token (grant, link): a changed value means someone else rotated. */
  rotations: z.number().int(),
  /** 'unlinked': a tombstone: the user unlinked, and only a new seed or the UI links again. */
  state: z.enum(['linked', 'reauthorizationNeeded', 'unlinked']),
  /** Plain-words note for the UI (never a secret). */
  message: z.string().optional(),
  /**
   * The token endpoint blamed our own settings (wrong client id or secret): the refresh token is
   * kept unused, and this names what the user must fix. Cleared by the next successful grant.
   */
  settingsProblem: z.enum(['clientSecret', 'clientId', 'clientId and clientSecret']).optional(),
  /** Absent once spent without a known successor: structurally impossible to send twice. */
  refreshToken: z.string().optional(),
  /** Why there is no refresh token: the server refused it, or it may have been spent without us getting the answer. */
  refreshTokenLost: z.enum(['rejected', 'uncertain', 'none']).optional(),
  /** Set (with the old refresh token still in place) right before a grant is sent. */
  refreshInFlight: inFlightSchema.optional(),
  accessToken: z.string().optional(),
  accessTokenExpiresAt: z.number().optional(),
  accessTokenIssuedAt: z.number().optional(),
  /** A new access token from a grant, kept beside the old one until GET /users/me accepts it. */
  pendingAccessToken: pendingSchema.optional(),
  headerTokenSavedAt: z.number().optional(),
  lastRefreshAt: z.number().optional(),
  lastKeepAliveAt: z.number().optional(),
  linkedAt: z.number(),
  /**
   * How many unlinks this store has seen; a new link carries it over. A record with a higher count
   * than the one a process knows means an unlink happened in between, even when a new link already
   * replaced the tombstone (the plugin looks at the file only every few seconds).
   */
  unlinks: z.number().int().optional(),
  /** When the user unlinked (tombstones only). */
  unlinkedAt: z.number().optional(),
  /** Hash of the config seed this link came from. */
  seedHash: z.string().optional(),
  /** Hashes of every seed already used or superseded, so an old seed left in config never re-links. */
  knownSeedHashes: z.array(z.string()).default([]),
});

export type TokenRecord = z.infer<typeof tokenRecordSchema>;
export type PendingAccessToken = z.infer<typeof pendingSchema>;

export class TokenStore {
  /** In-process queue in front of the file lock, so callers of one process wait without polling. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly storage: Storage,
    private readonly lockOptions: FileLockOptions = {},
  ) {}

  get path(): string {
    return this.storage.file(TOKENS_FILE);
  }

  read(): Promise<TokenRecord | undefined> {
    return this.storage.read(TOKENS_FILE, tokenRecordSchema);
  }

  /** Writes `next` atomically (temp file, fsync, rename, 0600) with the generation after `base`'s. */
  async write(next: Omit<TokenRecord, 'generation'>, base: TokenRecord | undefined): Promise<TokenRecord> {
    const record: TokenRecord = { ...next, generation: (base?.generation ?? 0) + 1 };
    await this.storage.write(TOKENS_FILE, record);
    return record;
  }

  remove(): Promise<void> {
    return this.storage.remove(TOKENS_FILE);
  }

  /** Runs `fn` holding the cross-process lock. */
  locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      await this.storage.ensureDir();
      return withFileLock(this.storage.file(TOKENS_LOCK_FILE), fn, this.lockOptions);
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
