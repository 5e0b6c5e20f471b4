// Remembers one-shot callbacks (keys from dedupe-rule.ts) for 72 h, well over the service's 24 h
// retry window, so a retried or doubled delivery has one effect.
// Check-and-set is synchronous in memory (two identical requests at the same moment cannot both
// pass); the set is persisted to dedupe.json with debounced atomic writes and flushed on close.
import { z } from 'zod/v3';

import { DEDUPE_TTL_MS } from '../settings.js';
import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import { QuietWriter } from '../util/quiet-writer.js';

export const DEDUPE_FILE = 'dedupe.json';
export const DEFAULT_DEDUPE_MAX_KEYS = 50_000;
const DEFAULT_DEBOUNCE_MS = 2_000;

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

export interface DedupeOptions {
  storage: Storage;
  now?: () => number;
  ttlMs?: number;
  maxKeys?: number;
  debounceMs?: number;
  log?: { warn(message: string): void };
}

export class DedupeStore {
  /** key -> expiresAt, for lookups. */
  private readonly seen = new Map<string, number>();
  /**
   * The same keys oldest first (the TTL is fixed, so that is expiry order), read from `head`, with
   * their expiry times at the same index. Expiry and trimming take from here, not by iterating the
   * Map: V8 keeps deleted Map entries until it rehashes, so taking the Map's first key over and over
   * walks every deleted one and slowed each callback to a crawl once the store was full. Two flat
   * arrays rather than an object per key: every callback adds one, and each would outlive the young
   * generation.
   */
  private keys: string[] = [];
  private expiries: number[] = [];
  private head = 0;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxKeys: number;
  private loaded = false;
  private readonly saver: QuietWriter;

  constructor(private readonly options: DedupeOptions) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? DEDUPE_TTL_MS;
    this.maxKeys = options.maxKeys ?? DEFAULT_DEDUPE_MAX_KEYS;
    const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.saver = new QuietWriter({
      write: () => this.options.storage.write(DEDUPE_FILE, { version: 1, entries: this.live() }, { compact: true }),
      // A fixed delay after the first change, not a quiet spell: keys must reach the disk soon.
      quietMs: debounceMs,
      maxDelayMs: debounceMs,
      onError: (error) => this.options.log?.warn(`The duplicate filter could not be saved (${errorText(error, 'unknown error')}).`),
    });
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
        if (expiresAt > now && !this.seen.has(key)) this.remember(key, expiresAt);
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
    this.remember(key, now + this.ttlMs);
    this.trim();
    this.saver.touch();
    return true;
  }

  has(key: string): boolean {
    const expiresAt = this.seen.get(key);
    return expiresAt !== undefined && expiresAt > this.now();
  }

  /** Writes pending changes now. */
  flush(): Promise<void> {
    return this.saver.flush();
  }

  async close(): Promise<void> {
    await this.saver.close();
  }

  private remember(key: string, expiresAt: number): void {
    this.seen.set(key, expiresAt);
    this.keys.push(key);
    this.expiries.push(expiresAt);
  }

  /** The entry at `index` still stands for its key (a key set again later has a newer entry). */
  private current(index: number): boolean {
    const key = this.keys[index];
    return key !== undefined && this.seen.get(key) === this.expiries[index];
  }

  /** The [key, expiresAt] pairs the file holds, oldest first. */
  private live(): [string, number][] {
    const pairs: [string, number][] = [];
    for (let i = this.head; i < this.keys.length; i += 1) {
      if (this.current(i)) pairs.push([this.keys[i] ?? '', this.expiries[i] ?? 0]);
    }
    return pairs;
  }

  /** Drops expired keys from the oldest end. */
  private expire(now: number): void {
    while (this.head < this.keys.length && (this.expiries[this.head] ?? 0) <= now) {
      this.dropOldest(true);
    }
    this.compact();
  }

  private trim(): void {
    while (this.seen.size > this.maxKeys && this.head < this.keys.length) this.dropOldest(false);
    this.compact();
  }

  /** Takes the oldest entry off; its key leaves the Map unless it was set again since. */
  private dropOldest(markDirty: boolean): void {
    const index = this.head;
    this.head += 1;
    if (!this.current(index)) return;
    this.seen.delete(this.keys[index] ?? '');
    if (markDirty) this.saver.markDirty();
  }

  /** Drops the consumed front of the arrays once it is most of them. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.keys.length) {
      this.keys = this.keys.slice(this.head);
      this.expiries = this.expiries.slice(this.head);
      this.head = 0;
    }
  }
}
