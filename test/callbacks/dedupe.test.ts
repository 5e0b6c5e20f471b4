import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { DEDUPE_FILE, DEDUPE_JOURNAL, DedupeNotReadyError, DedupeStore } from '../../src/callbacks/dedupe.js';
import { keyDigest } from '../../src/callbacks/dedupe-file.js';
import { DEDUPE_TTL_MS } from '../../src/settings.js';
import { Storage, StorageError } from '../../src/storage.js';

let dir: string;
let storage: Storage;
const clock = { now: 1_767_225_600_000 };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-dedupe-'));
  storage = new Storage(dir);
  clock.now = 1_767_225_600_000;
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(dir, { recursive: true, force: true });
});

/** The [digest, expiresAt] pairs on disk: the compacted file, then the journal's lines. */
async function savedEntries(own: Storage = storage): Promise<[string, number][]> {
  const file = JSON.parse(await readFile(own.file(DEDUPE_FILE), 'utf8').catch(() => '{"entries":[]}')) as { entries: [string, number][] };
  const journal = await readFile(own.file(DEDUPE_JOURNAL), 'utf8').catch(() => '');
  return [...file.entries, ...journal.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as [string, number])].map(([digest, at]) => [digest, at]);
}

/** How a key is written. */
const digestOf = (key: string): string => keyDigest(key).toString('base64url');

const open = (options: { maxKeys?: number; debounceMs?: number } = {}) => DedupeStore.open({ storage, now: () => clock.now, ...options });

