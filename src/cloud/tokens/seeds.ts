// Tokens in the plugin's config are seeds: spent once to link, remembered by hash so a
// seed left in the config never links again, and replaced only by a different seed (a re-link).
import { decodeJwtTimes } from './oauth.js';
import type { TokenSession } from './token-session.js';
import { hashSeed, type TokenRecord } from './token-store.js';

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
 * Links with the config's seed when it is one this store has not seen; otherwise the stored
 * tokens win. Call while holding the store lock, with the record just read.
 */
export async function applySeeds(session: TokenSession, seeds: Seeds | undefined, record: TokenRecord | undefined): Promise<TokenRecord | undefined> {
  const refreshToken = seeds?.refreshToken?.trim() ?? '';
  const accessToken = seeds?.accessToken?.trim() ?? '';
  const seed = refreshToken !== '' ? refreshToken : accessToken;
  if (seed === '') return record;
  const seedHash = hashSeed(seed);
  if (record && (record.seedHash === seedHash || record.knownSeedHashes.includes(seedHash))) return record;
  const link = newLinkRecord(record, refreshToken !== '' ? { refreshToken } : {}, seeds, session.now());
  link.seedHash = seedHash;
  link.knownSeedHashes = dedupeTail([...link.knownSeedHashes, seedHash], SEED_HASH_MEMORY);
  if (accessToken !== '') {
    const times = decodeJwtTimes(accessToken);
    link.accessToken = accessToken;
    if (times.expiresAt !== undefined) link.accessTokenExpiresAt = times.expiresAt;
    if (times.issuedAt !== undefined) link.accessTokenIssuedAt = times.issuedAt;
  }
  session.log.info(
    record
      ? 'Lock Access: the tokens in the plugin settings are new, so they replace the stored link.'
      : 'Lock Access: linking with the tokens from the plugin settings; from now on the plugin keeps them fresh on its own.',
  );
  const written = await session.store.write(link, record);
  session.dropAccess();
  return written;
}
