import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

import { configDefaults, defineConfig } from 'vitest/config';

import { LongestFirst } from './test/harness/longest-first.js';
import { useRamDiskForScratch } from './test/harness/scratch-root.js';

// Before anything is started: the run's temporary files on a RAM disk (see the module).
useRamDiskForScratch();

/** End-to-end files with a Matter controller in the test process: matter.js keeps process-wide state. */
const MATTER_E2E = ['test/e2e/matter*.test.ts'];
/**
 * Tests that start a real Homebridge, ffmpeg, a browser, the demo, `npm pack` or the whole type
 * check and eslint (the gate's checks script on a project of its own, about 6 s of CPU): the full
 * gate runs them, the fast lane (`npm run test:fast`) leaves them out. The browser ones (BROWSER)
 * have a lane of their own.
 */
const SLOW = ['test/e2e/**/*.test.ts', 'test/video/**/*-stream.test.ts', 'test/**/*-ui.test.ts', 'test/sim/hls-browser.test.ts', 'test/scripts/demo.test.ts', 'test/sim/cli.test.ts', 'test/scripts/checks.test.ts'];

/** Tests that drive Chromium (with the Homebridge UI, the demo or the simulator's recording). */
const BROWSER = ['test/**/*-ui.test.ts', 'test/sim/hls-browser.test.ts', 'test/scripts/demo.test.ts'];

/**
 * Fast test files that replace a module (`vi.mock`): they need modules of their own, so they run in
 * the lane `fast-isolated`. Found by reading the files, so a new one goes there by itself.
 */
function filesThatMockModules(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.test.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    if (/\bvi\.(?:do)?[mM]ock\(/.test(readFileSync(path, 'utf8'))) found.push(relative(import.meta.dirname, path));
  }
  return found;
}
const MOCKING = filesThatMockModules(join(import.meta.dirname, 'test'));

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Three files at a time on a 2-core machine: an end-to-end or browser file spends most of its
    // time waiting on Homebridge, the Homebridge UI, Chromium, ffmpeg or the registry, so a third
    // file uses the CPU the other two leave. Four finished sooner in a fresh clone (231-248 s
    // against 256-268 s) but starved the real-time parts: the camera view's viewer, in the test
    // process, fell silent long enough to count as gone (two failed runs in seven). The unit lanes
    // alone run with three as well (`npm run test:fast`): the waits of a few of their files (child
    // processes, ffmpeg, real timeouts) leave CPU to a third; two took 55 s against 49-51 s, four 55 s.
    // A --maxWorkers on the command line does not reach the projects: each inherits this number.
    maxWorkers: 3,
    // The longest files first, across lanes, so no long file starts last and runs alone.
    sequence: { sequencer: LongestFirst },
    unstubEnvs: true,
    // Projects inherit the options above (extends: true); each names its own files.
    projects: [
      {
        extends: true,
        // Unit and property tests: pure code, local servers on port 0, child node processes at most.
        // The files of a worker share their modules (isolate: false): importing the plugin's sources
        // once per worker instead of once per file cuts the lane's CPU time by about two thirds. A
        // file must leave nothing behind (timers, listeners, files); the setup file puts real timers
        // back after each file.
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SLOW, ...MOCKING],
          isolate: false,
          setupFiles: ['test/harness/shared-modules-setup.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'fast-isolated', include: MOCKING.length > 0 ? MOCKING : ['no-such-file'], exclude: [...configDefaults.exclude, ...SLOW] },
      },
      {
        extends: true,
        // End-to-end tests: real Homebridge, ffmpeg, npm pack. Their files share modules in a worker
        // too (HAP-NodeJS, the harness, the simulator are imported once per worker, not once per
        // file); what they start runs in processes of its own.
        test: { name: 'slow', include: SLOW, exclude: [...configDefaults.exclude, ...MATTER_E2E, ...BROWSER], isolate: false, setupFiles: ['test/harness/shared-modules-setup.ts'] },
      },
      {
        extends: true,
        // One Chromium for the run, launched only when a file of this lane runs; modules shared as above.
        test: { name: 'browser', include: BROWSER, globalSetup: ['test/harness/browser-server.ts'], isolate: false, setupFiles: ['test/harness/shared-modules-setup.ts'] },
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
