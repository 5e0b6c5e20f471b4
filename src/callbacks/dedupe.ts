// Remembers one-shot callbacks (keys from dedupe-rule.ts) for 72 h, well over the service's 24 h
// retry window, so a retried or doubled delivery has one effect.
// Check-and-set is synchronous in memory (two identical requests at the same moment cannot both
// pass). On disk: dedupe.json holds the keys as of the last compaction (written atomically), and
// dedupe.journal the keys added since, one line each, appended by a debounced save and flushed on
// close. A save under a flood thus writes only its new keys; once most of the journal is keys that
// expired or were dropped, the next save compacts it into dedupe.json. A crash while appending can
// tear only the last line, which loading skips.
import { z } from 'zod/v3';

import { DEDUPE_TTL_MS } from '../settings.js';
import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import { QuietWriter } from '../util/quiet-writer.js';

export const DEDUPE_FILE = 'dedupe.json';
export const DEDUPE_JOURNAL = 'dedupe.journal';
/** The journal is compacted once it holds more than twice this many lines, or twice the live keys. */
const JOURNAL_FLOOR = 5_000;
export const DEFAULT_DEDUPE_MAX_KEYS = 50_000;
const DEFAULT_DEBOUNCE_MS = 2_000;

const entrySchema = z.tuple([z.string(), z.number()]);
const fileSchema = z.object({
  version: z.literal(1),
  // [key, expiresAt] pairs, oldest first.
  entries: z.array(entrySchema),
});

type Entry = z.infer<typeof entrySchema>;

/** The whole lines of a journal; a line that does not parse (a torn last one) is left out. */
function journalEntries(text: string): { entries: Entry[]; torn: boolean } {
  const entries: Entry[] = [];
  let torn = text !== '' && !text.endsWith('\n');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      torn = true;
      continue;
    }
    const entry = entrySchema.safeParse(parsed);
    if (entry.success) entries.push(entry.data);
    else torn = true;
  }
  return { entries, torn };
}

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
  /** Keys set since the last save, for the journal. */
  private pending: Entry[] = [];
  /** Lines in the journal on disk. */
  private journalLines = 0;
  /** The next save rewrites dedupe.json and empties the journal (its tail was torn, or a compaction failed). */
  private compactNext = false;

  constructor(private readonly options: DedupeOptions) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? DEDUPE_TTL_MS;
    this.maxKeys = options.maxKeys ?? DEFAULT_DEDUPE_MAX_KEYS;
    const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.saver = new QuietWriter({
      write: () => this.save(),
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

  /**
   * Loads the persisted keys: the compacted file, then the journal. An unreadable file is logged and
   * replaced: losing dedupe memory is better than refusing callbacks.
   */
  async load(): Promise<void> {
    const { storage } = this.options;
    const entries: Entry[] = [];
    try {
      entries.push(...((await storage.read(DEDUPE_FILE, fileSchema))?.entries ?? []));
    } catch (error) {
      this.options.log?.warn(`The duplicate filter file could not be read and starts without it (${errorText(error, 'unknown error')}).`);
      this.compactNext = true;
    }
    try {
      const journal = journalEntries((await storage.readText(DEDUPE_JOURNAL)) ?? '');
      entries.push(...journal.entries);
      this.journalLines = journal.entries.length;
      // Appending after a torn line would glue the next key onto it: rewrite first.
      if (journal.torn) this.compactNext = true;
    } catch (error) {
      this.options.log?.warn(`The duplicate filter's journal could not be read and starts without it (${errorText(error, 'unknown error')}).`);
      this.compactNext = true;
    }
    const now = this.now();
    // Oldest first, as expiry takes them; a key in both files (a crash mid-compaction) counts once.
    entries.sort((a, b) => a[1] - b[1]);
    for (const [key, expiresAt] of entries) {
      if (expiresAt > now && !this.seen.has(key)) this.remember(key, expiresAt);
    }
    this.trim();
    this.pending = [];
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
    this.pending.push([key, now + this.ttlMs]);
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

  /** Appends the new keys to the journal, or compacts when most of the journal is dead. */
  private async save(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const { storage } = this.options;
    try {
      if (this.compactNext || this.journalLines + batch.length > 2 * Math.max(this.seen.size, JOURNAL_FLOOR)) {
        this.compactNext = true;
        await storage.write(DEDUPE_FILE, { version: 1, entries: this.live() }, { compact: true });
        await storage.remove(DEDUPE_JOURNAL);
        this.journalLines = 0;
        this.compactNext = false;
        return;
      }
      if (batch.length === 0) return;
      await storage.append(DEDUPE_JOURNAL, batch.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      this.journalLines += batch.length;
    } catch (error) {
      // Tried again with the next save; a half-written append is a torn line, so compact then.
      this.pending = batch.concat(this.pending);
      this.compactNext = true;
      throw error;
    }
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
      this.dropOldest();
    }
    this.compact();
  }

  private trim(): void {
    while (this.seen.size > this.maxKeys && this.head < this.keys.length) this.dropOldest();
    this.compact();
  }

  /**
   * Takes the oldest entry off; its key leaves the Map unless it was set again since. Nothing is
   * written for it: loading skips expired keys, and compaction leaves them out.
   */
  private dropOldest(): void {
    const index = this.head;
    this.head += 1;
    if (!this.current(index)) return;
    this.seen.delete(this.keys[index] ?? '');
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
