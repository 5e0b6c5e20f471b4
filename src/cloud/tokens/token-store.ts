// The token file (`tokens.json`) and the lock that serialises every change to it between the
// plugin and its settings UI server. Every write bumps `generation`, so a process that held the
// lock can tell whether someone else changed the file since it last looked. Also the records a
// link or an unlink writes to it, the config's tokens as seeds, and the sentences the token jobs
// show users (some are kept in the file's `message`).
import { createHash } from 'node:crypto';
import { z } from 'zod/v3';

import type { Storage } from '../../storage.js';
import { type FileLockOptions, withFileLock } from '../../util/file-lock.js';
import { decodeJwtTimes } from './oauth.js';

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

/** SHA-256 (hex) of a seed: lets us recognise a seed without storing it twice. */
export function hashSeed(seed: string): string {
  return createHash('sha256').update(seed, 'utf8').digest('hex');
}

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

// The sentences the token jobs show users, in one place: the README quotes the advice, and the
// same situation must read the same wherever it is noticed.
/** The fixed part of the log line when the user must link again (documented in the README). */
export const REAUTHORIZATION_ADVICE =
  'Open the plugin settings in the Homebridge UI and link your Lock Access account again (or paste a new refresh token there). Until then HomeKit shows the last known state.';

export const NOT_LINKED_MESSAGE = 'Lock Access is not linked to an account: open the plugin settings in the Homebridge UI and link your account (or enter a refresh token).';

/** Start-up after an unlink (the tombstone): why nothing links, although tokens may still be in the config. */
export const UNLINKED_AT_START_MESSAGE =
  'Lock Access is unlinked (in the plugin settings, or because the account was deleted) and stays idle: tokens still in the plugin settings are not used again. Link the account in the plugin settings (or enter a new refresh token) to resume.';

export const UNCERTAIN_MESSAGE =
  'A token renewal got no usable answer (or Homebridge stopped while it ran). The service may have replaced the refresh token without the plugin receiving the new one, so the old one will never be sent again. The plugin keeps using the current access token, which stays valid, and keeps it alive every day.';

/** What callers are told once the link is lost for good. */
export const RELINK_MESSAGE = `Lock Access needs you to link your account again. ${REAUTHORIZATION_ADVICE}`;

/** Storage faults right after a grant: the new tokens are in use but not on disk yet. */
export function notSavedMessage(reason: string): string {
  return `The renewed tokens are in use but not saved yet (${reason}). The plugin keeps retrying the save; free disk space or fix the folder's permissions, and do not restart Homebridge until a later line says the tokens are saved.`;
}
