// Files that ship beside the code (package.json, the bundled picture), found from the module that
// asks: the plugin runs as one bundled file (dist/index.js), its tests from src/, the settings
// server from dist/'s separate modules, and each sits at another depth below the package root.
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
