// Homebridge's config.json as the settings page's server reads it. The Homebridge UI saves it by
// moving the old file to its backups and then writing the new one (truncate, then write), so a read
// that lands between the two finds no file or half of one: the page asks right after a save, so this
// is when it reads. A missing or unparsable file is read again for about a second before it counts.
import { readFile } from 'node:fs/promises';

export interface ConfigReadOptions {
  /** Reads in all (at least 1). */
  tries?: number;
  /** The wait between two reads. */
  pause?: () => Promise<void>;
}

const TRIES = 20;
const GAP_MS = 50;

const wait = () => new Promise<void>((resolve) => setTimeout(resolve, GAP_MS));

/** config.json parsed (unchecked); throws what the last read met (ENOENT, or a SyntaxError) when no read succeeds. */
export async function readHomebridgeConfig(path: string, options: ConfigReadOptions = {}): Promise<unknown> {
  const tries = Math.max(1, options.tries ?? TRIES);
  const pause = options.pause ?? wait;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as unknown;
    } catch (error) {
      // Only a save under way looks like this; a file that cannot be read for another reason (its
      // permissions) will not change in a second.
      const passing = error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (!passing || attempt >= tries) throw error;
    }
    await pause();
  }
}
