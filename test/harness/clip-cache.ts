// Test clips made once, not once per file: ffmpeg makes the same clip from the same arguments, so
// the first file that asks for a clip makes it under node_modules/.cache/ (named by a hash of the
// ffmpeg and its arguments) and every later file, in any worker and in later runs, copies it from
// there. Each caller still gets a folder of its own to serve or change.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from './homebridge.js';

const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'lock-access-test-clips');

/**
 * The files ffmpeg writes into a folder with `args(folder)`, copied into `dir` (made when missing),
 * which is returned. Throws with ffmpeg's words, naming `what`, when ffmpeg fails.
 */
export function ffmpegOnce(ffmpeg: string, dir: string, args: (folder: string) => string[], what: string): string {
  const key = createHash('sha256').update(JSON.stringify([ffmpeg, args('<folder>')])).digest('hex').slice(0, 16);
  const kept = join(CACHE, key);
  if (!existsSync(kept)) {
    // Made beside its place and renamed into it: a worker that makes the same clip at the same time
    // loses the rename and uses the other's, and nobody reads a half-written clip.
    const making = `${kept}.${String(process.pid)}`;
    rmSync(making, { recursive: true, force: true });
    mkdirSync(making, { recursive: true });
    const made = spawnSync(ffmpeg, args(making), { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
    if (made.status !== 0) {
      rmSync(making, { recursive: true, force: true });
      throw new Error(`could not make ${what}: ${made.stderr.toString()}`);
    }
    try {
      renameSync(making, kept);
    } catch (error) {
      rmSync(making, { recursive: true, force: true });
      if (!existsSync(kept)) throw error;
    }
  }
  mkdirSync(dir, { recursive: true });
  cpSync(kept, dir, { recursive: true });
  return dir;
}
