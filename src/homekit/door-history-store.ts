// Door histories on disk: one small file per lock under <storagePath>/lock-access/
// (door-history-<hash of the lock id>.json, at most DOOR_HISTORY_SIZE entries each), read once at
// start-up and written atomically a second after a change, so Eve's history survives restarts.
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';

import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietTimer } from '../util/quiet-timer.js';

const FILE_PATTERN = /^door-history-[0-9a-f]{16}\.json$/;
const QUIET_MS = 1_000;
const MAX_DELAY_MS = 10_000;

const fileSchema = z.object({ lockId: z.string(), history: z.unknown() });

/** One lock's saved history: read at once (loaded at start-up), saved shortly after changes. */
export interface DoorHistoryFile {
  load(): unknown;
  save(history: unknown): void;
}

/** Where door histories are kept, one file a lock. */
export interface DoorHistorySource {
  forLock(lockId: string): DoorHistoryFile;
}

export function doorHistoryFileName(lockId: string): string {
  return `door-history-${createHash('sha256').update(lockId).digest('hex').slice(0, 16)}.json`;
}

export class DoorHistoryFiles implements DoorHistorySource {
  private readonly pending = new Map<string, unknown>();
  private readonly timer: QuietTimer;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly storage: Storage,
    private readonly loaded: Map<string, unknown>,
    private readonly log: Logger,
  ) {
    this.timer = new QuietTimer(() => void this.flush(), QUIET_MS, MAX_DELAY_MS);
  }

  /** Reads every saved history; an unreadable file is skipped with a warning (its door starts a new history). */
  static async open(storage: Storage, log: Logger): Promise<DoorHistoryFiles> {
    const loaded = new Map<string, unknown>();
    let names: string[] = [];
    try {
      names = (await readdir(storage.dir)).filter((name) => FILE_PATTERN.test(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`Door histories could not be listed (${errorText(error)}); they start anew.`);
    }
    for (const name of names) {
      try {
        const file = await storage.read(name, fileSchema);
        if (file) loaded.set(file.lockId, file.history);
      } catch (error) {
        log.warn(`A door history could not be read and starts anew (${errorText(error)}).`);
      }
    }
    return new DoorHistoryFiles(storage, loaded, log);
  }

  forLock(lockId: string): DoorHistoryFile {
    return {
      load: () => this.pending.get(lockId) ?? this.loaded.get(lockId),
      save: (history) => {
        this.pending.set(lockId, history);
        this.loaded.set(lockId, history);
        this.timer.touch();
      },
    };
  }

  /** Writes what changed (also on shutdown). */
  flush(): Promise<void> {
    this.timer.cancel();
    const batch = [...this.pending];
    this.pending.clear();
    this.writing = this.writing.then(async () => {
      for (const [lockId, history] of batch) {
        try {
          await this.storage.write(doorHistoryFileName(lockId), { lockId, history }, { compact: true });
        } catch (error) {
          this.log.warn(`The door history could not be saved (${errorText(error)}); it is tried again with the next door event.`);
        }
      }
    });
    return this.writing;
  }
}
