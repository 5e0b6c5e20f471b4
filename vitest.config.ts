import { configDefaults, defineConfig } from 'vitest/config';

/** End-to-end files with a Matter controller in the test process: matter.js keeps process-wide state. */
const MATTER_E2E = ['test/e2e/matter*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A shared 2-core machine: keep parallelism modest so real-process tests do not starve.
    maxWorkers: 2,
    unstubEnvs: true,
    // Projects inherit the options above (extends: true); each names its own files.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...MATTER_E2E] },
      },
      {
        extends: true,
        // Each file in a forked process of its own (never shared threads), with room for a slow
        // commissioning on a loaded machine: one Homebridge with Matter serves the whole file.
        test: { name: 'matter', include: MATTER_E2E, pool: 'forks', isolate: true, testTimeout: 60_000, hookTimeout: 180_000 },
      },
    ],
  },
});
