// Remembers one-shot callbacks (keys from dedupe-rule.ts) for 72 h, well over the service's 24 h
// retry window, so a retried or doubled delivery has one effect.
// Check-and-set is synchronous in memory (two identical requests at the same moment cannot both
// pass). On disk: dedupe.json holds the keys as of the last compaction (written atomically), and
// dedupe.journal the keys added since, one line each, appended by a debounced save and flushed on
// close. A save under a flood thus writes only its new keys; once most of the journal is keys that
// expired or were dropped, the next save compacts it into dedupe.json. A crash while appending can
// tear only the last line, which loading skips. Keys are kept as 16-byte digests (dedupe-file.ts,
// digest-table.ts): memory and files grow by a fixed few bytes a key, not by the key's length.
import { DEDUPE_TTL_MS } from '../settings.js';
import { type DedupeEntry, DEDUPE_FILE_VERSION, dedupeFileSchema, fileEntries, journalEntries, journalLine, keyDigest, keyEntry, liveInOrder } from './dedupe-file.js';
import { DigestTable } from './digest-table.js';
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
  /** The keys' digests oldest first (the TTL is fixed, so that is expiry order), in memory sized once for the bound. */
  private readonly table: DigestTable;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxKeys: number;
  private loaded = false;
  private readonly saver: QuietWriter;
  /** Entries set since the last save, for the journal. */
  private pending: DedupeEntry[] = [];
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
    this.table = new DigestTable(this.maxKeys);
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
    return this.table.size;
  }

  /** Whether any key an earlier version could have stored is held (such keys leave 72 h after an upgrade). */
  get holdsEarlierKeys(): boolean {
    return this.table.earlier > 0;
  }

  /**
   * Loads the persisted keys: the compacted file, then the journal. A damaged file is logged and
   * replaced (losing dedupe memory is better than refusing callbacks); one that could not be read
   * for a passing fault is read again at the next save.
   */
  async load(): Promise<void> {
    const entries = [...(await this.readFile(DEDUPE_FILE)), ...(await this.readFile(DEDUPE_JOURNAL))];
    for (const entry of liveInOrder(entries, this.now())) this.remember(entry);
    this.loaded = true;
  }

  /** One of the two files' entries; none when it is missing, damaged or (for now) unreadable. */
  private async readFile(name: string): Promise<DedupeEntry[]> {
    const { log } = this.options;
    try {
      return await this.entriesOf(name, false);
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

  /** One file's entries in this version's form; for the journal, notes its lines and torn end. */
  private async entriesOf(name: string, again: boolean): Promise<DedupeEntry[]> {
    const { storage } = this.options;
    if (name === DEDUPE_FILE) {
      const read = fileEntries(await storage.read(DEDUPE_FILE, dedupeFileSchema));
      // Keys of an earlier version: the next save writes them as digests.
      if (read.old) this.compactNext = true;
      return read.entries;
    }
    const journal = journalEntries((await storage.readText(DEDUPE_JOURNAL)) ?? '');
    // Read again, it holds the lines appended since the start too.
    this.journalLines = journal.entries.length;
    this.journalTorn = journal.endsTorn || (again && this.journalTorn);
    if (journal.old) this.compactNext = true;
    return journal.entries;
  }

  /** Reads the files a passing fault kept from being read, and takes in their keys. */
  private async readAgain(): Promise<void> {
    for (const name of [...this.unread]) {
      try {
        this.takeIn(await this.entriesOf(name, true));
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
    this.table.clear();
    for (const entry of all) this.remember(entry);
  }

  /** True when the key is new (and records it); false for a duplicate. Synchronous on purpose. */
  checkAndSet(key: string): boolean {
    if (!this.loaded) throw new DedupeNotReadyError();
    const now = this.now();
    this.expire(now);
    const digest = keyDigest(key);
    const expiresAt = this.table.expiry(digest);
    if (expiresAt !== undefined && expiresAt > now) return false;
    const entry = keyEntry(key, now + this.ttlMs, digest);
    this.remember(entry, digest);
    this.pending.push(entry);
    this.boundPending();
    this.saver.touch();
    return true;
  }

  has(key: string): boolean {
    const expiresAt = this.table.expiry(keyDigest(key));
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
    const entries = this.pending;
    this.pending = [];
    const { storage } = this.options;
    try {
      if (this.unread.size > 0) await this.readAgain();
      // A file not read yet is never replaced: only appended to.
      const mayCompact = this.unread.size === 0;
      if (mayCompact && (this.compactNext || this.journalLines + entries.length > 2 * Math.max(this.table.size, JOURNAL_FLOOR))) {
        this.compactNext = true;
        await storage.writeList(DEDUPE_FILE, { version: DEDUPE_FILE_VERSION }, 'entries', this.live());
        await storage.remove(DEDUPE_JOURNAL);
        this.journalLines = 0;
        this.compactNext = false;
        this.failing = false;
        this.droppedUnsaved = false;
        return;
      }
      if (entries.length === 0) return;
      // After a torn line, start on a line of its own so no key is glued onto it.
      await storage.append(DEDUPE_JOURNAL, `${this.journalTorn ? '\n' : ''}${entries.map(journalLine).join('')}`);
      this.journalTorn = false;
      this.journalLines += entries.length;
      this.failing = false;
      this.droppedUnsaved = false;
    } catch (error) {
      // Tried again with the next save; a half-written append may have left a torn line.
      this.pending = entries.concat(this.pending);
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
    if (this.pending.length <= 2 * this.maxKeys) return;
    this.pending = this.pending.filter(([digest, expiresAt]) => this.table.expiry(Buffer.from(digest, 'base64url')) === expiresAt);
    // A flood between two good saves lets go of the same keys, with nothing lost to say.
    if (!this.failing || this.droppedUnsaved) return;
    this.droppedUnsaved = true;
    this.options.log?.warn(`The duplicate filter still cannot be saved: of the keys not saved yet it keeps the newest ${this.maxKeys} and drops older ones; after a restart a retry of one of those older events could apply twice. Free disk space in Homebridge's storage folder.`);
  }

  /** Adds an entry as the newest, first dropping the oldest when the bound is reached. */
  private remember([digest, expiresAt, earlier]: DedupeEntry, bytes: Uint8Array = Buffer.from(digest, 'base64url')): void {
    // A key set again replaces its own entry and needs no room.
    if (this.table.expiry(bytes) === undefined) while (this.table.size >= this.maxKeys) this.table.dropOldest();
    this.table.add(bytes, expiresAt, earlier === 1);
  }

  /** The entries the file holds, oldest first. */
  private live(): DedupeEntry[] {
    return Array.from(this.table.entries(), ({ digest, expiresAt, earlier }): DedupeEntry => [Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('base64url'), expiresAt, earlier ? 1 : 0]);
  }

  /**
   * Drops expired keys from the oldest end. Nothing is written for them: loading skips expired
   * keys, and compaction leaves them out.
   */
  private expire(now: number): void {
    for (let at = this.table.oldestExpiry(); at !== undefined && at <= now; at = this.table.oldestExpiry()) this.table.dropOldest();
  }
}
