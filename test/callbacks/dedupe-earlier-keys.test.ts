// Earlier versions' duplicate keys are looked up only while the store holds a key of such a form:
// after an upgrade a redelivery stored under an earlier key is still a duplicate, and once no such
// key is held (72 h later, or on a fresh install) a callback makes no second hash of its body.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { accept } from '../../src/callbacks/accept.js';
import type { AcceptEnv, CallbackRequest } from '../../src/callbacks/accept.js';
import { DEDUPE_FILE, DEDUPE_JOURNAL, DedupeStore } from '../../src/callbacks/dedupe.js';
import { mayBeEarlierKey } from '../../src/callbacks/dedupe-rule.js';
import { DEDUPE_TTL_MS } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';
import { LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, signed } from './helpers.js';

// Counts the SHA-256 hashes made, and makes them as usual.
const hashes = vi.hoisted(() => ({ made: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    createHash: (...args: Parameters<typeof crypto.createHash>) => {
      hashes.made += 1;
      return crypto.createHash(...args);
    },
  };
});

let dir: string;
let clock: { now: number };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-earlier-keys-'));
  clock = { now: NOW };
  hashes.made = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A store as a restart finds it: the keys an earlier run left in dedupe.json. */
async function storeWith(keys: string[]): Promise<DedupeStore> {
  const entries = keys.map((key) => [key, NOW + DEDUPE_TTL_MS - 1000]);
  await writeFile(join(dir, DEDUPE_FILE), JSON.stringify({ version: 1, entries }));
  return DedupeStore.open({ storage: new Storage(dir), now: () => clock.now, debounceMs: 60_000 });
}

function envWith(store: DedupeStore): AcceptEnv {
  return { apiKey: API_KEY, toleranceSeconds: 300, storedToken: () => TOKEN, sinkReady: () => true, dedupe: store };
}

function lockRequest(body: unknown): CallbackRequest {
  const { body: raw, headers } = signed(body, {});
  return { route: 'lock', pathId: LOCK_ID, body: raw, signature: headers['x-svc-signature'], token: headers['x-lock-access-token'], receivedAt: clock.now };
}

describe('which stored keys have an earlier form', () => {
  it('the EventID without the device and any delivery key do; this version\'s EventID key and the old body-only key do not', () => {
    expect(mayBeEarlierKey('lock:id:e-1')).toBe(true);
    expect(mayBeEarlierKey('doorbell:id:e-1')).toBe(true);
    expect(mayBeEarlierKey(`lock/${LOCK_ID}:sha256t:${'a'.repeat(64)}`)).toBe(true);
    expect(mayBeEarlierKey(`lock/${LOCK_ID}:id:e-1`)).toBe(false);
    expect(mayBeEarlierKey(`lock/${LOCK_ID}:sha256:${'a'.repeat(64)}`)).toBe(false);
    expect(mayBeEarlierKey(`lock:sha256:${'a'.repeat(64)}`)).toBe(false);
  });
});

describe('the store knows whether it holds earlier keys', () => {
  it('a fresh store holds none, and keys of this version add none', async () => {
    const store = await storeWith([]);
    expect(store.holdsEarlierKeys).toBe(false);
    store.checkAndSet(`lock/${LOCK_ID}:id:e-1`);
    expect(store.holdsEarlierKeys).toBe(false);
  });

  it('loaded from dedupe.json or the journal, until the last of them expires', async () => {
    const store = await storeWith([`lock/${LOCK_ID}:id:e-new`, 'lock:id:e-old']);
    expect(store.holdsEarlierKeys).toBe(true);
    clock.now = NOW + DEDUPE_TTL_MS;
    store.checkAndSet(`lock/${LOCK_ID}:id:e-later`);
    expect(store.holdsEarlierKeys).toBe(false);

    await writeFile(join(dir, DEDUPE_JOURNAL), `${JSON.stringify(['lock:id:e-journal', clock.now + 1000])}\n`);
    const reopened = await DedupeStore.open({ storage: new Storage(dir), now: () => clock.now });
    expect(reopened.holdsEarlierKeys).toBe(true);
  });

  it('one key set twice is counted once, and leaves once', async () => {
    const store = await storeWith(['lock:id:e-old']);
    clock.now = NOW + DEDUPE_TTL_MS - 500;
    // Expired now: set again, it stands for one key still.
    expect(store.checkAndSet('lock:id:e-old')).toBe(true);
    expect(store.holdsEarlierKeys).toBe(true);
    clock.now += DEDUPE_TTL_MS;
    store.checkAndSet(`lock/${LOCK_ID}:id:e-later`);
    expect(store.holdsEarlierKeys).toBe(false);
  });
});

describe('earlier keys on the way of a callback', () => {
  it('a redelivery stored under an earlier version\'s EventID key before the restart is still a duplicate', async () => {
    const store = await storeWith(['lock:id:e-manual']);
    expect(accept(lockRequest(fixtures.manualUnlock), envWith(store)).kind).toBe('duplicate');
    expect(accept(lockRequest(fixtures.appUnlock), envWith(store)).kind).toBe('accepted');
  });

  it('with earlier keys held, the delivery key of a callback with an EventID is made (one SHA-256 of the body)', async () => {
    const store = await storeWith(['lock:id:e-other']);
    hashes.made = 0;
    expect(accept(lockRequest(fixtures.appUnlock), envWith(store)).kind).toBe('accepted');
    expect(hashes.made).toBe(1);
  });

  it('with none held, no hash is made for a callback with an EventID and only its own key is looked up', async () => {
    const store = await storeWith([`lock/${LOCK_ID}:id:e-other`]);
    const has = vi.spyOn(store, 'has');
    hashes.made = 0;
    const verdict = accept(lockRequest(fixtures.appUnlock), envWith(store));
    expect(verdict.kind).toBe('accepted');
    expect(hashes.made).toBe(0);
    expect(has.mock.calls).toEqual([[`lock/${LOCK_ID}:id:e-app-unlock`]]);
  });
});
