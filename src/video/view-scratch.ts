// The folder where a copied camera view keeps its clip's last frame while it plays. Its name carries
// the pid of the Homebridge that made it: a Homebridge killed outright cannot remove its own, so
// each start removes those whose process is gone (a live one may be another bridge on this machine).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { processAlive } from '../util/process-alive.js';

const PREFIX = 'lock-access-view-';
const OWNED = new RegExp(`^${PREFIX}(\\d+)-`);

/** A new folder of this process in `base`. */
export function makeViewScratch(base: string): Promise<string> {
  return mkdtemp(join(base, `${PREFIX}${process.pid}-`));
}

/** Removes the folders in `base` left by processes that are gone; resolves with how many. Never rejects. */
export async function sweepViewScratch(base: string, runs: (pid: number) => boolean = processAlive): Promise<number> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return 0;
  }
  const left = names.filter((name) => {
    const pid = OWNED.exec(name)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !runs(Number(pid));
  });
  const removed = await Promise.all(left.map((name) => rm(join(base, name), { recursive: true, force: true }).then(() => true, () => false)));
  return removed.filter(Boolean).length;
}
