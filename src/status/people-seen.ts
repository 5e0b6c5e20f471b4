// The people the event log names (who operated, checked or renamed a lock, whose PIN or access
// changed), so the settings UI can offer each one an automation trigger without anyone typing a
// user id. Pure: the settings server reads the log and hands the entries over.
import type { EventLogEntry } from './event-entry.js';

export interface PersonSeen {
  userId: string;
  /** The newest name the log gives; absent when every entry names the id only. */
  name?: string;
  /** Epoch ms of the newest entry about them. */
  lastSeen: number;
  /** How many kept entries are about them. */
  events: number;
}

/** One row per user id, the most recently seen first. */
export function peopleSeen(entries: readonly EventLogEntry[]): PersonSeen[] {
  const byId = new Map<string, PersonSeen>();
  for (const entry of entries) {
    if (entry.userId === undefined || entry.userId === '') continue;
    const known = byId.get(entry.userId);
    if (!known) {
      byId.set(entry.userId, { userId: entry.userId, ...(entry.userName ? { name: entry.userName } : {}), lastSeen: entry.at, events: 1 });
      continue;
    }
    known.events += 1;
    const newer = entry.at > known.lastSeen;
    if (newer) known.lastSeen = entry.at;
    if (entry.userName && (newer || known.name === undefined)) known.name = entry.userName;
  }
  return [...byId.values()].sort((a, b) => b.lastSeen - a.lastSeen || a.userId.localeCompare(b.userId));
}
