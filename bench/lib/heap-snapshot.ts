// A V8 heap snapshot of a benchmarked process, when BENCH_HEAP_DIR is set (its NODE_OPTIONS then
// let SIGTTIN write one there; see rss.ts). Read them with bench/heap-summary.ts.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { HEAP_DIR } from './rss.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asks process `pid` for a heap snapshot and waits until it is written; its path, or undefined without BENCH_HEAP_DIR. */
export async function heapSnapshot(pid: number, label: string): Promise<string | undefined> {
  if (HEAP_DIR === undefined) return undefined;
  const dir = HEAP_DIR;
  const mine = async () => (await readdir(dir)).filter((n) => n.includes(`.${String(pid)}.`) && n.endsWith('.heapsnapshot'));
  // A process may write several: the new one is the file that was not there before.
  const before = new Set(await mine());
  process.kill(pid, 'SIGTTIN');
  for (let i = 0; i < 600; i += 1) {
    await sleep(500);
    const name = (await mine()).find((n) => !before.has(n));
    if (name === undefined) continue;
    // V8 makes the file first and writes it once the snapshot is built: done once its size holds for a second.
    let size = -1;
    for (;;) {
      const now = (await stat(join(dir, name))).size;
      if (now === size && now > 0) break;
      size = now;
      await sleep(1000);
    }
    process.stdout.write(`heap snapshot of ${label}: ${join(dir, name)}\n`);
    return join(dir, name);
  }
  throw new Error(`no heap snapshot of ${label} after 5 minutes`);
}
