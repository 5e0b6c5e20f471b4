// One running plugin per storage folder: `lock-access/instance.lock` holds the pid of the process
// that runs it. A second LockAccess block on another child bridge shares the folder; the lock keeps
// it from fighting the first over the listener port and the single-use refresh token. A lock whose
// process is gone is taken over, so a crash or a killed child bridge never locks the plugin out.
import { randomUUID } from 'node:crypto';
import { link, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { readLockOwner } from '../util/file-lock.js';
import { processAlive, processStartTime } from '../util/process-alive.js';

export const INSTANCE_LOCK_FILE = 'instance.lock';

const ownerSchema = z.object({ pid: z.number(), nonce: z.string(), host: z.string(), started: z.string().optional() });
type Owner = z.infer<typeof ownerSchema>;

export type InstanceClaim =
  | { readonly held: true; release(): Promise<void> }
  | { readonly held: false; readonly pid: number };

/** Locks this process holds: a second block in the same process finds its own pid and is refused. */
const heldHere = new Set<string>();

const readOwner = (path: string): Promise<{ raw: string; owner: Owner | undefined } | undefined> => readLockOwner(path, ownerSchema);

/** Whether the owner still runs the plugin on this storage. */
async function ownerRuns(owner: Owner | undefined): Promise<boolean> {
  if (owner === undefined) return false;
  // Blocks that share a storage folder are child bridges of one Homebridge, on one machine: a lock
  // from another host was left by a container since replaced.
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return heldHere.has(owner.nonce);
  if (!processAlive(owner.pid)) return false;
  const started = owner.started === undefined ? undefined : await processStartTime(owner.pid);
  return started === undefined || started === owner.started;
}

/**
 * Takes the storage's instance lock, or says which process holds it. The file appears whole or not
 * at all (written aside, then hard-linked into place), so a reader never sees half an owner.
 */
export async function claimInstance(storage: Storage): Promise<InstanceClaim> {
  await storage.ensureDir();
  const path = storage.file(INSTANCE_LOCK_FILE);
  const nonce = randomUUID();
  const started = await processStartTime(process.pid);
  const owner: Owner = { pid: process.pid, nonce, host: hostname(), ...(started === undefined ? {} : { started }) };
  const aside = `${path}.${nonce}`;
  await writeFile(aside, JSON.stringify(owner), { mode: 0o600 });
  try {
    // Two tries: the second after a lock of a process that is gone was removed.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await place(aside, path, owner);
        heldHere.add(nonce);
        return { held: true, release: () => release(path, nonce) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = await readOwner(path);
      if (current === undefined) continue;
      if (await ownerRuns(current.owner)) return { held: false, pid: current.owner?.pid ?? 0 };
      // Re-read right before removing, so a lock another starter just took is left alone.
      const again = await readOwner(path);
      if (again?.raw === current.raw) await unlink(path).catch(() => undefined);
    }
    const last = await readOwner(path);
    return { held: false, pid: last?.owner?.pid ?? 0 };
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}

/** Hard-links the written file into place; where the file system has no hard links, creates it exclusively. */
async function place(aside: string, path: string, owner: Owner): Promise<void> {
  try {
    await link(aside, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
    await writeFile(path, JSON.stringify(owner), { flag: 'wx', mode: 0o600 });
  }
}

async function release(path: string, nonce: string): Promise<void> {
  heldHere.delete(nonce);
  const current = await readOwner(path).catch(() => undefined);
  if (current?.owner?.nonce === nonce) await unlink(path).catch(() => undefined);
}
