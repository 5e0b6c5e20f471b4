// The token file ("Write-ahead persistence: ... written (temp file, fsync, rename)").
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { NotLinkedError } from '../../../src/cloud/http/errors.js';
import { type TokenRecord, TokenStore } from '../../../src/storage/token-file.js';
import { hashSeed, newLinkRecord, SEED_HASH_MEMORY } from '../../../src/cloud/tokens/token-writes.js';
import { Storage } from '../../../src/storage.js';
import { readTokens, tempDirEachTest, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('the token file', () => {
  const temp = tempDirEachTest();

  it('every write bumps the generation and lands atomically with mode 0600', async () => {
    const store = new TokenStore(new Storage(join(temp.dir, 'lock-access')));
    const first = await store.write({ version: 1, rotations: 1, state: 'linked', linkedAt: 1, knownSeedHashes: [], refreshToken: 'r1' }, undefined);
    const second = await store.write({ ...first, refreshToken: 'r2' }, first);
    expect([first.generation, second.generation]).toEqual([1, 2]);
    expect(await store.read()).toEqual(second);
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });

  it('in-process callers of locked() run one after another', async () => {
    const store = new TokenStore(new Storage(join(temp.dir, 'lock-access')));
    const order: string[] = [];
    const job = (name: string) => store.locked(async () => {
      order.push(`${name}:in`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(`${name}:out`);
    });
    await Promise.all([job('a'), job('b'), job('c')]);
    expect(order).toEqual(['a:in', 'a:out', 'b:in', 'b:out', 'c:in', 'c:out']);
  });

  it('seeds are recognised by SHA-256 hash, never stored twice in clear', () => {
    expect(hashSeed('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

// Config tokens are seeds: spent once, remembered by hash, replaced only by a new seed.
describe('refreshToken / accessToken in config are seeds', () => {
  it('a refresh-token seed is spent once for a validated access token; the store records its hash', async () => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const m = bed.manager({ seeds: { refreshToken: seed } });
    expect(await m.start()).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(sim.refreshTokenState(seed)).toBe('used');
    const record = await readTokens(storage);
    expect(record?.seedHash).toBe(hashSeed(seed));
    expect(record?.refreshToken).not.toBe(seed);
    expect(record?.pendingAccessToken).toBeUndefined();
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('"once used, the rotated tokens in storage win": a restart with the same seed does not spend anything', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const first = bed.manager({ seeds: { refreshToken: seed } });
    await first.start();
    first.stop();
    const second = bed.manager({ seeds: { refreshToken: seed } });
    expect(await second.start()).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(await tokenWorks(sim, await second.getAccessToken())).toBe(true);
  });

  it('"a changed seed replaces the store = re-link"', async () => {
    const { sim, storage } = await bed.boot();
    const first = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await first.start();
    first.stop();
    const before = await readTokens(storage);
    const newSeed = sim.issueRefreshToken();
    const second = bed.manager({ seeds: { refreshToken: newSeed } });
    await second.start();
    const after = await readTokens(storage);
    expect(sim.refreshTokenState(newSeed)).toBe('used');
    expect(after?.seedHash).toBe(hashSeed(newSeed));
    expect(after?.rotations).toBeGreaterThan(before?.rotations ?? 0);
    expect(sim.stats.grants).toBe(2);
  });

  it('an access-token seed alone is used without a grant, even when it is not a JWT the plugin can read', async () => {
    const { sim } = await bed.boot();
    const access = sim.mintAccessToken();
    const m = bed.manager({ seeds: { accessToken: access } });
    expect(await m.start()).toBe('linked');
    expect(await m.getAccessToken()).toBe(access);
    expect(sim.stats.grants).toBe(0);

    const opaque = bed.manager({ seeds: { accessToken: 'opaque-token-that-is-no-jwt' } }, new Storage(join(bed.dir, 'other')));
    expect(await opaque.start()).toBe('linked');
    expect(opaque.status().accessTokenExpiresAt).toBeUndefined();
  });

  it('without seeds or stored tokens the state is unlinked and getAccessToken throws NotLinkedError', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager();
    expect(await m.start()).toBe('unlinked');
    await expect(m.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
    expect(sim.stats.apiCalls + sim.stats.grants).toBe(0);
  });
});

describe('a new link remembers every seed it has seen ("compare a hash")', () => {
  const previous: TokenRecord = {
    version: 1,
    generation: 4,
    rotations: 3,
    state: 'reauthorizationNeeded',
    message: 'refused',
    refreshTokenLost: 'rejected',
    accessToken: 'old-access',
    linkedAt: 1,
    seedHash: hashSeed('old-seed'),
    knownSeedHashes: [hashSeed('older-seed')],
  };

  it('a fresh, linked record one rotation on, holding the new refresh token and nothing of the old link', () => {
    const link = newLinkRecord(previous, { refreshToken: 'pasted' }, undefined, 5_000);
    expect(link).toEqual({
      version: 1,
      rotations: 4,
      state: 'linked',
      linkedAt: 5_000,
      refreshToken: 'pasted',
      knownSeedHashes: [hashSeed('older-seed'), hashSeed('old-seed'), hashSeed('pasted')],
    });
  });

  it('the config seed counts as seen, so it cannot replace a link made in the settings later', () => {
    const link = newLinkRecord(undefined, { refreshToken: 'pasted' }, { refreshToken: '  config-seed  ' }, 0);
    expect(link.knownSeedHashes).toEqual([hashSeed('config-seed'), hashSeed('pasted')]);
    const accessOnly = newLinkRecord(undefined, {}, { accessToken: 'config-access' }, 0);
    expect(accessOnly.knownSeedHashes).toEqual([hashSeed('config-access')]);
  });

  it('without a refresh token the record says there is none, so no grant is ever tried', () => {
    const link = newLinkRecord(undefined, {}, undefined, 0);
    expect(link.refreshToken).toBeUndefined();
    expect(link.refreshTokenLost).toBe('none');
  });

  it(`at most ${SEED_HASH_MEMORY} hashes are kept, the newest, each once`, () => {
    const many = Array.from({ length: SEED_HASH_MEMORY + 5 }, (_, i) => hashSeed(`seed-${i}`));
    const link = newLinkRecord({ ...previous, knownSeedHashes: [...many, ...many], seedHash: undefined }, { refreshToken: 'pasted' }, undefined, 0);
    expect(link.knownSeedHashes).toHaveLength(SEED_HASH_MEMORY);
    expect(new Set(link.knownSeedHashes).size).toBe(SEED_HASH_MEMORY);
    expect(link.knownSeedHashes.at(-1)).toBe(hashSeed('pasted'));
    expect(link.knownSeedHashes).not.toContain(hashSeed('seed-0'));
  });
});
