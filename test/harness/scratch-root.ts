// Where a test run's temporary files go (TMPDIR for the run, its workers and every process they
// start): a folder of its own on the RAM disk /dev/shm when the machine has one with room, else the
// system's temp folder as before. The plugin syncs what it writes (tokens, ledgers, the duplicate
// filter's journal, locks) and Homebridge writes its cache on every change: on a virtual machine's
// disk one sync takes about 6 ms, and the unit lane and the end-to-end files spent much of their time
// waiting on them. What the tests check of files (atomic renames, modes, locks, a process killed
// mid-write) holds the same on a RAM disk; a power cut is no test's subject.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

const RAM_DISK = '/dev/shm';
const PREFIX = 'lock-access-tests-';
/** Room the run may need there (recordings, an installed package, Chromium's own shared memory). */
const ROOM_BYTES = 2 * 1024 ** 3;

function ramDiskWithRoom(): boolean {
  try {
    const stats = statfsSync(RAM_DISK);
    // tmpfs's magic number: a /dev/shm that is a plain folder on disk gains nothing.
    return stats.type === 0x01021994 && stats.bavail * stats.bsize >= ROOM_BYTES;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders of earlier runs that were killed before they could remove theirs (they hold RAM). */
function sweepAbandoned(): void {
  for (const name of readdirSync(RAM_DISK)) {
    const pid = new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid !== undefined && !alive(Number(pid))) rmSync(join(RAM_DISK, name), { recursive: true, force: true });
  }
}

/**
 * Points TMPDIR at a new folder on the RAM disk for this process and its children, and removes it
 * when the process exits. Does nothing where there is no RAM disk with room, or when the run was
 * given a TMPDIR of its own.
 */
export function useRamDiskForScratch(): void {
  const given = process.env.TMPDIR;
  if ((given !== undefined && given !== '') || !ramDiskWithRoom()) return;
  let root: string;
  try {
    sweepAbandoned();
    root = mkdtempSync(join(RAM_DISK, `${PREFIX}${process.pid}-`));
  } catch {
    return;
  }
  // As /tmp is: every user may make files there (a test runs Homebridge under another uid).
  chmodSync(root, 0o1777);
  // Inherited by the workers and what they start; a config loaded again by them keeps this folder.
  process.env.TMPDIR = root;
  process.once('exit', () => {
    rmSync(root, { recursive: true, force: true });
  });
}
