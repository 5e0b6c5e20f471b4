// Remembers delivered callbacks for 72 h so a retried or doubled delivery has one effect.
// Check-and-set is synchronous in memory (two identical requests at the same moment cannot both
// pass); the set is persisted to dedupe.json with debounced atomic writes and flushed on close.
import { createHash } from 'node:crypto';

import { z } from 'zod';

import { DEDUPE_TTL_MS } from '../settings.js';
import type { Storage } from '../storage.js';

export const DEDUPE_FILE = 'dedupe.json';
export const DEFAULT_DEDUPE_MAX_KEYS = 50_000;
const DEFAULT_DEBOUNCE_MS = 2_000;
const MAX_PLAIN_ID_LENGTH = 128;

const fileSchema = z.object({
  version: z.literal(1),
  // [key, expiresAt] pairs, oldest first.
  entries: z.array(z.tuple([z.string(), z.number()])),
});

/** Thrown by checkAndSet before the store has loaded: the receiver answers 503 so the sender retries. */
export class DedupeNotReadyError extends Error {
  constructor() {
    super('the duplicate filter is still loading');
    this.name = 'DedupeNotReadyError';
  }
}

/**
 * The dedupe key: the service's EventID when present (scoped by route, since the user hook and a
 * lock hook may both carry one event), else the SHA-256 of the exact raw body.
 */
export function dedupeKey(route: string, eventId: string | undefined, rawBody: Buffer): string {
  if (eventId !== undefined && eventId !== '') {
    const id = eventId.length <= MAX_PLAIN_ID_LENGTH ? eventId : createHash('sha256').update(eventId).digest('hex');
    return `${route}:id:${id}`;
  }
  return `${route}:sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}

export interface DedupeOptions {
  storage: Storage;
  now?: () => number;
  ttlMs?: number;
  maxKeys?: number;
  debounceMs?: number;
  log?: { warn(message: string): void };
}

export class DedupeStore {
  private readonly seen = new Map<string, number>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxKeys: number;
  private readonly debounceMs: number;
  private loaded = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(private readonly options: DedupeOptions) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? DEDUPE_TTL_MS;
    this.maxKeys = options.maxKeys ?? DEFAULT_DEDUPE_MAX_KEYS;
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  }

  /** Creates the store and loads dedupe.json. */
  static async open(options: DedupeOptions): Promise<DedupeStore> {
    const store = new DedupeStore(options);
    await store.load();
    return store;
  }

  get ready(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.seen.size;
  }

  /** Loads the persisted keys. An unreadable file is logged and replaced: losing dedupe memory is better than refusing callbacks. */
  async load(): Promise<void> {
    try {
      const data = await this.options.storage.read(DEDUPE_FILE, fileSchema);
      const now = this.now();
      for (const [key, expiresAt] of data?.entries ?? []) {
        if (expiresAt > now && !this.seen.has(key)) this.seen.set(key, expiresAt);
      }
      this.trim();
    } catch (error) {
      this.options.log?.warn(`The duplicate filter file could not be read and starts empty (${error instanceof Error ? error.message : 'unknown error'}).`);
    }
    this.loaded = true;
  }

  /** True when the key is new (and records it); false for a duplicate. Synchronous on purpose. */
  checkAndSet(key: string): boolean {
    if (!this.loaded) throw new DedupeNotReadyError();
    const now = this.now();
    this.expire(now);
    const expiresAt = this.seen.get(key);
    if (expiresAt !== undefined && expiresAt > now) return false;
    this.seen.delete(key);
    this.seen.set(key, now + this.ttlMs);
    this.trim();
    this.schedule();
    return true;
  }

  has(key: string): boolean {
    const expiresAt = this.seen.get(key);
    return expiresAt !== undefined && expiresAt > this.now();
  }

  /** Writes pending changes now. */
  async flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.dirty) return this.writing;
    this.dirty = false;
    const entries = [...this.seen.entries()];
    // Writes are chained so an older snapshot never lands after a newer one.
    this.writing = this.writing
      .then(() => this.options.storage.write(DEDUPE_FILE, { version: 1, entries }))
      .catch((error: unknown) => {
        this.dirty = true;
        this.options.log?.warn(`The duplicate filter could not be saved (${error instanceof Error ? error.message : 'unknown error'}).`);
      });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private schedule(): void {
    this.dirty = true;
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.debounceMs);
    this.timer.unref();
  }

  /** Drops expired keys from the oldest end (insertion order is expiry order while the TTL is fixed). */
  private expire(now: number): void {
    for (const [key, expiresAt] of this.seen) {
      if (expiresAt > now) break;
      this.seen.delete(key);
      this.dirty = true;
    }
  }

  private trim(): void {
    while (this.seen.size > this.maxKeys) {
      const oldest = this.seen.keys().next();
      if (oldest.done === true) break;
      this.seen.delete(oldest.value);
    }
  }
}
