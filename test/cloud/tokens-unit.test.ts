// Pure parts of the token lifecycle: JWT expiry, schedule arithmetic, Retry-After, the lock file
// and the token file.
import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { decodeJwtTimes } from '../../src/cloud/jwt.js';
import { acquireFileLock, FileLockTimeoutError, processAlive } from '../../src/cloud/file-lock.js';
import { parseRetryAfter } from '../../src/cloud/retry-after.js';
import { DAY_MS, MAX_TIMER_MS, expiryOf, refreshDueAt, refreshMarginMs, retryDelayMs, timerDelay } from '../../src/cloud/token-schedule.js';
import { TokenStore, hashSeed } from '../../src/cloud/token-store.js';
import { Storage } from '../../src/storage.js';
import { tempDir } from '../fixtures/token-harness.js';

const jwt = (claims: object): string =>
  `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('design 4: refresh "when the token nears expiry (expires_in, or the JWT exp)"', () => {
  it('reads exp and iat of a JWT as epoch milliseconds', () => {
    expect(decodeJwtTimes(jwt({ exp: 1_800_000_000, iat: 1_700_000_000 }))).toEqual({ expiresAt: 1_800_000_000_000, issuedAt: 1_700_000_000_000 });
  });

  it('"a token that cannot be decoded is not an error": opaque, broken or odd tokens give no expiry', () => {
    for (const token of ['opaque-token', 'a.b', 'a.!!!.c', `x.${Buffer.from('[1,2]').toString('base64url')}.y`, jwt({ exp: 'soon' }), jwt({ exp: -5 }), '', '..']) {
      expect(decodeJwtTimes(token)).toEqual({});
    }
  });

  it('the JWT exp wins over expires_in; expires_in counts from receipt; neither means unknown', () => {
    expect(expiryOf(5_000, 100, 1_000)).toBe(5_000);
    expect(expiryOf(undefined, 100, 1_000)).toBe(101_000);
    expect(expiryOf(undefined, undefined, 1_000)).toBeUndefined();
    expect(expiryOf(undefined, 0, 1_000)).toBeUndefined();
  });

  it('refreshes when less than 7 days or 10% of the lifetime remains, whichever is smaller', () => {
    expect(refreshMarginMs(120 * DAY_MS)).toBe(7 * DAY_MS); // four months: 12 days is 10%, 7 days is smaller
    expect(refreshMarginMs(10 * DAY_MS)).toBe(DAY_MS);
    expect(refreshMarginMs(1000)).toBe(100);
    const issued = Date.UTC(2026, 0, 1);
    expect(refreshDueAt(issued + 120 * DAY_MS, issued)).toBe(issued + 113 * DAY_MS);
    expect(refreshDueAt(issued + DAY_MS, issued)).toBe(issued + DAY_MS - DAY_MS / 10);
    expect(refreshDueAt(undefined, issued)).toBeUndefined();
    // Unknown issue time: the 7-day cap.
    expect(refreshDueAt(issued + 30 * DAY_MS, undefined)).toBe(issued + 23 * DAY_MS);
  });

  it('timers never wait less than a second nor longer than setTimeout can', () => {
    expect(timerDelay(0, 10_000)).toBe(1000);
    expect(timerDelay(10_000 + 5000, 10_000)).toBe(5000);
    expect(timerDelay(400 * DAY_MS, 0)).toBe(MAX_TIMER_MS);
    expect([1, 2, 3, 6, 7, 20].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
  });
});

describe('issue 4.1: RateLimitedError "with the Retry-After delay (seconds or HTTP date)"', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP date relative to now, and a past date as 0', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent or unreadable values', () => {
    for (const value of [null, undefined, '', 'soon', '1.5', '-3']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('design 4: single flight "between the plugin and its UI server" (lock file)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await cleanup();
  });

  const fastWait = { pollMs: 10, waitMs: 200, sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };

  it('a held lock keeps a second taker waiting until it is released', async () => {
    const path = join(dir, 'tokens.lock');
    const first = await acquireFileLock(path, fastWait);
    let secondHeld = false;
    const second = acquireFileLock(path, { ...fastWait, waitMs: 5000 }).then((lock) => {
      secondHeld = true;
      return lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(secondHeld).toBe(false);
    await first.release();
    const lock = await second;
    expect(secondHeld).toBe(true);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a lock held by a live process is not taken over: the waiter gives up with FileLockTimeoutError', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid ?? 0;
      expect(processAlive(pid)).toBe(true);
      const path = join(dir, 'tokens.lock');
      await writeFile(path, JSON.stringify({ pid, nonce: 'other', createdAt: Date.now(), host: hostname() }));
      await expect(acquireFileLock(path, fastWait)).rejects.toBeInstanceOf(FileLockTimeoutError);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stale-lock detection by pid: a lock whose process is gone is taken over at once', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const pid = child.pid ?? 0;
    await new Promise((resolve) => child.on('exit', resolve));
    const path = join(dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid, nonce: 'dead', createdAt: Date.now(), host: hostname() }));
    const lock = await acquireFileLock(path, fastWait);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it('stale-lock detection by age: a lock older than staleMs is taken over even if its pid is alive', async () => {
    const path = join(dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid: process.ppid, nonce: 'old', createdAt: Date.now() - 120_000, host: hostname() }));
    const lock = await acquireFileLock(path, { ...fastWait, staleMs: 60_000 });
    await lock.release();
  });

  it('a lock with our own pid that this process does not hold (pid reused after a restart) is stale', async () => {
    const path = join(dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid: process.pid, nonce: 'previous-run', createdAt: Date.now(), host: hostname() }));
    const lock = await acquireFileLock(path, fastWait);
    await lock.release();
  });

  it('the lock file is created with mode 0600', async () => {
    const path = join(dir, 'tokens.lock');
    const lock = await acquireFileLock(path, fastWait);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await lock.release();
  });
});

describe('design 4: the token file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('every write bumps the generation and lands atomically with mode 0600', async () => {
    const store = new TokenStore(new Storage(join(dir, 'lock-access')));
    const first = await store.write({ version: 1, rotations: 1, state: 'linked', linkedAt: 1, knownSeedHashes: [], refreshToken: 'r1' }, undefined);
    const second = await store.write({ ...first, refreshToken: 'r2' }, first);
    expect([first.generation, second.generation]).toEqual([1, 2]);
    expect(await store.read()).toEqual(second);
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });

  it('in-process callers of locked() run one after another', async () => {
    const store = new TokenStore(new Storage(join(dir, 'lock-access')));
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
