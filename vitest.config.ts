import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A shared 2-core machine: keep parallelism modest so real-process tests do not starve.
    maxWorkers: 2,
    unstubEnvs: true,
  },
});
