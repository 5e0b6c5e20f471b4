// The order in which vitest hands out test files: the longest first, browser files and other slow
// files by turns, the unit lanes last. With two
// workers a run takes about its total time halved plus the file that started last; vitest's own
// order (lane by lane in name order, then by file size) started the slow lane last and left one long
// end-to-end file running alone at the end. Longest first, the long files overlap each other and
// the many short unit files fill in at the end. The unit lanes' files stay together there: vitest
// keeps a worker (and the modules it imported) for the next file only when that file is of the same
// lane, and unit files spread between the long ones made it start a new worker and import the
// plugin's sources again at almost every switch (46 switches in 231 files).
import { relative } from 'node:path';

import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds a file takes in a full run on the shared 2-core machine, for the files that take longest:
 * a fresh clone has no record of earlier runs. A file named here that no longer exists is reported
 * by test/scripts/test-order.test.ts.
 */
export const LONG_FILES: Readonly<Record<string, number>> = {
  'test/settings-ui/settings-ui.test.ts': 65,
  'test/settings-ui/i18n-ui.test.ts': 25,
  'test/e2e/package.test.ts': 40,
  'test/scripts/demo.test.ts': 40,
  'test/e2e/camera-faults.test.ts': 32,
  'test/e2e/camera-view.test.ts': 28,
  'test/e2e/matter.test.ts': 26,
  'test/e2e/camera-copy.test.ts': 27,
  'test/e2e/secure-video.test.ts': 25,
  'test/e2e/video-orphans.test.ts': 25,
  'test/e2e/child-bridge.test.ts': 21,
  'test/e2e/plugin-checks.test.ts': 18,
  'test/e2e/platform.test.ts': 15,
  'test/e2e/tunnel-late.test.ts': 14,
  'test/e2e/homebridge1.test.ts': 11,
  'test/e2e/guard.test.ts': 11,
  'test/e2e/several-accounts.test.ts': 18,
  'test/settings-ui/accounts-ui.test.ts': 12,
  'test/settings-ui/people-ui.test.ts': 9,
  'test/settings-ui/delivery-ui.test.ts': 9,
  'test/settings-ui/video-ui.test.ts': 8,
  'test/cloud/tokens/keep-alive.test.ts': 9,
  'test/settings-ui/matter-ui.test.ts': 7,
  'test/e2e/account-care.test.ts': 9,
  'test/e2e/homekit.test.ts': 8,
  'test/video/copied-stream-stream.test.ts': 8,
};

/** Seconds for a file not named above, by lane: a new end-to-end file still goes before the unit files. */
const BY_LANE: Readonly<Record<string, number>> = { matter: 25, browser: 8, slow: 4, 'fast-isolated': 1, fast: 0.3 };

/** Where a lane's files go: the lanes with real processes (0) first, then the unit lanes one after the other. */
const LANE_GROUP: Readonly<Record<string, number>> = { fast: 1, 'fast-isolated': 2 };

export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = new Map<TestSpecification, { failed: boolean; group: number; seconds: number; size: number }>();
    for (const spec of files) {
      const file = relative(root, spec.moduleId);
      const key = `${spec.project.name}:${file}`;
      // A file's last duration on this clone, when vitest has one; a file that failed goes first.
      const last = this.ctx.cache.getFileTestResults(key);
      const seconds = last ? last.duration / 1000 : (LONG_FILES[file] ?? BY_LANE[spec.project.name] ?? 1);
      weight.set(spec, { failed: last?.failed ?? false, group: LANE_GROUP[spec.project.name] ?? 0, seconds, size: this.ctx.cache.getFileStats(key)?.size ?? 0 });
    }
    const sorted = [...files].sort((a, b) => {
      const x = weight.get(a);
      const y = weight.get(b);
      if (!x || !y) return 0;
      if (x.failed !== y.failed) return x.failed ? -1 : 1;
      return x.group - y.group || y.seconds - x.seconds || y.size - x.size;
    });
    return Promise.resolve(alternateBrowserFiles(sorted, (spec) => weight.get(spec)?.group === 0 && weight.get(spec)?.failed !== true));
  }
}

/**
 * The files with real processes, browser and other by turns (each kind still longest first): a
 * browser file keeps Chromium busy on both cores, an end-to-end file mostly waits on Homebridge and
 * on video in real time. The three longest browser files run at once otherwise, and took 70 to 92 s
 * side by side against 25 to 35 s each alone.
 */
function alternateBrowserFiles(sorted: TestSpecification[], alternates: (spec: TestSpecification) => boolean): TestSpecification[] {
  const start = sorted.findIndex(alternates);
  if (start === -1) return sorted;
  let end = start;
  while (end < sorted.length && alternates(sorted[end] as TestSpecification)) end += 1;
  const part = sorted.slice(start, end);
  const browser = part.filter((spec) => spec.project.name === 'browser');
  const other = part.filter((spec) => spec.project.name !== 'browser');
  const turns: TestSpecification[] = [];
  for (let i = 0; i < Math.max(browser.length, other.length); i += 1) {
    const b = browser[i];
    const o = other[i];
    if (b !== undefined) turns.push(b);
    if (o !== undefined) turns.push(o);
  }
  return [...sorted.slice(0, start), ...turns, ...sorted.slice(end)];
}
