// The plugin's version, for HomeKit's firmware revision, Matter's and the diagnostics file.
import { readFileSync } from 'node:fs';

import { fileAbove } from './file-above.js';

let cachedVersion: string | undefined;

/** The plugin's version from package.json, reduced to the x.y.z HomeKit accepts as a firmware revision. */
export function pluginVersion(): string {
  if (cachedVersion === undefined) {
    const raw: unknown = JSON.parse(readFileSync(fileAbove(import.meta.url, 'package.json'), 'utf8'));
    const version = typeof raw === 'object' && raw !== null && 'version' in raw && typeof raw.version === 'string' ? raw.version : '0.0.0';
    cachedVersion = /^\d+\.\d+\.\d+/.exec(version)?.[0] ?? '0.0.0';
  }
  return cachedVersion;
}
