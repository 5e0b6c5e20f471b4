/* global process */
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
// - SIGTTOU prints the process's own view of its memory (JS heap used, external, array buffers), so
//   the benchmark can tell the JS heap from the rest of the resident set.
process.on('SIGTTOU', () => {
  const m = process.memoryUsage();
  process.stdout.write(`bench-memory ${JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers })}\n`);
});
