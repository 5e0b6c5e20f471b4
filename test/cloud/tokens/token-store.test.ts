// The token file ("Write-ahead persistence: ... written (temp file, fsync, rename)").
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { TokenStore, hashSeed } from '../../../src/cloud/tokens/token-store.js';
import { Storage } from '../../../src/storage.js';
import { tempDirEachTest } from '../../fixtures/token-harness.js';

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