describe('dedupe check-and-set', () => {
  it('the first delivery is new and a repeat is a duplicate', async () => {
    const store = await open();
    expect(store.checkAndSet('k')).toBe(true);
    expect(store.checkAndSet('k')).toBe(false);
    expect(store.checkAndSet('k2')).toBe(true);
    await store.close();
  });
  it('keys are kept for 72 h and forgotten after', async () => {
    const store = await open();
    store.checkAndSet('k');
    clock.now += DEDUPE_TTL_MS - 1;
    expect(store.checkAndSet('k')).toBe(false);
    clock.now += 1;
    expect(store.checkAndSet('k')).toBe(true);
    await store.close();
  });
  it('is bounded: the oldest keys are dropped', async () => {
    const store = await open({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c', 'd']) store.checkAndSet(key);
    expect(store.size).toBe(3);
    expect(store.has('a')).toBe(false);
    expect(store.has('d')).toBe(true);
    await store.close();
  });
  it('before loading, check-and-set refuses (the receiver answers 503)', () => {
    const store = new DedupeStore({ storage });
    expect(() => store.checkAndSet('k')).toThrow(DedupeNotReadyError);
  });
});

describe('dedupe is kept on disk', () => {
  it('writes are debounced and survive a restart', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = await open({ debounceMs: 1000 });
    store.checkAndSet('k1');
    store.checkAndSet('k2');
    expect(await savedEntries()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    vi.useRealTimers();
    await store.flush();
    expect((await savedEntries()).map(([key]) => key)).toEqual(['k1', 'k2'].map(digestOf));
    expect((await stat(join(dir, DEDUPE_JOURNAL))).mode & 0o777).toBe(0o600);
    const again = await open();
    expect(again.checkAndSet('k1')).toBe(false);
    expect(again.checkAndSet('k3')).toBe(true);
    await again.close();
  });
  it('close flushes pending keys', async () => {
    const store = await open({ debounceMs: 60_000 });
    store.checkAndSet('late');
    await store.close();
    const again = await open();
    expect(again.has('late')).toBe(true);
  });
  it('expired keys are not loaded', async () => {
    const store = await open();
    store.checkAndSet('old');
    await store.close();
    clock.now += DEDUPE_TTL_MS + 1;
    const again = await open();
    expect(again.size).toBe(0);
  });
  it('a corrupt file is logged and the store starts empty', async () => {
    await storage.ensureDir();
    await writeFile(join(dir, DEDUPE_FILE), '{not json');
    const warnings: string[] = [];
    const store = await DedupeStore.open({ storage, log: { warn: (m) => warnings.push(m) } });
    expect(store.ready).toBe(true);
    expect(store.size).toBe(0);
    expect(warnings).toHaveLength(1);
  });
});

describe('dedupe memory kept for the retry window: expiry and the size bound against a plain model', () => {
  /** The obvious implementation: a list of [key, expiresAt], oldest first. */
  class Model {
    list: [string, number][] = [];
    constructor(private readonly ttl: number, private readonly max: number) {}
    checkAndSet(key: string, now: number): boolean {
      this.list = this.list.filter(([, at]) => at > now);
      if (this.list.some(([k]) => k === key)) return false;
      this.list.push([key, now + this.ttl]);
      while (this.list.length > this.max) this.list.shift();
      return true;
    }
  }

  let runs = 0;

  it('answers like the model for any sequence of deliveries and clock steps, and writes the same keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.record({ key: fc.integer({ min: 0, max: 12 }) }), fc.record({ step: fc.integer({ min: 0, max: 40 }) })), { maxLength: 200 }),
        async (steps) => {
          const ttlMs = 50;
          const maxKeys = 5;
          // A folder per run: each run starts with no file.
          runs += 1;
          const own = new Storage(join(dir, `run-${String(runs)}`));
          const store = await DedupeStore.open({ storage: own, now: () => clock.now, ttlMs, maxKeys, debounceMs: 60_000 });
          const model = new Model(ttlMs, maxKeys);
          for (const step of steps) {
            if ('step' in step) clock.now += step.step;
            else expect(store.checkAndSet(`k${String(step.key)}`)).toBe(model.checkAndSet(`k${String(step.key)}`, clock.now));
          }
          await store.flush();
          // Nothing delivered, nothing written.
          // What a restart would load: the live keys on disk, each once, the newest maxKeys.
          const loaded = new Map<string, number>();
          for (const [key, at] of (await savedEntries(own)).sort((a, b) => a[1] - b[1])) {
            if (at <= clock.now) continue;
            loaded.delete(key);
            loaded.set(key, at);
          }
          const live = [...loaded.entries()].slice(-maxKeys);
          expect(live).toEqual(model.list.filter(([, at]) => at > clock.now).map(([key, at]) => [digestOf(key), at]));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a full store keeps the newest maxKeys keys while far more arrive', async () => {
    const store = await open({ maxKeys: 1000 });
    for (let i = 0; i < 20_000; i += 1) expect(store.checkAndSet(`k${String(i)}`)).toBe(true);
    expect(store.size).toBe(1000);
    expect(store.checkAndSet('k19999')).toBe(false);
    expect(store.checkAndSet('k18999')).toBe(true);
  });
});

describe('under a flood the file work grows with the new keys only (a journal, compacted now and then)', () => {
  /** The real store on real files, counting the bytes each save writes. */
  class CountingStorage extends Storage {
    written = 0;
    override async write(name: string, value: unknown, options: { compact?: boolean } = {}): Promise<void> {
      this.written += JSON.stringify(value).length;
      await super.write(name, value, options);
    }
    override async append(name: string, text: string): Promise<void> {
      this.written += text.length;
      await super.append(name, text);
    }
  }

  it('with 20 000 keys kept, saving 10 more writes about 10 keys, not 20 010', async () => {
    const counting = new CountingStorage(dir);
    const store = await DedupeStore.open({ storage: counting, now: () => clock.now, debounceMs: 60_000 });
    for (let i = 0; i < 20_000; i += 1) store.checkAndSet(`lock/L1:id:${String(i).padStart(36, '0')}`);
    await store.flush();
    for (let round = 0; round < 5; round += 1) {
      counting.written = 0;
      for (let i = 0; i < 10; i += 1) store.checkAndSet(`lock/L1:id:new-${String(round)}-${String(i).padStart(30, '0')}`);
      await store.flush();
      expect(counting.written).toBeGreaterThan(0);
      expect(counting.written).toBeLessThan(10 * 200);
    }
    await store.close();
    const again = await open();
    expect(again.size).toBe(20_050);
    expect(again.checkAndSet(`lock/L1:id:${String(0).padStart(36, '0')}`)).toBe(false);
    expect(again.checkAndSet('lock/L1:id:new-4-' + String(9).padStart(30, '0'))).toBe(false);
  });

  it('over a long flood the bytes written stay proportional to the keys added (compaction is occasional)', async () => {
    const counting = new CountingStorage(dir);
    const store = await DedupeStore.open({ storage: counting, now: () => clock.now, debounceMs: 60_000, maxKeys: 5_000 });
    let added = 0;
    for (let round = 0; round < 200; round += 1) {
      for (let i = 0; i < 100; i += 1) store.checkAndSet(`k-${String(added++).padStart(40, '0')}`);
      await store.flush();
    }
    // About 60 bytes a key; rewriting all keys at each save would be 200 x 5 000 x 60 = 60 MB.
    expect(counting.written).toBeLessThan(added * 60 * 4);
    await store.close();
    const again = await DedupeStore.open({ storage, now: () => clock.now, maxKeys: 5_000 });
    expect(again.size).toBe(5_000);
    expect(again.has(`k-${String(added - 1).padStart(40, '0')}`)).toBe(true);
  });

  it('a crash in the middle of a save tears at most the last line: it is ignored, every whole line counts, and later saves are whole', async () => {
    const store = await open({ debounceMs: 60_000 });
    store.checkAndSet('k1');
    await store.flush();
    store.checkAndSet('k2');
    await store.flush();
    await store.close();
    // The process died while appending k3: half a line at the end.
    await storage.append(DEDUPE_JOURNAL, '["k3",17');
    const warnings: string[] = [];
    const again = await DedupeStore.open({ storage, now: () => clock.now, debounceMs: 60_000, log: { warn: (m) => warnings.push(m) } });
    expect(again.has('k1')).toBe(true);
    expect(again.has('k2')).toBe(true);
    expect(again.has('k3')).toBe(false);
    again.checkAndSet('k4');
    await again.close();
    const third = await open();
    expect(['k1', 'k2', 'k4'].map((key) => third.has(key))).toEqual([true, true, true]);
    expect(third.size).toBe(3);
  });

  it('a key dropped for the size bound and set again in the same millisecond is kept after a restart (its last setting counts)', async () => {
    const store = await open({ maxKeys: 2, debounceMs: 60_000 });
    for (const key of ['a', 'b', 'c', 'a']) expect(store.checkAndSet(key)).toBe(true);
    await store.close();
    const again = await open({ maxKeys: 2 });
    expect(['a', 'b', 'c'].map((key) => again.has(key))).toEqual([true, false, true]);
  });

  it('a crash between writing the compacted file and removing the journal loses nothing and doubles nothing', async () => {
    const store = await open({ debounceMs: 60_000 });
    store.checkAndSet('a');
    await store.flush();
    store.checkAndSet('b');
    await store.flush();
    await store.close();
    const journal = await readFile(join(dir, DEDUPE_JOURNAL), 'utf8');
    // A compacted file with both, and the journal still there.
    await storage.write(DEDUPE_FILE, { version: 1, entries: [['a', clock.now + DEDUPE_TTL_MS], ['b', clock.now + DEDUPE_TTL_MS]] }, { compact: true });
    await writeFile(join(dir, DEDUPE_JOURNAL), journal);
    const again = await open();
    expect(again.size).toBe(2);
    expect(again.checkAndSet('a')).toBe(false);
  });
});

describe('a passing read fault at start (EIO, EMFILE) never costs the keys on disk', () => {
  /** The real store on real files; reading `name` fails `times` times as a disk fault would. */
  class FaultyStorage extends Storage {
    constructor(dir: string, private readonly name: string, private times: number) {
      super(dir);
    }
    override async readText(name: string): Promise<string | undefined> {
      if (name === this.name && this.times > 0) {
        this.times -= 1;
        throw new StorageError(`cannot read ${name}`, { cause: Object.assign(new Error('i/o error'), { code: 'EIO' }) });
      }
      return super.readText(name);
    }
  }

  it.each([DEDUPE_FILE, DEDUPE_JOURNAL])('%s unreadable at start: the keys in it are read at the next save and kept, never written over', async (name) => {
    // Keys in the compacted file and in the journal.
    const first = await open({ debounceMs: 60_000 });
    first.checkAndSet('old-1');
    await first.flush();
    await storage.write(DEDUPE_FILE, { version: 1, entries: [['old-0', clock.now + DEDUPE_TTL_MS]] }, { compact: true });
    await first.close();
    const warnings: string[] = [];
    const faulty = new FaultyStorage(dir, name, 1);
    // Enough new keys to compact at once, were it allowed.
    const store = await DedupeStore.open({ storage: faulty, now: () => clock.now, debounceMs: 60_000, log: { warn: (m) => warnings.push(m) } });
    expect(warnings.join('\n')).toMatch(/read again/);
    for (let i = 0; i < 12_000; i += 1) store.checkAndSet(`new-${String(i)}`);
    await store.flush();
    // Read at that save: a redelivery of an old key is a duplicate again.
    expect(store.checkAndSet('old-0')).toBe(false);
    expect(store.checkAndSet('old-1')).toBe(false);
    for (let i = 0; i < 12_000; i += 1) store.checkAndSet(`more-${String(i)}`);
    await store.close();
    const again = await open();
    expect(['old-0', 'old-1', 'new-0', 'more-11999'].map((key) => again.has(key))).toEqual([true, true, true, true]);
  });
});
