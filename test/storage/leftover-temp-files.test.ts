// Temporary files of writes a crash interrupted: write-file-atomic's and Storage.writeList's, in the
// plugin's folder and the accounts' folders, removed once no write can still be using them.
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import writeFileAtomic from 'write-file-atomic';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { copyOf, Storage } from '../../src/storage.js';
import { LEFTOVER_AGE_MS, sweepLeftoverTempFiles } from '../../src/storage/leftover-temp-files.js';

let dir: string;
let storage: Storage;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-leftovers-'));
  storage = new Storage(join(dir, 'lock-access'));
  await storage.ensureDir();
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The temp name write-file-atomic gives a write of `name` (its own function, so a change of its naming shows here). */
const atomicTempName = (name: string): string => {
  const named = (writeFileAtomic as unknown as { _getTmpname(file: string): string })._getTmpname(join(storage.dir, name));
  return named.slice(storage.dir.length + 1);
};

/** The temp name Storage.writeList uses, read from the folder while a list is being written. */
async function listTempName(name: string): Promise<string> {
  let seen: string[] = [];
  function* items(): Generator<number> {
    seen = readdirSync(storage.dir).filter((entry) => entry.startsWith(`${name}.`));
    yield 1;
  }
  await storage.writeList(name, {}, 'items', items());
  const [temp] = seen;
  if (temp === undefined) throw new Error('writeList wrote no temp file');
  return temp;
}

async function leave(path: string, ageMs: number): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, '{"accessToken":"half of a');
  const at = new Date(Date.now() - ageMs);
  await utimes(path, at, at);
}

describe('temporary files an interrupted write left', () => {
  it('both writers\' names are recognised as copies of their file; the plugin\'s own files are not', async () => {
    expect(copyOf(atomicTempName('tokens.json'))).toBe('tokens.json');
    expect(copyOf(await listTempName('events.json'))).toBe('events.json');
    expect(copyOf(join(storage.dir, await listTempName('dedupe.json')))).toBe(join(storage.dir, 'dedupe.json'));
    for (const kept of ['tokens.json', 'events.json', 'status.json', 'instance.lock', 'tokens.json.lock', 'dedupe.journal', 'webhooks.json', 'accounts']) expect(copyOf(kept)).toBeUndefined();
  });

  it('old ones go, in the plugin\'s folder and in every account\'s; fresh ones (a write under way, the settings server\'s) and every other file stay', async () => {
    const oldAtomic = atomicTempName('tokens.json');
    const oldList = await listTempName('events.json');
    const fresh = atomicTempName('status.json');
    await leave(join(storage.dir, oldAtomic), LEFTOVER_AGE_MS + 60_000);
    await leave(join(storage.dir, oldList), 24 * 60 * 60 * 1000);
    await leave(join(storage.dir, fresh), 1_000);
    await leave(join(storage.dir, 'accounts', 'cabin', 'tokens.json.4021377411'), LEFTOVER_AGE_MS + 1);
    await leave(join(storage.dir, 'accounts', 'cabin', 'tokens.json'), LEFTOVER_AGE_MS * 10);
    await leave(join(storage.dir, 'tokens.json'), LEFTOVER_AGE_MS * 10);

    const removed = await sweepLeftoverTempFiles(storage);

    expect(removed.sort()).toEqual([join('accounts', 'cabin', 'tokens.json.4021377411'), oldAtomic, oldList].sort());
    expect((await readdir(storage.dir)).sort()).toEqual(['accounts', 'events.json', fresh, 'tokens.json'].sort());
    expect(await readdir(join(storage.dir, 'accounts', 'cabin'))).toEqual(['tokens.json']);
  });

  it('nothing to do in a folder with no accounts yet, or none at all', async () => {
    expect(await sweepLeftoverTempFiles(storage)).toEqual([]);
    expect(await sweepLeftoverTempFiles(new Storage(join(dir, 'never-made')))).toEqual([]);
  });
});
