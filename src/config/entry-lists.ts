// The config's lists whose entries stand alone (locks, doorbells, people): a mistake inside one
// entry disables that entry, not the plugin, and never widens what the user asked for.
import type { z } from 'zod/v3';

import { issueMessage } from '../util/field-messages.js';

export const ENTRY_LISTS = { locks: 'lock', doorbells: 'doorbell', people: 'person' } as const;
export type EntryList = keyof typeof ENTRY_LISTS;
export const isEntryList = (key: unknown): key is EntryList => typeof key === 'string' && key in ENTRY_LISTS;

export function pathOf(issuePath: readonly PropertyKey[]): string {
  return issuePath.map((part) => (typeof part === 'number' ? `[${part}]` : String(part))).join('.').replace(/\.\[/g, '[');
}

export function lookup(raw: unknown, path: string): unknown {
  let value: unknown = raw;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** "Lock 2 of locks (id "ABC", Front Door)": how a log line names an entry a user typed. */
function entryName(list: EntryList, index: number, entry: unknown, where: string): string {
  const kind = ENTRY_LISTS[list];
  const fields = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
  const id = list === 'people' ? fields.userId : fields.id;
  const known = [typeof id === 'string' && id.trim() !== '' ? `id "${id.trim()}"` : '', typeof fields.name === 'string' && fields.name.trim() !== '' ? fields.name.trim() : ''].filter(Boolean);
  return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} ${index + 1} of ${where}${list}${known.length > 0 ? ` (${known.join(', ')})` : ''}`;
}

/**
 * What becomes of a device entry refused for a mistake. A mistake never widens what the user asked
 * for: the entry stands in as hidden (or door sensor only, when it says so and not hidden), so the
 * device is not brought back by discovery, the cache of the last run or a membership callback.
 * Without a usable id nothing can be matched, and the entry is just left out.
 */
function refusedEntry(list: EntryList, entry: unknown): { outcome: string; standIn?: Record<string, unknown> } {
  const fields = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
  const id = typeof fields.id === 'string' ? fields.id.trim() : '';
  if (list === 'people' || id === '') return { outcome: 'is left out' };
  // Only an explicit false (or no value) shows a device: "false" in quotes is a mistake too.
  if (fields.hidden !== undefined && fields.hidden !== false) return { outcome: 'stays hidden', standIn: { id, hidden: true } };
  if (list === 'locks' && fields.doorSensorOnly === true) {
    return { outcome: 'shows only its door sensor', standIn: { id, ...(typeof fields.name === 'string' ? { name: fields.name } : {}), doorSensor: true, doorSensorOnly: true } };
  }
  return { outcome: 'is left out', standIn: { id, hidden: true } };
}

/** The problems of one refused parse, as sentences. */
export function problemSentences(issues: readonly z.ZodIssue[], skip: (where: string) => boolean): string[] {
  return issues
    .filter((issue) => !skip(pathOf(issue.path)))
    .map((issue) => {
      const where = pathOf(issue.path);
      const { text } = issueMessage(issue);
      return text.startsWith(where.split('[')[0] ?? '') || where === '' ? text : `${where}: ${text}`;
    });
}

/**
 * `record` with each entry that `issues` (paths relative to `record`) find a mistake in replaced by
 * its stand-in or left out, and one sentence per refused entry. `where` names the record in those
 * sentences (empty for the top level, `accounts[0].` inside an account).
 */
export function pruneEntries(record: Record<string, unknown>, issues: readonly z.ZodIssue[], where = ''): { pruned: Record<string, unknown>; disabled: string[] } {
  const pruned: Record<string, unknown> = { ...record };
  const disabled: string[] = [];
  for (const list of Object.keys(ENTRY_LISTS) as EntryList[]) {
    const inList = issues.filter((issue) => issue.path[0] === list);
    if (inList.length === 0) continue;
    const entries = record[list];
    if (!Array.isArray(entries)) {
      // An object may hold an entry that hides a device: without discovery none can come back.
      const mayHide = list !== 'people' && entries !== null && typeof entries === 'object';
      if (mayHide) pruned.discoverDevices = false;
      disabled.push(`${where}${list} must be a list of ${ENTRY_LISTS[list]} entries; it is ignored until you fix it in the plugin settings${mayHide ? ', and devices are not looked up at the service meanwhile, so a device hidden there cannot come back' : ''}.`);
      pruned[list] = [];
      continue;
    }
    const bad = new Map<number, string[]>();
    for (const issue of inList) {
      const index = typeof issue.path[1] === 'number' ? issue.path[1] : -1;
      const field = issue.path.slice(2).map(String).join('.');
      const { text: words } = issueMessage(issue);
      const text = field === '' || words.includes(field) ? words : `${field}: ${words}`;
      bad.set(index, [...(bad.get(index) ?? []), text]);
    }
    const standIns = new Map<number, Record<string, unknown>>();
    for (const [index, texts] of bad) {
      const refused = refusedEntry(list, entries[index]);
      if (refused.standIn) standIns.set(index, refused.standIn);
      disabled.push(`${entryName(list, index, entries[index], where)} ${refused.outcome} until you fix it in the plugin settings: ${texts.join('; ')}. Everything else runs.`);
    }
    pruned[list] = entries.flatMap((entry: unknown, index) => (!bad.has(index) ? [entry] : standIns.has(index) ? [standIns.get(index)] : []));
  }
  return { pruned, disabled };
}
