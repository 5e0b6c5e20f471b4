// What the duplicate filter's files hold (dedupe.ts keeps them): dedupe.json, the entries as of the
// last compaction, and dedupe.journal, one entry a line appended since. An entry is
// [digest, expiresAt, earlier]: the first 16 bytes of the key's SHA-256 in base64url (22
// characters, whatever the key's length), and 1 when the key has a form earlier versions stored
// (dedupe-rule.ts mayBeEarlierKey), else 0. Files of version 1 (and journal lines of two elements)
// hold the keys themselves: they are hashed as they are read, so a callback seen before an upgrade
// is still a duplicate after it. Reading is pure: a torn line is left out, and the entries come out
// in the order expiry takes them.
import { hash } from 'node:crypto';

import { z } from 'zod/v3';

import { mayBeEarlierKey } from './dedupe-rule.js';
import { DIGEST_BYTES } from './digest-table.js';

export const DEDUPE_FILE_VERSION = 2;

const keyEntrySchema = z.tuple([z.string(), z.number()]);
const digestEntrySchema = z.tuple([z.string().regex(/^[A-Za-z0-9_-]{22}$/), z.number(), z.union([z.literal(0), z.literal(1)])]);
const lineSchema = z.union([digestEntrySchema, keyEntrySchema]);
export const dedupeFileSchema = z.union([
  z.object({ version: z.literal(2), entries: z.array(digestEntrySchema) }),
  // Before digests: [key, expiresAt] pairs.
  z.object({ version: z.literal(1), entries: z.array(keyEntrySchema) }),
]);

export type DedupeFile = z.infer<typeof dedupeFileSchema>;
/** [digest (base64url), expiresAt, earlier form]. */
export type DedupeEntry = [string, number, 0 | 1];

/** The 16 bytes a key is remembered by. */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer').subarray(0, DIGEST_BYTES);
}

/** A key as an entry of this version. */
export function keyEntry(key: string, expiresAt: number, digest = keyDigest(key)): DedupeEntry {
  return [digest.toString('base64url'), expiresAt, mayBeEarlierKey(key) ? 1 : 0];
}

/** An entry as read from either version; `old`: it held the key itself, so the file should be rewritten. */
function asEntry(entry: z.infer<typeof lineSchema>): { entry: DedupeEntry; old: boolean } {
  return entry.length === 3 ? { entry, old: false } : { entry: keyEntry(entry[0], entry[1]), old: true };
}

/** dedupe.json's entries in this version's form; `old`: it was written before digests. */
export function fileEntries(file: DedupeFile | undefined): { entries: DedupeEntry[]; old: boolean } {
  if (file === undefined) return { entries: [], old: false };
  if (file.version === 2) return { entries: file.entries, old: false };
  return { entries: file.entries.map(([key, expiresAt]) => keyEntry(key, expiresAt)), old: true };
}

/**
 * The whole lines of a journal; a line that does not parse (a torn one) is left out. `endsTorn`: the
 * text does not end with a line break, so the next append must start a line of its own. `old`: some
 * line held a key itself.
 */
export function journalEntries(text: string): { entries: DedupeEntry[]; endsTorn: boolean; old: boolean } {
  const entries: DedupeEntry[] = [];
  let old = false;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const result = lineSchema.safeParse(parsed);
    if (!result.success) continue;
    const read = asEntry(result.data);
    entries.push(read.entry);
    old ||= read.old;
  }
  return { entries, endsTorn: text !== '' && !text.endsWith('\n'), old };
}

/** One journal line. */
export const journalLine = (entry: DedupeEntry): string => `${JSON.stringify(entry)}\n`;

/**
 * The unexpired entries, oldest first as expiry takes them, each digest once at its last setting (a
 * key in both files after a crash mid-compaction, or set again after it was dropped).
 */
export function liveInOrder(entries: DedupeEntry[], now: number): DedupeEntry[] {
  const latest = new Map<string, DedupeEntry>();
  // Stable: entries of the same time keep the order they were written in.
  for (const entry of [...entries].sort((a, b) => a[1] - b[1])) {
    if (entry[1] <= now) continue;
    latest.delete(entry[0]);
    latest.set(entry[0], entry);
  }
  return [...latest.values()];
}
