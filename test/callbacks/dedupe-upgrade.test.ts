// The duplicate filter keeps 16-byte digests of its keys. Files an earlier version wrote hold the keys
// themselves: old-files/ holds dedupe.json and dedupe.journal as the previous version's own store
// wrote them, from the callbacks of `OLD_CALLBACKS` (each accepted once at NOW, a second apart).
// After the upgrade a replay of any of them is still a duplicate, and the files are rewritten as digests.
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { accept, type AcceptEnv } from '../../src/callbacks/accept.js';
import { DEDUPE_FILE, DEDUPE_JOURNAL, DedupeStore } from '../../src/callbacks/dedupe.js';
import { DEDUPE_TTL_MS } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';
import { DOORBELL_ID, LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, signed } from './helpers.js';

const OLD = join(import.meta.dirname, 'old-files');
const UUID = '3f1d2c9e-8b7a-4c61-9e2d-5a4b3c2d1e0f';
const OLD_CALLBACKS: ['lock' | 'doorbell', string, unknown][] = [
  ['lock', LOCK_ID, fixtures.appUnlock],
  ['lock', LOCK_ID, fixtures.keypadLock],
  ['lock', LOCK_ID, fixtures.doorOpen],
  ['doorbell', DOORBELL_ID, fixtures.motion],
  ['lock', LOCK_ID, fixtures.manualUnlock],
  ['lock', LOCK_ID, fixtures.oneTouch],
  ['doorbell', DOORBELL_ID, fixtures.press],
  ['doorbell', DOORBELL_ID, fixtures.video],
  ['lock', UUID, { ...fixtures.doorClosed, LockID: UUID }],
];

let dir: string;
const clock = { now: NOW };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-dedupe-upgrade-'));
  clock.now = NOW + 60_000;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open = (options: { maxKeys?: number } = {}) => DedupeStore.open({ storage: new Storage(dir), now: () => clock.now, debounceMs: 60_000, ...options });

function verdictOf(store: DedupeStore, [route, pathId, body]: ['lock' | 'doorbell', string, unknown]): string {
  const env: AcceptEnv = { apiKey: API_KEY, toleranceSeconds: 300, storedToken: () => TOKEN, sinkReady: () => true, dedupe: store };
  // Signed afresh, as the service signs every retry.
  const { body: raw, headers } = signed(body, { t: Math.floor(clock.now / 1000) });
  const verdict = accept({ route, pathId, body: raw, signature: headers['x-svc-signature'], token: headers['x-lock-access-token'], receivedAt: clock.now }, env);
  if (verdict.kind === 'accepted' && verdict.record.claim !== undefined) store.checkAndSet(verdict.record.claim.key);
  return verdict.kind;
}

/** The entries on disk: dedupe.json's, then the journal's lines. */
async function onDisk(): Promise<{ version: number; entries: unknown[][] }> {
  const file = JSON.parse(await readFile(join(dir, DEDUPE_FILE), 'utf8')) as { version: number; entries: unknown[][] };
  const journal = await readFile(join(dir, DEDUPE_JOURNAL), 'utf8').catch(() => '');
  return { version: file.version, entries: [...file.entries, ...journal.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown[])] };
}

describe('an upgrade from the files of the version before digests', () => {
  beforeEach(async () => {
    await copyFile(join(OLD, 'dedupe-v1.json'), join(dir, DEDUPE_FILE));
    await copyFile(join(OLD, 'dedupe-v1.journal'), join(dir, DEDUPE_JOURNAL));
  });

  it('every callback seen before the upgrade is a duplicate after it, a new one is not, and the first save writes digests only', async () => {
    const store = await open();
    expect(store.size).toBe(OLD_CALLBACKS.length);
    for (const callback of OLD_CALLBACKS) expect(verdictOf(store, callback)).toBe('duplicate');
    expect(verdictOf(store, ['lock', LOCK_ID, fixtures.doorClosed])).toBe('accepted');
    await store.close();

    const saved = await onDisk();
    expect(saved.version).toBe(2);
    expect(saved.entries).toHaveLength(OLD_CALLBACKS.length + 1);
    for (const [digest, expiresAt, earlier] of saved.entries) {
      expect(digest).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(expiresAt).toBeGreaterThan(clock.now);
      expect(earlier).toBe(0);
    }
    // The old keys are gone from the disk: nothing but digests.
    expect(await readFile(join(dir, DEDUPE_FILE), 'utf8')).not.toContain('LOCK-1');

    clock.now += 60_000;
    const again = await open();
    for (const callback of [...OLD_CALLBACKS, ['lock', LOCK_ID, fixtures.doorClosed] as ['lock', string, unknown]]) expect(verdictOf(again, callback)).toBe('duplicate');
    await again.close();
  });

  it('the old keys keep the time they were set: they expire 72 h after it, not after the upgrade', async () => {
    clock.now = NOW + DEDUPE_TTL_MS + 4_500;
    const store = await open();
    // Set at NOW + 0 s ... NOW + 8 s: the first five have expired.
    expect(store.size).toBe(4);
    const [first, last] = [OLD_CALLBACKS[0], OLD_CALLBACKS.at(-1)];
    if (first === undefined || last === undefined) throw new Error('no callbacks');
    expect(verdictOf(store, first)).toBe('accepted');
    expect(verdictOf(store, last)).toBe('duplicate');
  });
});

