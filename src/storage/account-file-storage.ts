// An extra account keeps what is its own in one file, `tokens.json` in its folder: its tokens and
// seed hash, and beside them its header secret and its registrations ledger, each under a key of
// its own. The parts that read and write those (the token store, the header secret, the ledger)
// are the same as the main account's, which keeps them in files of their own: this storage maps
// each of their file names onto its key of the one file.
import { Storage, StorageError } from '../storage.js';
import { type FileLockOptions, withFileLock } from '../util/file-lock.js';

import { TOKENS_FILE, TOKENS_LOCK_FILE } from './token-file.js';

type Whole = Record<string, unknown>;

export class AccountFileStorage extends Storage {
  private readonly keys: ReadonlySet<string>;

  /** `sections`: a file name the parts use, and the key of `tokens.json` that holds its content. */
  constructor(
    dir: string,
    private readonly sections: Readonly<Record<string, string>>,
    private readonly lockOptions: FileLockOptions = {},
  ) {
    super(dir);
    this.keys = new Set(Object.values(sections));
  }

  override async readText(name: string): Promise<string | undefined> {
    const key = this.sections[name];
    if (key === undefined && name !== TOKENS_FILE) return super.readText(name);
    const raw = await super.readText(TOKENS_FILE);
    if (raw === undefined) return undefined;
    const whole = parseWhole(raw);
    // A damaged file reads as damaged to the token store, which decides what to keep.
    if (whole === undefined) {
      if (key === undefined) return raw;
      throw new StorageError(`${this.file(TOKENS_FILE)} is not valid JSON`, { damaged: true });
    }
    if (key !== undefined) return whole[key] === undefined ? undefined : JSON.stringify(whole[key]);
    const tokens = this.tokensPart(whole);
    return Object.keys(tokens).length === 0 ? undefined : JSON.stringify(tokens);
  }

  /**
   * The token store writes `tokens.json` holding the file's lock already; the other parts take it
   * here, so no write of one part loses another's, in this process or the settings server's.
   */
  override async write(name: string, value: unknown, options: { compact?: boolean } = {}): Promise<void> {
    const key = this.sections[name];
    if (key === undefined && name !== TOKENS_FILE) return super.write(name, value, options);
    if (key === undefined) {
      const current = await this.currentWhole(false);
      return super.write(TOKENS_FILE, { ...(value as Whole), ...this.sectionsPart(current ?? {}) });
    }
    await this.locked(async () => {
      const current = (await this.currentWhole(true)) ?? {};
      await super.write(TOKENS_FILE, { ...current, [key]: value });
    });
  }

  override async remove(name: string): Promise<void> {
    const key = this.sections[name];
    if (key === undefined && name !== TOKENS_FILE) return super.remove(name);
    const rest = async (keep: (whole: Whole) => Whole): Promise<void> => {
      const current = await this.currentWhole(key !== undefined);
      const left = keep(current ?? {});
      if (Object.keys(left).length === 0) await super.remove(TOKENS_FILE);
      else await super.write(TOKENS_FILE, left);
    };
    if (key === undefined) {
      await rest((whole) => this.sectionsPart(whole));
      return;
    }
    await this.locked(() =>
      rest((whole) => {
        const { [key]: _gone, ...left } = whole;
        return left;
      }),
    );
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.ensureDir().then(() => withFileLock(this.file(TOKENS_LOCK_FILE), fn, this.lockOptions));
  }

  /** The file as an object; a damaged file is refused when `strict` (a part's write would wipe the tokens), else replaced. */
  private async currentWhole(strict: boolean): Promise<Whole | undefined> {
    const raw = await super.readText(TOKENS_FILE);
    if (raw === undefined) return undefined;
    const whole = parseWhole(raw);
    if (whole === undefined && strict) throw new StorageError(`${this.file(TOKENS_FILE)} is not valid JSON; it is left for the tokens to repair`, { damaged: true });
    return whole;
  }

  private tokensPart(whole: Whole): Whole {
    return Object.fromEntries(Object.entries(whole).filter(([key]) => !this.keys.has(key)));
  }

  private sectionsPart(whole: Whole): Whole {
    return Object.fromEntries(Object.entries(whole).filter(([key]) => this.keys.has(key)));
  }
}

function parseWhole(raw: string): Whole | undefined {
  try {
    const data: unknown = JSON.parse(raw);
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Whole) : undefined;
  } catch {
    return undefined;
  }
}
