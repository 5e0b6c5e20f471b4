// Whether a process still runs on this machine, asked of the system without signalling it.
import { readFile } from 'node:fs/promises';

/** Is a process with this pid alive on this machine? EPERM means alive but not ours. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process started, as the system counts it (Linux: clock ticks since boot, from
 * /proc/<pid>/stat); undefined where the system does not say. A pid alive with another start time
 * is another process that got the number again (after a container restart, say).
 */
export async function processStartTime(pid: number): Promise<string | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The name in brackets may hold spaces and brackets: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
