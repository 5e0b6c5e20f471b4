// Temporary files a write left behind when the process died in its middle (a power cut, a kill):
// write-file-atomic's `<name>.<number>` and writeList's `<name>.<hex>.tmp`, in the plugin's folder
// and every account's. Each is a partial copy of a file that may hold secrets; nothing reads them,
// so they only pile up. Removed at start once they are old enough that no write of this process or
// of the settings server (which writes in the same folders) can still be under way.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { Storage } from '../storage.js';

/** A write takes milliseconds; a temporary file this old belongs to no write under way. */
export const LEFTOVER_AGE_MS = 10 * 60 * 1000;

/** write-file-atomic names its file `<name>.<uint32>`; Storage.writeList `<name>.<12 hex>.tmp`. */
const TEMPORARY = [/^[^.].*\.json\.\d{1,10}$/, /^[^.].*\.[0-9a-f]{12}\.tmp$/];

export const isLeftoverName = (name: string): boolean => TEMPORARY.some((pattern) => pattern.test(name));

/** Removes old temporary files in `root` and its `accounts/<id>/` folders; the paths removed, relative to `root`. */
export async function sweepLeftoverTempFiles(root: Storage, now = Date.now()): Promise<string[]> {
  const folders = [''];
  for (const id of await namesIn(join(root.dir, 'accounts'))) folders.push(join('accounts', id));
  const removed: string[] = [];
  for (const folder of folders) {
    for (const name of (await namesIn(join(root.dir, folder))).filter(isLeftoverName)) {
      const path = join(root.dir, folder, name);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile() || now - info.mtimeMs < LEFTOVER_AGE_MS) continue;
      await rm(path, { force: true });
      removed.push(join(folder, name));
    }
  }
  return removed;
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}
