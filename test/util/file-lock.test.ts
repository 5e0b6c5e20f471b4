// The lock file that makes the refresh grant single-flight across processes (
// "never two refreshes at once, in one process or between the plugin and its UI server").
import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { acquireFileLock, FileLockTimeoutError } from '../../src/util/file-lock.js';
import { processAlive } from '../../src/util/process-alive.js';
import { tempDirEachTest } from '../fixtures/token-harness.js';

describe('single flight "between the plugin and its UI server" (lock file)', () => {
  const temp = tempDirEachTest();

  const fastWait = { pollMs: 10, waitMs: 200 };

  it('a held lock keeps a second taker waiting until it is released', async () => {
    const path = join(temp.dir, 'tokens.lock');
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
    expect(await readdir(temp.dir)).toEqual([]);
  });

  it('a lock held by a live process is not taken over: the waiter gives up with FileLockTimeoutError', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid ?? 0;
      expect(processAlive(pid)).toBe(true);
      const path = join(temp.dir, 'tokens.lock');
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
    const path = join(temp.dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid, nonce: 'dead', createdAt: Date.now(), host: hostname() }));
    const lock = await acquireFileLock(path, fastWait);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it('stale-lock detection by age: a lock older than staleMs is taken over even if its pid is alive', async () => {
    const path = join(temp.dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid: process.ppid, nonce: 'old', createdAt: Date.now() - 120_000, host: hostname() }));
    const lock = await acquireFileLock(path, { ...fastWait, staleMs: 60_000 });
    await lock.release();
  });

  it('a lock with our own pid that this process does not hold (pid reused after a restart) is stale', async () => {
    const path = join(temp.dir, 'tokens.lock');
    await writeFile(path, JSON.stringify({ pid: process.pid, nonce: 'previous-run', createdAt: Date.now(), host: hostname() }));
    const lock = await acquireFileLock(path, fastWait);
    await lock.release();
  });

  it('the lock file is created with mode 0600', async () => {
    const path = join(temp.dir, 'tokens.lock');
    const lock = await acquireFileLock(path, fastWait);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await lock.release();
  });
});
