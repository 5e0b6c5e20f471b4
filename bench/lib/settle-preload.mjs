/* global process */
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';

// BENCH_V8_FLAGS=<flags> sets V8 flags for a diagnosis that NODE_OPTIONS refuses, e.g. --trace-gc
// (with HB_LOG=1 to see its lines).
if (process.env.BENCH_V8_FLAGS) setFlagsFromString(process.env.BENCH_V8_FLAGS);
// Preloaded into benchmarked Homebridge processes (NODE_OPTIONS=--expose-gc --import=...), so RSS is
// read after a forced settle rather than mid-cycle:
// - SIGUSR2 runs a full garbage collection;
// - SIGWINCH runs the collection V8 makes under memory pressure ("last resort"), which also hands
//   back the pages V8 keeps for reuse, such as a young generation grown during start-up.
process.on('SIGUSR2', () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
});
process.on('SIGWINCH', () => {
  if (typeof globalThis.gc === 'function') globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
});
// - SIGTTOU prints the process's own view of its memory (JS heap used, external, array buffers,
//   V8's code space, its own malloc and the pages of its heaps that are resident), so the benchmark can tell the JS heap from the rest of the
//   resident set.
process.on('SIGTTOU', () => {
  const m = process.memoryUsage();
  const codeSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'code_space')?.space_used_size ?? 0;
  const { malloced_memory: malloced, total_physical_size: physical } = getHeapStatistics();
  process.stdout.write(`bench-memory ${JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, codeSpace, malloced, physical })}\n`);
});
// - BENCH_ALLOC_PROF=<dir>: V8's sampling heap profiler runs from the start, counting objects the
//   young and old collections took back too (every allocation, not only what survives); the first
//   SIGTTOU writes the profile there (alloc.<pid>.heapprofile, DevTools' format). For finding what a
//   start-up allocates; `npx tsx bench/alloc-summary.ts <file>` sums it by package and function.
if (process.env.BENCH_ALLOC_PROF) {
  const dir = process.env.BENCH_ALLOC_PROF;
  const { Session } = await import('node:inspector');
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  process.once('SIGTTOU', () => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error === null) writeFileSync(join(dir, `alloc.${process.pid}.heapprofile`), JSON.stringify(result.profile));
      session.disconnect();
    });
  });
}
