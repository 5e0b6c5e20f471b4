// Atomic JSON files under <storagePath>/lock-access/. Every file is written to a temp file, fsynced
// and renamed over the old one, so a crash leaves either the old or the new content, never a torn file.
// The one exception is `append`, for journals whose readers skip a torn last line.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, chmod, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import writeFileAtomic from 'write-file-atomic';
import type { z } from 'zod/v3';

import { STORAGE_FOLDER } from './settings.js';

/**
 * How much of a listed file is written at a time (characters). Below the C library's 128 KiB mmap
 * threshold on purpose: a file of a megabyte or more written as one string and one buffer every few
 * seconds (the event log under a stream of callbacks) left the process's memory fragmented and
 * growing, while chunks this size reuse the same small blocks.
 */
const LIST_CHUNK = 32 * 1024;

/**
 * The temporary copies a write makes before its rename: write() through write-file-atomic names one
 * `<name>.<uint32>`, writeList() `<name>.<12 hex>.tmp`. A crash in the middle of a write leaves one.
 */
const TEMPORARY_COPY = [/^([^.].*\.json)\.\d{1,10}$/, /^([^.].*)\.[0-9a-f]{12}\.tmp$/];

/** The file a temporary copy of a write belongs to (its name or path), or undefined for any other name. */
export function copyOf(name: string): string | undefined {
  for (const pattern of TEMPORARY_COPY) {
    const found = pattern.exec(basename(name))?.[1];
    if (found !== undefined) return join(dirname(name), found);
  }
  return undefined;
}

export class StorageError extends Error {
  /** The file was read but holds no valid content; false when it could not be read at all (which may pass). */
  readonly damaged: boolean;

  constructor(message: string, options?: { cause?: unknown; damaged?: boolean }) {
    super(message, options);
    this.name = 'StorageError';
    this.damaged = options?.damaged === true;
  }
}

export class Storage {
  private ready: Promise<void> | undefined;

  constructor(readonly dir: string) {}

  /** The plugin's folder under Homebridge's storage path (`api.user.storagePath()`). */
  static under(storagePath: string): Storage {
    return new Storage(join(storagePath, STORAGE_FOLDER));
  }

  file(name: string): string {
    if (name.includes('/') || name.includes('\\') || name.startsWith('.')) {
      throw new StorageError(`invalid storage file name "${name}"`);
    }
    return join(this.dir, name);
  }

  /** Creates the folder (mode 0700: it holds secrets) once. */
  ensureDir(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await chmod(this.dir, 0o700).catch(() => undefined);
    })();
    return this.ready;
  }

  /** Reads and validates a JSON file; undefined when it does not exist. */
  async read<T>(name: string, schema: z.ZodType<T, z.ZodTypeDef, unknown>): Promise<T | undefined> {
    const raw = await this.readText(name);
    if (raw === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch (error) {
      throw new StorageError(`${this.file(name)} is not valid JSON`, { cause: error, damaged: true });
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      throw new StorageError(`${this.file(name)} has an unexpected shape: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { damaged: true });
    }
    return parsed.data;
  }

  async readText(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.file(name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new StorageError(`cannot read ${this.file(name)}`, { cause: error });
    }
  }

  /**
   * Writes JSON atomically (temp file, fsync, rename) with mode 0600. Indented for people to read,
   * unless `compact`: large machine-only files are written in half the time without it.
   */
  async write(name: string, value: unknown, options: { compact?: boolean } = {}): Promise<void> {
    await this.ensureDir();
    const text = options.compact === true ? JSON.stringify(value) : JSON.stringify(value, null, 2);
    await writeFileAtomic(this.file(name), `${text}\n`, { mode: 0o600, fsync: true });
  }

  /**
   * Writes `{...fields, [key]: [...items]}` as compact JSON, atomically like write() (temp file,
   * fsync, rename, mode 0600), but a chunk at a time: for large machine-only files (the event log,
   * the duplicate filter's keys), which then never exist as one string or buffer in memory. The text
   * is the same as write() with `compact` gives. `key` must not be one of `fields`.
   */
  async writeList(name: string, fields: Readonly<Record<string, unknown>>, key: string, items: Iterable<unknown>): Promise<void> {
    await this.ensureDir();
    const target = this.file(name);
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      const head = JSON.stringify({ ...fields, [key]: [] });
      // The head up to and with the list's opening bracket.
      let chunk = head.slice(0, -2);
      let first = true;
      for (const item of items) {
        // An element with no JSON form (undefined, a function) is written as JSON.stringify writes it in an array.
        const text = JSON.stringify(item) as string | undefined;
        chunk += `${first ? '' : ','}${text ?? 'null'}`;
        first = false;
        if (chunk.length >= LIST_CHUNK) {
          await handle.write(chunk);
          chunk = '';
        }
      }
      await handle.write(`${chunk}]}\n`);
      await handle.sync();
      await handle.close();
      await rename(temporary, target);
    } catch (error) {
      await handle.close().catch(() => undefined);
      await rm(temporary, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Appends text to a file (created with mode 0600) and syncs it to disk. Not atomic: a crash can
   * leave the last line torn, so a file written this way must be read line by line, skipping what
   * does not parse.
   */
  async append(name: string, text: string): Promise<void> {
    await this.ensureDir();
    const handle = await open(this.file(name), 'a', 0o600);
    try {
      await handle.appendFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /** The names of the files in the folder (none before it exists). */
  async names(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new StorageError(`cannot list ${this.dir}`, { cause: error });
    }
  }

  async remove(name: string): Promise<void> {
    await rm(this.file(name), { force: true });
  }

  /**
   * Removes the temporary copies of writes that a crash cut short, once `minAgeMs` old (younger
   * ones may belong to a write under way, here or in the settings server); the names removed.
   */
  async removeLeftovers(minAgeMs: number, now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    for (const name of (await this.names()).filter((entry) => copyOf(entry) !== undefined)) {
      const info = await stat(this.file(name)).catch(() => undefined);
      if (!info?.isFile() || now - info.mtimeMs < minAgeMs) continue;
      await this.remove(name);
      removed.push(name);
    }
    return removed;
  }
}
