// The ledger (webhooks.json): what this plugin has registered with the service, or is about to.
// An entry is written with state "registering" / "deleting" before the call goes out, so a crash
// in the middle of a reconcile leaves entries that the next start treats as unconfirmed and sends
// again (registration is idempotent, and a delete answered 404 counts as done).
import { z } from 'zod/v3';

import type { Storage } from '../../storage.js';
import { byCodeUnit } from '../../util/code-order.js';
import { errorText } from '../../util/error-text.js';
import { uiMessageSchema } from '../../util/ui-message.js';

export const LEDGER_FILE = 'webhooks.json';

export const hookKindSchema = z.enum(['lock', 'doorbell', 'user']);
export type HookKind = z.infer<typeof hookKindSchema>;

export const ledgerEntrySchema = z.object({
  kind: hookKindSchema,
  /** Device id; empty for the user registration. */
  id: z.string(),
  clientId: z.string(),
  url: z.string(),
  types: z.array(z.string()),
  tokenGeneration: z.number().int(),
  /** One-way fingerprint of the token sent (tokenFingerprint), never the token itself. */
  tokenFingerprint: z.string(),
  /**
   * registering: a POST was (maybe) sent and not confirmed; registered: confirmed by the service;
   * failed: the last POST failed; deleting: a DELETE was (maybe) sent or failed.
   */
  state: z.enum(['registering', 'registered', 'failed', 'deleting']),
  lastSuccessAt: z.number().optional(),
  lastAttemptAt: z.number().optional(),
  lastError: z.string().optional(),
  /** Why the last attempt failed, as a message for the settings page (lastError is for the log). */
  lastReason: uiMessageSchema().optional(),
});
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

const ledgerFileSchema = z.object({
  version: z.literal(1),
  entries: z.array(ledgerEntrySchema),
});

/** The ledger key of a registration scope: `lock:ID`, `doorbell:ID` or `user`. */
export function scopeKey(kind: HookKind, id: string): string {
  return kind === 'user' ? 'user' : `${kind}:${id}`;
}

export class RegistrationLedger {
  private readonly entries = new Map<string, LedgerEntry>();
  private writing: Promise<void> | undefined;
  private pendingWrite: Promise<void> | undefined;

  private constructor(private readonly storage: Storage) {}

  /**
   * Loads the ledger. A damaged file is reported through `onDamaged` and treated as empty: every
   * wanted registration is then sent again, which is safe because registration is idempotent.
   */
  static async load(storage: Storage, onDamaged: (reason: string) => void): Promise<RegistrationLedger> {
    const ledger = new RegistrationLedger(storage);
    try {
      const file = await storage.read(LEDGER_FILE, ledgerFileSchema);
      for (const entry of file?.entries ?? []) ledger.entries.set(scopeKey(entry.kind, entry.id), entry);
    } catch (error) {
      onDamaged(errorText(error));
    }
    return ledger;
  }

  all(): LedgerEntry[] {
    return [...this.entries.values()];
  }

  get(key: string): LedgerEntry | undefined {
    return this.entries.get(key);
  }

  set(entry: LedgerEntry): void {
    this.entries.set(scopeKey(entry.kind, entry.id), entry);
  }

  /** Changes fields of an existing entry; a no-op when the entry is gone (e.g. removed by unlink). */
  update(key: string, change: Partial<LedgerEntry>): void {
    const entry = this.entries.get(key);
    if (entry) this.entries.set(key, { ...entry, ...change });
  }

  remove(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Persists the current entries. Calls made while a write is in progress share one follow-up
   * write, so a burst of 100 results costs two writes, and each caller's change is on disk when
   * its promise resolves.
   */
  flush(): Promise<void> {
    if (!this.writing) {
      this.writing = this.writeNow().finally(() => {
        this.writing = undefined;
      });
      return this.writing;
    }
    this.pendingWrite ??= this.writing
      .catch(() => undefined)
      .then(() => {
        this.pendingWrite = undefined;
        return this.flush();
      });
    return this.pendingWrite;
  }

  /** Deletes the file (after unlink) once pending writes are done. */
  async erase(): Promise<void> {
    this.entries.clear();
    await this.pendingWrite?.catch(() => undefined);
    await this.writing?.catch(() => undefined);
    await this.storage.remove(LEDGER_FILE);
  }

  private async writeNow(): Promise<void> {
    const entries = [...this.entries.values()].sort((a, b) => byCodeUnit(scopeKey(a.kind, a.id), scopeKey(b.kind, b.id)));
    await this.storage.write(LEDGER_FILE, { version: 1, entries });
  }
}
