// The folder where a copied camera view keeps its clip's last frame while it plays. Its name carries
// the pid of the Homebridge that made it: a Homebridge killed outright cannot remove its own, so
// each start removes those whose process is gone (a live one may be another bridge on this machine).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const PREFIX = 'lock-access-view-';
const OWNED = new RegExp(`^${PREFIX}(\\d+)-`);

/** Whether a process runs (signal 0 tests without signalling; EPERM: it runs as someone else). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A new folder of this process in `base`. */
export function makeViewScratch(base: string): Promise<string> {
  return mkdtemp(join(base, `${PREFIX}${process.pid}-`));
}

/** Removes the folders in `base` left by processes that are gone; resolves with how many. Never rejects. */
export async function sweepViewScratch(base: string, runs: (pid: number) => boolean = processRuns): Promise<number> {
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
