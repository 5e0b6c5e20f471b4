// Whether a process still runs on this machine, asked of the system without signalling it.

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
