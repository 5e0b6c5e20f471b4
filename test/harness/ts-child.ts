// Child processes of the tests that run a TypeScript file of this repository (a crash test's
// writer, an orphan guard's parent, the import checker): the file and what it imports from the
// repository, bundled into one JavaScript file by esbuild once per test worker, packages left to
// node_modules, and run by plain Node. Loading TypeScript through tsx in every child cost about three
// times the CPU of the bundle (0.65 s against 0.2 s a child, about 24 children in the fast lane).
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

import { build } from 'esbuild';

import { REPO_ROOT } from './homebridge.js';

/** Inside the repository, so the bundles' imports of packages resolve to its node_modules. */
const OUT_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'lock-access-children');

const bundles = new Map<string, Promise<string>>();

/**
 * Node's arguments that run the TypeScript file `entry` (an absolute path, or one relative to the
 * repository) with `args` after it, as `node --import tsx entry args…` would.
 */
export async function tsChildArgs(entry: string, ...args: string[]): Promise<string[]> {
  const path = resolve(REPO_ROOT, entry);
  let bundle = bundles.get(path);
  if (bundle === undefined) {
    bundle = bundleOf(path);
    bundles.set(path, bundle);
    // A failed bundle is not kept: the next call tries again and reports its own error.
    bundle.catch(() => bundles.delete(path));
  }
  return [await bundle, ...args];
}

async function bundleOf(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]?.text ?? '';
  // A bundled module that finds files next to itself (import.meta.url) would look in the wrong
  // folder: only the entry's own use is allowed (it then reads its own path, which is right).
  const own = ((await readFile(entry, 'utf8')).match(/import\.meta/g) ?? []).length;
  if ((text.match(/import\.meta/g) ?? []).length > own) {
    throw new Error(`${entry} imports a module that reads import.meta: run that child with tsx (node --import tsx) instead`);
  }
  // Named by content: workers that bundle the same file write the same name, and a run after a
  // change writes a new one instead of replacing a file another run is starting.
  const name = `${basename(entry).replace(/\.ts$/, '')}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`;
  const target = join(OUT_DIR, name);
  await mkdir(OUT_DIR, { recursive: true });
  const temporary = `${target}.${String(process.pid)}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, target);
  return target;
}
