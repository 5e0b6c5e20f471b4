import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { claimInstance, INSTANCE_LOCK_FILE } from '../../src/storage/instance-lock.js';
import { Storage } from '../../src/storage.js';
import { processStartTime } from '../../src/util/process-alive.js';

let root: string;
let storage: Storage;
let child: ChildProcess | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'lock-access-instance-'));
  storage = Storage.under(root);
});

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  child = undefined;
  await rm(root, { recursive: true, force: true });
});

const lockPath = (): string => join(storage.dir, INSTANCE_LOCK_FILE);

/** Another process of this machine, alive until the test ends. */
async function otherProcess(): Promise<number> {
  child = spawn(process.execPath, ['-e', 'process.stdout.write("up\\n"); setInterval(() => {}, 1 << 30)'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await once(child.stdout ?? child, 'data');
  return child.pid ?? 0;
}

/** The pid of a process that has exited. */
async function goneProcess(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(gone, 'exit');
  return gone.pid ?? 0;
}

async function writeOwner(owner: Record<string, unknown>): Promise<void> {
  await storage.ensureDir();
  await writeFile(lockPath(), JSON.stringify(owner), { mode: 0o600 });
}

describe('the storage instance lock (lock-access/instance.lock)', () => {
  it('is taken when free: the file holds this process\'s pid (mode 0600); release removes it and leaves nothing else behind', async () => {
    const claim = await claimInstance(storage);
    expect(claim.held).toBe(true);
    expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect((await stat(lockPath())).mode & 0o777).toBe(0o600);
    if (claim.held) await claim.release();
    expect(await readdir(storage.dir)).toEqual([]);
  });

  it('a second claim while one runs is refused and names the holder, also within one process; after the release it is taken', async () => {
    const first = await claimInstance(storage);
    expect(await claimInstance(storage)).toEqual({ held: false, pid: process.pid });
    if (first.held) await first.release();
    const again = await claimInstance(storage);
    expect(again.held).toBe(true);
    if (again.held) await again.release();
  });

  it('two claims at the same moment: exactly one gets it', async () => {
    const claims = await Promise.all([claimInstance(storage), claimInstance(storage), claimInstance(storage)]);
    expect(claims.filter((c) => c.held)).toHaveLength(1);
  });

  it('held by another live process: refused with that pid, and the file is left as it is', async () => {
    const pid = await otherProcess();
    const started = await processStartTime(pid);
    await writeOwner({ pid, nonce: 'other', host: hostname(), ...(started === undefined ? {} : { started }) });
    const before = await readFile(lockPath(), 'utf8');
    expect(await claimInstance(storage)).toEqual({ held: false, pid });
    expect(await readFile(lockPath(), 'utf8')).toBe(before);
  });

  it('taken over when its process is gone (a crash, a killed child bridge)', async () => {
    await writeOwner({ pid: await goneProcess(), nonce: 'crashed', host: hostname() });
    const claim = await claimInstance(storage);
    expect(claim.held).toBe(true);
    expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('taken over when its pid now belongs to a process that started later (a pid used again after a container restart)', async () => {
    const pid = await otherProcess();
    const started = await processStartTime(pid);
    if (started === undefined) return; // no /proc: the pid alone decides
    await writeOwner({ pid, nonce: 'before-restart', host: hostname(), started: String(Number(started) - 1) });
    expect((await claimInstance(storage)).held).toBe(true);
  });

  it('taken over when left by this pid in an earlier run, by another host (a replaced container) or unreadable', async () => {
    for (const owner of [{ pid: process.pid, nonce: 'earlier-run', host: hostname() }, { pid: process.pid, nonce: 'x', host: 'old-container' }, 'not json']) {
      await storage.ensureDir();
      await writeFile(lockPath(), typeof owner === 'string' ? owner : JSON.stringify(owner));
      const claim = await claimInstance(storage);
      expect(claim.held, JSON.stringify(owner)).toBe(true);
      if (claim.held) await claim.release();
    }
  });

  it('release leaves a lock that someone else has since taken', async () => {
    const claim = await claimInstance(storage);
    await writeOwner({ pid: 1, nonce: 'someone-else', host: hostname() });
    if (claim.held) await claim.release();
    expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toMatchObject({ nonce: 'someone-else' });
  });
});

describe('processStartTime', () => {
  it('is the same for one process each time, and undefined for a gone one', async () => {
    const own = await processStartTime(process.pid);
    expect(await processStartTime(process.pid)).toBe(own);
    if (own !== undefined) expect(own).toMatch(/^\d+$/);
    expect(await processStartTime(await goneProcess())).toBeUndefined();
  });
});
