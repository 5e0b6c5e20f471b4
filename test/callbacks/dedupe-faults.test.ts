// The duplicate filter on a disk that stays full: its unsaved keys stay bounded (the newest within
// the size bound), it warns once rather than at every save, never throws to a callback, and once the
// disk has room again it saves what it still holds.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { DEDUPE_JOURNAL, DedupeStore } from '../../src/callbacks/dedupe.js';
import { keyDigest } from '../../src/callbacks/dedupe-file.js';
import { Storage } from '../../src/storage.js';
import { clearFsFaults, fsFaults as faults } from '../fixtures/fs-faults.js';

vi.mock('node:fs/promises', async (real) => (await import('../fixtures/fs-faults.js')).faultyFsPromises(await real()));
vi.mock('write-file-atomic', async (real) => (await import('../fixtures/fs-faults.js')).faultyWriteFileAtomic(await real()));

const MAX_KEYS = 1_000;
const ADDED = 8_000;

let dir: string;
beforeEach(async () => {
  clearFsFaults();
  dir = await mkdtemp(join(tmpdir(), 'lock-access-dedupe-faults-'));
});
afterEach(async () => {
  clearFsFaults();
  await rm(dir, { recursive: true, force: true });
});

/** Every save fails as on a full disk until the test clears the faults. */
function diskFull(): void {
  for (const name of [DEDUPE_JOURNAL, 'dedupe.json']) faults.write.set(name, Array.from({ length: 100_000 }, () => 'ENOSPC'));
}

const digestOf = (key: string): string => keyDigest(key).toString('base64url');
/** The digests the journal holds. */
const journalKeys = (): string[] =>
  readFileSync(join(dir, 'lock-access', DEDUPE_JOURNAL), 'utf8').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as [string, number])[0]);

describe('a journal write that keeps failing (disk full) never lets the unsaved keys grow without bound', () => {
  it('while every save fails, keys keep being filtered; the unsaved ones are bounded to the newest, with one warning each; once the disk has room the newest are saved', async () => {
    const warnings: string[] = [];
    let now = 1_800_000_000_000;
    const store = await DedupeStore.open({ storage: Storage.under(dir), now: () => now, maxKeys: MAX_KEYS, debounceMs: 60_000, log: { warn: (m) => warnings.push(m) } });
    diskFull();
    for (let i = 0; i < ADDED; i += 1) {
      now += 1;
      expect(store.checkAndSet(`key-${i}`)).toBe(true);
      // A save is attempted every 100 callbacks, as the debounce would under a flood.
      if (i % 100 === 99) await store.flush();
    }
    expect(store.checkAndSet(`key-${ADDED - 1}`)).toBe(false);
    expect(warnings).toEqual([
      expect.stringMatching(/^The duplicate filter could not be saved \(ENOSPC: .*\); it keeps working and tries again with the next callbacks\.$/),
      expect.stringMatching(/^The duplicate filter still cannot be saved: of the keys not saved yet it keeps the newest 1000 and drops older ones; after a restart a retry of one of those older events could apply twice\. Free disk space in Homebridge's storage folder\.$/),
    ]);
    // The disk has room again: what is saved is the newest keys, not all 8000 seen during the fault.
    clearFsFaults();
    await store.flush();
    const saved = journalKeys();
    expect(saved.length).toBeLessThanOrEqual(2 * MAX_KEYS);
    expect(saved).toContain(digestOf(`key-${ADDED - 1}`));
    expect(saved).toEqual(expect.arrayContaining(Array.from({ length: MAX_KEYS }, (_, i) => digestOf(`key-${ADDED - MAX_KEYS + i}`))));
    await store.close();
    const again = await DedupeStore.open({ storage: Storage.under(dir), now: () => now, maxKeys: MAX_KEYS });
    expect(again.checkAndSet(`key-${ADDED - 1}`)).toBe(false);
    await again.close();
  });
});
