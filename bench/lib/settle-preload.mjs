/* global process */
// Preloaded into benchmarked Homebridge processes (NODE_OPTIONS=--expose-gc --import=...): SIGUSR2
// runs a full garbage collection, so RSS is read after a forced settle rather than mid-cycle.
process.on('SIGUSR2', () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
});
