// Processes as Linux's /proc tells them, for the tests that assert no ffmpeg is left behind (and
// the bench): no vitest here, so the bench can import it too.
import { readFileSync } from 'node:fs';

/** Whether a process runs (signal 0 reaches it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process runs: a zombie (ended, not yet reaped by whoever adopted it) does not. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** A process's command line ('' once it has ended). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** A process's name as the kernel keeps it (the program it runs now), '' once it has ended. */
export function processName(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  } catch {
    return '';
  }
}
