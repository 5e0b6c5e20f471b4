// Temporary copies of writes that a crash (a power cut, a kill) cut short, in the plugin's folder
// and every account's: each is a partial copy of a file that may hold secrets; nothing reads them,
// so they only pile up. Removed at start once old enough that no write of this process or of the
// settings server (which writes in the same folders) can still be using them.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { Storage } from '../storage.js';
import { ACCOUNTS_FOLDER } from '../settings.js';

/** A write takes milliseconds; a temporary copy this old belongs to no write under way. */
export const LEFTOVER_AGE_MS = 10 * 60 * 1000;

/** Removes old temporary copies in `root` and its `accounts/<id>/` folders; the paths removed, relative to `root`. */
export async function sweepLeftoverTempFiles(root: Storage, now = Date.now()): Promise<string[]> {
  const removed = await root.removeLeftovers(LEFTOVER_AGE_MS, now);
  const accounts = new Storage(join(root.dir, ACCOUNTS_FOLDER));
  for (const id of await accounts.names()) {
    if (!(await stat(accounts.file(id)).catch(() => undefined))?.isDirectory()) continue;
    const names = await new Storage(join(accounts.dir, id)).removeLeftovers(LEFTOVER_AGE_MS, now);
    removed.push(...names.map((name) => join(ACCOUNTS_FOLDER, id, name)));
  }
  return removed;
}