describe('any key seen before a restart is a duplicate after it, across the upgrade', () => {
  it('keys in old dedupe.json and journal lines, then new ones, for any keys', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 300, unit: 'binary' }), { minLength: 1, maxLength: 20 }),
        fc.nat(),
        async (keys, split) => {
          run += 1;
          const own = join(dir, `run-${String(run)}`);
          const storage = new Storage(own);
          await storage.ensureDir();
          const cut = split % (keys.length + 1);
          const [inFile, inJournal] = [keys.slice(0, cut), keys.slice(cut)];
          const [old, fresh] = [inJournal.slice(0, Math.ceil(inJournal.length / 2)), inJournal.slice(Math.ceil(inJournal.length / 2))];
          // As the previous version wrote them: [key, expiresAt].
          await writeFile(join(own, DEDUPE_FILE), JSON.stringify({ version: 1, entries: inFile.map((key) => [key, clock.now + 1000]) }));
          await writeFile(join(own, DEDUPE_JOURNAL), old.map((key) => `${JSON.stringify([key, clock.now + 2000])}\n`).join(''));
          const upgraded = await DedupeStore.open({ storage, now: () => clock.now, debounceMs: 60_000 });
          for (const key of [...inFile, ...old]) expect(upgraded.checkAndSet(key)).toBe(false);
          for (const key of fresh) expect(upgraded.checkAndSet(key)).toBe(true);
          await upgraded.close();
          const restarted = await DedupeStore.open({ storage, now: () => clock.now, debounceMs: 60_000 });
          for (const key of keys) expect(restarted.checkAndSet(key)).toBe(false);
          expect(restarted.checkAndSet(`${keys[0] ?? ''}\u0000not seen`)).toBe(true);
          await restarted.close();
        },
      ),
      { numRuns: 25 },
    );
    // 25 runs, each opening the store twice on real files it syncs: about a second on a quiet
    // machine, and past 30 s once when the unit files ran starved beside the whole suite.
  }, 120_000);
});

describe('memory per key: a digest, whatever the key\'s length', () => {
  /** A 141-byte key, the length the issue measured. */
  const longKey = (i: number) => `lock/${UUID}:sha256:${i.toString(16).padStart(64, '0')}`.padEnd(141, 'x');

  it('a key is written as a 22-character digest', async () => {
    expect(longKey(1)).toHaveLength(141);
    const store = await open();
    store.checkAndSet(longKey(1));
    await store.close();
    const line = (await readFile(join(dir, DEDUPE_JOURNAL), 'utf8')).trim();
    const [digest] = JSON.parse(line) as [string];
    expect(digest).toHaveLength(22);
    expect(line.length).toBeLessThan(50);
    expect((await stat(join(dir, DEDUPE_JOURNAL))).size).toBeLessThan(50);
  });

  it('50 000 long keys held add a few bytes each to the heap and buffers, not the key (the table is sized once)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = await open({ maxKeys: 50_000 });
    const used = () => {
      gc();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    // One save first, so what the first save sets up once (the file, the journal) is not counted.
    store.checkAndSet('first');
    await store.flush();
    const before = used();
    for (let i = 0; i < 50_000; i += 1) store.checkAndSet(longKey(i));
    await store.flush();
    const added = used() - before;
    expect(store.size).toBe(50_000);
    expect(store.has('first')).toBe(false);
    expect(store.has(longKey(0))).toBe(true);
    // About 2 bytes a key when nothing else moves; the bound leaves room for what the run's other
    // files and the file writes leave for the collector (31 bytes seen once), and is far below the
    // 229 bytes a key the filter held when it kept the keys themselves.
    expect(added / 50_000).toBeLessThan(64);
    await store.close();
  });
});
