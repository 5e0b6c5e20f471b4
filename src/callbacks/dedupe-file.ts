// What the duplicate filter's files hold (dedupe.ts keeps them): dedupe.json, the [key, expiresAt]
// pairs as of the last compaction, and dedupe.journal, one pair a line appended since. Reading
// them is pure: a torn line is left out, and the entries come out in the order expiry takes them.
import { z } from 'zod/v3';

const entrySchema = z.tuple([z.string(), z.number()]);
export const dedupeFileSchema = z.object({
  version: z.literal(1),
  // [key, expiresAt] pairs, oldest first.
  entries: z.array(entrySchema),
});

export type DedupeEntry = z.infer<typeof entrySchema>;

/**
 * The whole lines of a journal; a line that does not parse (a torn one) is left out. `endsTorn`: the
 * text does not end with a line break, so the next append must start a line of its own.
 */
export function journalEntries(text: string): { entries: DedupeEntry[]; endsTorn: boolean } {
  const entries: DedupeEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const entry = entrySchema.safeParse(parsed);
    if (entry.success) entries.push(entry.data);
  }
  return { entries, endsTorn: text !== '' && !text.endsWith('\n') };
}

/**
 * The unexpired entries, oldest first as expiry takes them, each key once at its last setting (a
 * key in both files after a crash mid-compaction, or set again after it was dropped).
 */
export function liveInOrder(entries: DedupeEntry[], now: number): DedupeEntry[] {
  const latest = new Map<string, number>();
  // Stable: entries of the same time keep the order they were written in.
  for (const [key, expiresAt] of [...entries].sort((a, b) => a[1] - b[1])) {
    if (expiresAt <= now) continue;
    latest.delete(key);
    latest.set(key, expiresAt);
  }
  return [...latest.entries()];
}
