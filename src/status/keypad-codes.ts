// Each lock's keypad codes as far as the PIN-managed callbacks tell them: whose code, what last
// happened to it and its schedule, newest first. Derived from the event log (pure); the codes'
// digits were never kept, so they cannot appear here.
import type { UiMessage } from '../util/ui-message.js';
import type { EventLogEntry } from './event-entry.js';

export interface KeypadCode {
  lockId: string;
  lockName: string;
  /** Whose code it is (the PIN user), by name when the callback gave one. */
  who: string;
  /** added, enabled, disabled, deleted or changed (or the service's own word for a state it adds). */
  state: string;
  /** Days and hours as a message the page words; an earlier version's entry has English words. */
  schedule?: string | UiMessage;
  at: number;
}

const STATE_WORDS: Record<string, KeypadCode['state']> = { load: 'added', enable: 'enabled', disable: 'disabled', delete: 'deleted', update: 'changed' };

/** `entries` newest first (as the event log is read); the latest word per lock and person wins. */
export function keypadCodes(entries: readonly EventLogEntry[]): KeypadCode[] {
  const seen = new Set<string>();
  const codes: KeypadCode[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'pinManaged' || entry.pinState === undefined) continue;
    const who = entry.userName ?? entry.userId ?? 'someone';
    const key = `${entry.deviceId}\u0000${entry.userId ?? who}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const code: KeypadCode = { lockId: entry.deviceId, lockName: entry.deviceName, who, state: STATE_WORDS[entry.pinState] ?? entry.pinState, at: entry.at };
    if (entry.schedule !== undefined) code.schedule = entry.schedule;
    codes.push(code);
  }
  return codes;
}
