// Machine details recorded with every run, including the load at start and end (the machine is shared).
import { cpus, freemem, loadavg, platform, release, totalmem, type } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  node: string;
  os: string;
  loadAverage: [number, number, number];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  const [one = 0, five = 0, fifteen = 0] = loadavg();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${type()} ${release()} (${platform()})`,
    loadAverage: [round2(one), round2(five), round2(fifteen)],
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** CPU time other processes used over an interval, from /proc/stat (busy share of all cores, 0-1). */
export async function busyShare(ms: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const read = async () => {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { idle, total };
  };
  const a = await read();
  await new Promise((r) => setTimeout(r, ms));
  const b = await read();
  const total = b.total - a.total;
  return total > 0 ? round2(1 - (b.idle - a.idle) / total) : 0;
}
