// Cross-process mutual exclusion with a lock file created exclusively (O_EXCL), so the plugin and
// its settings UI server never run two refresh grants at once. A lock is stale when its owner
// process is gone (pid check on the same host) or when it is older than `staleMs` (a refresh takes
// seconds; a lock minutes old belongs to a frozen or killed process, or to a reused pid).
import { randomUUID } from 'node:crypto';
import { open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';

import { z } from 'zod/v3';

import { processAlive } from './process-alive.js';

const ownerSchema = z.object({ pid: z.number(), nonce: z.string(), createdAt: z.number(), host: z.string() });
type Owner = z.infer<typeof ownerSchema>;

export interface FileLockOptions {
  /** A lock older than this is taken over. Default 60 s. */
  staleMs?: number;
  /** How long to wait for a held lock before giving up. Default 45 s. */
  waitMs?: number;
  /** Pause between attempts. Default 50 ms. */
  pollMs?: number;
  now?: () => number;
}

export class FileLockTimeoutError extends Error {
  constructor(path: string, waitedMs: number) {
    super(`another process held ${path} for more than ${Math.round(waitedMs / 1000)} s`);
    this.name = 'FileLockTimeoutError';
  }
}

export interface HeldLock {
  release(): Promise<void>;
}

// Not unref()ed: someone awaits the lock, so the wait must keep the process alive.
const realSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

const readOwner = (path: string): Promise<{ raw: string; owner: Owner | undefined } | undefined> => readLockOwner(path, ownerSchema);

/**
 * A lock file's text and its owner as `schema` reads it; undefined when there is no file. A file
 * that is not the owner's JSON (a half-written one) has no owner, so the caller can judge it stale.
 */
export async function readLockOwner<T>(path: string, schema: z.ZodType<T>): Promise<{ raw: string; owner: T | undefined } | undefined> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return { raw, owner: parsed.success ? parsed.data : undefined };
  } catch {
    // A half-written lock file (the owner died between create and write) has no usable owner.
    return { raw, owner: undefined };
  }
}

/** Nonces of the locks this process holds right now: a lock with our pid but another nonce is stale (pid reuse after a restart, as in Docker). */
const heldHere = new Set<string>();

function isStale(owner: Owner | undefined, rawAgeMs: number | undefined, staleMs: number, now: number): boolean {
  if (owner === undefined) return rawAgeMs === undefined || rawAgeMs > 2000;
  if (now - owner.createdAt > staleMs) return true;
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return !heldHere.has(owner.nonce);
  return !processAlive(owner.pid);
}

/** Takes the lock at `path`, waiting while a live owner holds it. */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<HeldLock> {
  const staleMs = options.staleMs ?? 60_000;
  const waitMs = options.waitMs ?? 45_000;
  const pollMs = options.pollMs ?? 50;
  const now = options.now ?? Date.now;
  const nonce = randomUUID();
  let waited = 0;
  let firstUnreadableSeen: number | undefined;

  for (;;) {
    const owner: Owner = { pid: process.pid, nonce, createdAt: now(), host: hostname() };
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(owner));
        await handle.sync();
      } finally {
        await handle.close();
      }
      heldHere.add(nonce);
      return {
        release: async () => {
          heldHere.delete(nonce);
          const current = await readOwner(path).catch(() => undefined);
          // Only remove our own lock: after a stale takeover the file may belong to someone else.
          if (current?.owner?.nonce === nonce) await unlink(path).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }

    const current = await readOwner(path);
    if (current !== undefined) {
      if (current.owner === undefined) firstUnreadableSeen ??= waited;
      const unreadableAge = current.owner === undefined && firstUnreadableSeen !== undefined ? waited - firstUnreadableSeen : undefined;
      if (isStale(current.owner, unreadableAge, staleMs, now())) {
        // Re-read right before removing so a lock that someone else just took over is left alone.
        const again = await readOwner(path);
        if (again?.raw === current.raw) await unlink(path).catch(() => undefined);
        firstUnreadableSeen = undefined;
        continue;
      }
    }
    if (waited >= waitMs) throw new FileLockTimeoutError(path, waited);
    await realSleep(pollMs);
    waited += pollMs;
  }
}

/** Runs `fn` while holding the lock at `path`. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options?: FileLockOptions): Promise<T> {
  const lock = await acquireFileLock(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
