// Remembers one-shot callbacks (keys from dedupe-rule.ts) for 72 h, well over the service's 24 h
// retry window, so a retried or doubled delivery has one effect.
// Check-and-set is synchronous in memory (two identical requests at the same moment cannot both
// pass). On disk: dedupe.json holds the keys as of the last compaction (written atomically), and
// dedupe.journal the keys added since, one line each, appended by a debounced save and flushed on
// close. A save under a flood thus writes only its new keys; once most of the journal is keys that
// expired or were dropped, the next save compacts it into dedupe.json. A crash while appending can
// tear only the last line, which loading skips.
import { DEDUPE_TTL_MS } from '../settings.js';
import { type DedupeEntry, dedupeFileSchema, journalEntries, liveInOrder } from './dedupe-file.js';
import { mayBeEarlierKey } from './dedupe-rule.js';
import { StorageError, type Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import { QuietWriter } from '../util/quiet-writer.js';

export const DEDUPE_FILE = 'dedupe.json';
export const DEDUPE_JOURNAL = 'dedupe.journal';
/** The journal is compacted once it holds more than twice this many lines, or twice the live keys. */
const JOURNAL_FLOOR = 5_000;
export const DEFAULT_DEDUPE_MAX_KEYS = 50_000;
const DEFAULT_DEBOUNCE_MS = 2_000;

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
  /** Keys in `seen` of a form earlier versions stored (mayBeEarlierKey): none, and no callback looks for them. */
  private earlierForm = 0;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxKeys: number;
  private loaded = false;
  private readonly saver: QuietWriter;
  /** Keys set since the last save, for the journal, with their expiry times at the same index (flat, as above). */
  private pendingKeys: string[] = [];
  private pendingExpiries: number[] = [];
  /** Lines in the journal on disk. */
  private journalLines = 0;
  /** The next save rewrites dedupe.json and empties the journal (dedupe.json was damaged, or a save failed). */
  private compactNext = false;
  /** The journal ends in a torn line: the next append starts on a line of its own. */
  private journalTorn = false;
  /**
   * Files a passing fault (EIO, EMFILE) kept from being read at start: read again at each save, and
   * never replaced before they are, so a short disk fault costs no key.
   */
  private readonly unread = new Set<string>();
  /** Saves fail (said once); unsaved keys were dropped for the size bound (said once). Until a save succeeds. */
  private failing = false;
  private droppedUnsaved = false;

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
      // Once per fault: a full disk fails every save, every few seconds under a flood.
      onError: (error) => {
        if (!this.failing) this.options.log?.warn(`The duplicate filter could not be saved (${errorText(error, 'unknown error')}); it keeps working and tries again with the next callbacks.`);
        this.failing = true;
      },
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

  /** Whether any key an earlier version could have stored is held (such keys leave 72 h after an upgrade). */
  get holdsEarlierKeys(): boolean {
    return this.earlierForm > 0;
  }

  /**
   * Loads the persisted keys: the compacted file, then the journal. A damaged file is logged and
   * replaced (losing dedupe memory is better than refusing callbacks); one that could not be read
   * for a passing fault is read again at the next save.
   */
  async load(): Promise<void> {
    const entries = [...(await this.readFile(DEDUPE_FILE)), ...(await this.readFile(DEDUPE_JOURNAL))];
    for (const [key, expiresAt] of liveInOrder(entries, this.now())) this.remember(key, expiresAt);
    this.trim();
    this.pendingKeys = [];
    this.pendingExpiries = [];
    this.loaded = true;
  }

  /** One of the two files' entries; none when it is missing, damaged or (for now) unreadable. */
  private async readFile(name: string): Promise<DedupeEntry[]> {
    const { storage, log } = this.options;
    try {
      if (name === DEDUPE_FILE) return (await storage.read(DEDUPE_FILE, dedupeFileSchema))?.entries ?? [];
      const journal = journalEntries((await storage.readText(DEDUPE_JOURNAL)) ?? '');
      this.journalLines = journal.entries.length;
      this.journalTorn = journal.endsTorn;
      return journal.entries;
    } catch (error) {
      if (error instanceof StorageError && !error.damaged) {
        log?.warn(`The duplicate filter's ${name} could not be read (${errorText(error, 'unknown error')}); it is kept and read again at the next save.`);
        this.unread.add(name);
      } else {
        log?.warn(`The duplicate filter's ${name} could not be read and is replaced (${errorText(error, 'unknown error')}).`);
        this.compactNext = true;
      }
      return [];
    }
  }

  /** Reads the files a passing fault kept from being read, and takes in their keys. */
  private async readAgain(): Promise<void> {
    const { storage } = this.options;
    for (const name of [...this.unread]) {
      try {
        if (name === DEDUPE_FILE) {
          this.takeIn((await storage.read(DEDUPE_FILE, dedupeFileSchema))?.entries ?? []);
        } else {
          const journal = journalEntries((await storage.readText(DEDUPE_JOURNAL)) ?? '');
          // The lines appended since the start are in it too.
          this.journalLines = journal.entries.length;
          this.journalTorn ||= journal.endsTorn;
          this.takeIn(journal.entries);
        }
        this.unread.delete(name);
      } catch (error) {
        // Still a passing fault: kept for the next save. Damaged: replaced like at start.
        if (error instanceof StorageError && !error.damaged) continue;
        this.unread.delete(name);
        this.compactNext = true;
      }
    }
  }

  /** Adds keys read late to those in memory, keeping the oldest-first order expiry relies on. */
  private takeIn(entries: readonly DedupeEntry[]): void {
    const all = liveInOrder([...entries, ...this.live()], this.now());
    this.seen.clear();
    this.earlierForm = 0;
    this.keys = [];
    this.expiries = [];
    this.head = 0;
    for (const [key, expiresAt] of all) this.remember(key, expiresAt);
    this.trim();
  }

  /** True when the key is new (and records it); false for a duplicate. Synchronous on purpose. */
  checkAndSet(key: string): boolean {
    if (!this.loaded) throw new DedupeNotReadyError();
    const now = this.now();
    this.expire(now);
    const expiresAt = this.seen.get(key);
    if (expiresAt !== undefined && expiresAt > now) return false;
    this.remember(key, now + this.ttlMs);
    this.pendingKeys.push(key);
    this.pendingExpiries.push(now + this.ttlMs);
    this.trim();
    this.boundPending();
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
    const keys = this.pendingKeys;
    const expiries = this.pendingExpiries;
    this.pendingKeys = [];
    this.pendingExpiries = [];
    const { storage } = this.options;
    try {
      if (this.unread.size > 0) await this.readAgain();
      // A file not read yet is never replaced: only appended to.
      const mayCompact = this.unread.size === 0;
      if (mayCompact && (this.compactNext || this.journalLines + keys.length > 2 * Math.max(this.seen.size, JOURNAL_FLOOR))) {
        this.compactNext = true;
        await storage.write(DEDUPE_FILE, { version: 1, entries: this.live() }, { compact: true });
        await storage.remove(DEDUPE_JOURNAL);
        this.journalLines = 0;
        this.compactNext = false;
        this.failing = false;
        this.droppedUnsaved = false;
        return;
      }
      if (keys.length === 0) return;
      // After a torn line, start on a line of its own so no key is glued onto it.
      await storage.append(DEDUPE_JOURNAL, `${this.journalTorn ? '\n' : ''}${keys.map((key, i) => `${JSON.stringify([key, expiries[i]])}\n`).join('')}`);
      this.journalTorn = false;
      this.journalLines += keys.length;
      this.failing = false;
      this.droppedUnsaved = false;
    } catch (error) {
      // Tried again with the next save; a half-written append may have left a torn line.
      this.pendingKeys = keys.concat(this.pendingKeys);
      this.pendingExpiries = expiries.concat(this.pendingExpiries);
      this.journalTorn = true;
      throw error;
    }
  }

  /**
   * While saves keep failing (a full disk) the unsaved keys would grow with every callback: past
   * twice the size bound, those memory no longer holds (expired, dropped for the bound, set again
   * since) are let go, which leaves at most the newest maxKeys. Amortised: it runs once per maxKeys
   * new keys at most.
   */
  private boundPending(): void {
    if (this.pendingKeys.length <= 2 * this.maxKeys) return;
    const keys: string[] = [];
    const expiries: number[] = [];
    this.pendingKeys.forEach((key, i) => {
      const expiresAt = this.pendingExpiries[i] ?? 0;
      if (this.seen.get(key) !== expiresAt) return;
      keys.push(key);
      expiries.push(expiresAt);
    });
    this.pendingKeys = keys;
    this.pendingExpiries = expiries;
    // A flood between two good saves lets go of the same keys, with nothing lost to say.
    if (!this.failing || this.droppedUnsaved) return;
    this.droppedUnsaved = true;
    this.options.log?.warn(`The duplicate filter still cannot be saved: of the keys not saved yet it keeps the newest ${this.maxKeys} and drops older ones; after a restart a retry of one of those older events could apply twice. Free disk space in Homebridge's storage folder.`);
  }

  private remember(key: string, expiresAt: number): void {
    if (!this.seen.has(key) && mayBeEarlierKey(key)) this.earlierForm += 1;
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
    const key = this.keys[index] ?? '';
    if (this.seen.delete(key) && mayBeEarlierKey(key)) this.earlierForm -= 1;
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
