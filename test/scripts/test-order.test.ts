// The order of a test run (test/harness/longest-first.ts): the estimates that order a fresh clone's
// run name files that exist (a renamed or removed long file would otherwise quietly lose its place
// at the front), and the unit lanes' files come last and together, so vitest keeps their workers.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';

import { REPO_ROOT } from '../harness/homebridge.js';
import { LONG_FILES, LongestFirst } from '../harness/longest-first.js';

/** A run's files as the sequencer gets them, with the durations vitest recorded for them (seconds; none for a new file). */
async function order(files: { lane: string; file: string; seconds?: number; failed?: boolean }[]): Promise<string[]> {
  const recorded = new Map(files.map((f) => [`${f.lane}:${f.file}`, f]));
  const ctx = {
    config: { root: REPO_ROOT },
    cache: {
      getFileTestResults: (key: string) => {
        const found = recorded.get(key);
        return found?.seconds === undefined ? undefined : { duration: found.seconds * 1000, failed: found.failed ?? false };
      },
      getFileStats: () => undefined,
    },
  } as unknown as Vitest;
  const specs = files.map((f) => ({ moduleId: join(REPO_ROOT, f.file), project: { name: f.lane } }) as unknown as TestSpecification);
  const sorted = await new LongestFirst(ctx).sort(specs);
  return sorted.map((spec) => `${spec.project.name}:${spec.moduleId.slice(REPO_ROOT.length + 1)}`);
}

describe('the longest-first order of test files', () => {
  it('names only test files that exist', () => {
    const missing = Object.keys(LONG_FILES).filter((file) => !existsSync(join(REPO_ROOT, file)));
    expect(missing).toEqual([]);
  });

  it('the lanes with real processes longest first, browser and other files by turns, then the unit lanes\' files together (even a long unit file), a file that failed first of all', async () => {
    expect(await order([
      { lane: 'fast', file: 'test/a-unit.test.ts', seconds: 30 },
      { lane: 'slow', file: 'test/e2e/short.test.ts', seconds: 2 },
      { lane: 'fast-isolated', file: 'test/mocking.test.ts', seconds: 40 },
      { lane: 'browser', file: 'test/settings-ui/long-ui.test.ts', seconds: 60 },
      { lane: 'fast', file: 'test/b-unit.test.ts', seconds: 1 },
      { lane: 'slow', file: 'test/e2e/new.test.ts' },
      { lane: 'fast', file: 'test/broken-unit.test.ts', seconds: 1, failed: true },
      { lane: 'matter', file: 'test/e2e/matter.test.ts', seconds: 20 },
      { lane: 'browser', file: 'test/settings-ui/other-ui.test.ts', seconds: 50 },
      { lane: 'browser', file: 'test/settings-ui/short-ui.test.ts', seconds: 3 },
    ])).toEqual([
      'fast:test/broken-unit.test.ts',
      'browser:test/settings-ui/long-ui.test.ts',
      // Measured in an earlier run of this clone: the recorded 20 s.
      'matter:test/e2e/matter.test.ts',
      'browser:test/settings-ui/other-ui.test.ts',
      // New here: the slow lane's estimate (4 s).
      'slow:test/e2e/new.test.ts',
      'browser:test/settings-ui/short-ui.test.ts',
      'slow:test/e2e/short.test.ts',
      'fast:test/a-unit.test.ts',
      'fast:test/b-unit.test.ts',
      'fast-isolated:test/mocking.test.ts',
    ]);
  });
});
