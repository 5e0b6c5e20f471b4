// Files that ship beside the code (package.json, the bundled picture), found from the module that
// asks: the same code runs bundled as dist/index.js and as dist/settings-ui/server-parts.js, and
// from src/ in the tests, each at another depth below the package root.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `relative` in the nearest folder at or above the module at `moduleUrl` that has it. */
export function fileAbove(moduleUrl: string, relative: string): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`${relative} was not found in ${start} or any folder above it`);
  }
}
