// The real ffmpeg the video tests run: the static build shipped inside the devDependency
// @ffmpeg-installer/linux-x64, so `npm install && npm test` has one on a fresh machine. A test
// that needs it fails (never skips) when it is missing.
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { Logger } from '../../src/util/logger.js';

export const FFMPEG = fileURLToPath(new URL('../../node_modules/@ffmpeg-installer/linux-x64/ffmpeg', import.meta.url));

/** The path of the test ffmpeg; throws (the test fails) when the devDependency did not bring it. */
export function testFfmpeg(): string {
  try {
    accessSync(FFMPEG, constants.X_OK);
  } catch {
    throw new Error('the video tests need the static ffmpeg of the devDependency @ffmpeg-installer/linux-x64 (linux-x64): run npm install');
  }
  return FFMPEG;
}

/** A logger that keeps every line, by level, for assertions. */
export function keptLog(): Logger & { lines: { level: string; text: string }[]; all(): string } {
  const lines: { level: string; text: string }[] = [];
  const at = (level: string) => (text: string) => {
    lines.push({ level, text });
  };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), all: () => lines.map((line) => `${line.level}: ${line.text}`).join('\n') };
}

/** The media access of a video room whose test fetches no recording. */
export const noMedia = { fetch: () => Promise.reject(new Error('no recording is fetched in this test')), httpAllowed: true };
