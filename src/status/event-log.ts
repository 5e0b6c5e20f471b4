// The event log the settings UI shows: the last events per device (`events.json`), each stored as
// its line's code and params, which the page words in its language, and the English `text`.
// Bounded per device, written atomically through Storage and debounced, so a burst of callbacks
// costs one write. It holds no secrets: words, ids, names, times, recording ids and still-image URLs.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';
import { eventLogEntrySchema, type EventLogEntry, type EventLogRecord } from './event-entry.js';
import { BoundedEntries } from './event-rings.js';

export { describeEvent } from '../model/event-words.js';

export const EVENT_LOG_FILE = 'events.json';
export const DEFAULT_EVENTS_PER_DEVICE = 50;
export const DEFAULT_EVENT_LOG_DEBOUNCE_MS = 1000;
/** While events keep coming, the file is still written this often. */
const MAX_WRITE_DELAY_MS = 10_000;

export const eventLogFileSchema = z.object({
  version: z.literal(1),
  /** Oldest first. */
  entries: z.array(eventLogEntrySchema),
});

export interface EventLogOptions {
  perDevice?: number;
  debounceMs?: number;
  log?: Pick<Logger, 'warn'>;
}

/** Reads the log for the UI: newest first; an absent or unreadable file is an empty log. */
export async function readEventLog(storage: Storage): Promise<EventLogEntry[]> {
  try {
    const file = await storage.read(EVENT_LOG_FILE, eventLogFileSchema);
    return file ? [...file.entries].reverse() : [];
  } catch {
    return [];
  }
}

export class EventLog {
  private readonly kept: BoundedEntries;
  private readonly saver: QuietWriter;

  private constructor(
    private readonly storage: Storage,
    entries: EventLogEntry[],
    private readonly options: EventLogOptions,
  ) {
    this.kept = new BoundedEntries(Math.max(1, options.perDevice ?? DEFAULT_EVENTS_PER_DEVICE), entries);
    this.saver = new QuietWriter({
      // Compact and a chunk at a time: up to 50 entries per device, written a second after a change while events flow.
      write: () => this.storage.writeList(EVENT_LOG_FILE, { version: 1 }, 'entries', this.kept.list()),
      quietMs: options.debounceMs ?? DEFAULT_EVENT_LOG_DEBOUNCE_MS,
      maxDelayMs: MAX_WRITE_DELAY_MS,
      onError: (error) => this.options.log?.warn(`The event log could not be saved (${errorText(error)}); it will be retried with the next event.`),
    });
  }

  /** Loads the existing log; a broken file starts a fresh log (and is replaced on the next write). */
  static async open(storage: Storage, options: EventLogOptions = {}): Promise<EventLog> {
    let entries: EventLogEntry[] = [];
    try {
      entries = (await storage.read(EVENT_LOG_FILE, eventLogFileSchema))?.entries ?? [];
    } catch (error) {
      options.log?.warn(`The event log could not be read and starts empty (${errorText(error)}).`);
    }
    return new EventLog(storage, entries, options);
  }

  record(record: EventLogRecord): void {
    this.kept.addRecord(record);
    this.saver.touch();
  }

  /** Newest first. */
  entries(): EventLogEntry[] {
    return this.kept.list().reverse();
  }

  /** Writes pending entries now (call on shutdown). */
  flush(): Promise<void> {
    return this.saver.flush();
  }
}
