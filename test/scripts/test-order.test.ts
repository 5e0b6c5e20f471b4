// The estimates that order a fresh clone's test run (test/harness/longest-first.ts) name files that
// exist: a renamed or removed long file would otherwise quietly lose its place at the front.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../harness/homebridge.js';
import { LONG_FILES } from '../harness/longest-first.js';

describe('the longest-first order of test files', () => {
  it('names only test files that exist', () => {
    const missing = Object.keys(LONG_FILES).filter((file) => !existsSync(join(REPO_ROOT, file)));
    expect(missing).toEqual([]);
  });
});
