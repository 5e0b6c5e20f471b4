// CPU time a process has used, from /proc/<pid>/stat (user + system), in milliseconds. Divided by
// the requests served it gives CPU per request, which does not depend on how fast the load
// generator is, unlike requests per second.
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}
