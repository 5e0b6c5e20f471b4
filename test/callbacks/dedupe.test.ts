import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { DEDUPE_FILE, DedupeNotReadyError, DedupeStore } from '../../src/callbacks/dedupe.js';
import { DEDUPE_TTL_MS } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';

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
    await expect(stat(join(dir, DEDUPE_FILE))).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(1000);
    vi.useRealTimers();
    await store.flush();
    const saved = JSON.parse(await readFile(join(dir, DEDUPE_FILE), 'utf8')) as { entries: [string, number][] };
    expect(saved.entries.map(([key]) => key)).toEqual(['k1', 'k2']);
    expect((await stat(join(dir, DEDUPE_FILE))).mode & 0o777).toBe(0o600);
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
          const file = JSON.parse(await readFile(own.file(DEDUPE_FILE), 'utf8').catch(() => '{"entries":[]}')) as { entries: [string, number][] };
          const live = file.entries.filter(([, at]) => at > clock.now);
          expect(live).toEqual(model.list.filter(([, at]) => at > clock.now));
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
