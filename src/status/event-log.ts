// The event log the settings UI shows: the last events per device (`events.json`), each stored as
// its line's code and params, which the page words in its language, and the English `text`.
// Bounded per device, written atomically through Storage and debounced, so a burst of callbacks
// costs one write. It holds no secrets: words, ids, names, times, recording ids and still-image URLs.
import { z } from 'zod/v3';

import type { DeviceEvent } from '../model/events.js';
import { eventLine, eventPerson, type OwnAction } from '../model/event-words.js';
import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';
import { MESSAGE_CODE, uiMessageSchema } from '../util/ui-message.js';

export { describeEvent } from '../model/event-words.js';

export const EVENT_LOG_FILE = 'events.json';
export const DEFAULT_EVENTS_PER_DEVICE = 50;
export const DEFAULT_EVENT_LOG_DEBOUNCE_MS = 1000;
/** While events keep coming, the file is still written this often. */
const MAX_WRITE_DELAY_MS = 10_000;

export const eventLogEntrySchema = z.object({
  deviceKind: z.enum(['lock', 'doorbell', 'account']),
  deviceId: z.string(),
  deviceName: z.string(),
  /** The DeviceEvent kind, e.g. "lockState" or "videoAvailable". */
  kind: z.string(),
  /** Epoch milliseconds. */
  at: z.number(),
  /**
   * The line as the page words it: a catalog code and its params (names, numbers, a schedule;
   * another line for `{line}`). Entries an earlier version wrote have only `text`, shown as it is.
   */
  how: z.string().regex(MESSAGE_CODE).optional(),
  params: z.record(z.string(), z.union([z.number(), z.string(), uiMessageSchema()])).optional(),
  /** The line in English (logs, diagnostics, and the page for an entry without `how`). */
  text: z.string(),
  /** Recording id of a doorbell press or recording, for "play recording". */
  dvrId: z.string().optional(),
  /** The still image of a motion event. */
  imageUrl: z.string().optional(),
  /** The person the event is about (the settings UI lists people and filters by them). */
  userId: z.string().optional(),
  userName: z.string().optional(),
  /**
   * A keypad code's change (load, enable, disable, delete, update) and its schedule as a message
   * (days and hours the page words); an earlier version's entry has it in English words. Never the code.
   */
  pinState: z.string().optional(),
  schedule: z.union([z.string(), uiMessageSchema()]).optional(),
});

export const eventLogFileSchema = z.object({
  version: z.literal(1),
  /** Oldest first. */
  entries: z.array(eventLogEntrySchema),
});

export type EventLogEntry = z.infer<typeof eventLogEntrySchema>;

export interface EventLogRecord {
  deviceKind: 'lock' | 'doorbell' | 'account';
  deviceId: string;
  deviceName: string;
  event: DeviceEvent;
  /** When it happened (epoch ms): the event's own time, or when it arrived. */
  at: number;
  /** The plugin's own doing (its auto-lock): worded so, and about no person. */
  own?: OwnAction;
}

export interface EventLogOptions {
  perDevice?: number;
  debounceMs?: number;
  log?: Pick<Logger, 'warn'>;
}

/** Turns a record into the stored entry (pure). */
export function toEntry(record: EventLogRecord): EventLogEntry {
  const { event } = record;
  const line = eventLine(event, record.deviceName, record.own);
  const entry: EventLogEntry = {
    deviceKind: record.deviceKind,
    deviceId: record.deviceId,
    deviceName: record.deviceName,
    kind: event.kind,
    at: record.at,
    how: line.code,
    params: line.params,
    text: line.text,
  };
  if ((event.kind === 'doorbellPress' || event.kind === 'videoAvailable') && event.dvrId) entry.dvrId = event.dvrId;
  if (event.kind === 'motion' && event.imageUrl) entry.imageUrl = event.imageUrl;
  if (event.kind === 'pinManaged' && !event.masterPin) {
    entry.pinState = event.state;
    if (event.schedule !== undefined) entry.schedule = event.schedule;
  }
  const person = eventPerson(event, record.own);
  if (person) entry.userId = person.userId;
  if (person?.name !== undefined) entry.userName = person.name;
  return entry;
}

/** One kept event: its entry, or the record it is made from once it is first needed. */
interface Kept {
  seq: number;
  entry: EventLogEntry | undefined;
  record: EventLogRecord | undefined;
}

/** One device's newest events: a ring that overwrites its oldest once full, so adding moves nothing. */
interface Ring {
  items: Kept[];
  /** Where the next one goes once the ring is full (its oldest). */
  next: number;
}

/**
 * The newest `perDevice` entries of every device, in arrival order (pure, no I/O). Each device has
 * its own ring, so adding is constant time however many devices there are: this runs for every
 * accepted callback. An event's words are made only when the list is written or read, once: under
 * a flood most events leave the list before that and never cost their words.
 */
export class BoundedEntries {
  private readonly byDevice = new Map<string, Ring>();
  private seq = 0;

  constructor(private readonly perDevice: number, entries: readonly EventLogEntry[] = []) {
    for (const entry of entries) this.keep(entry.deviceKind, entry.deviceId, entry, undefined);
  }

  add(entry: EventLogEntry): void {
    this.keep(entry.deviceKind, entry.deviceId, entry, undefined);
  }

  /** An event whose entry is made when first needed (toEntry). */
  addRecord(record: EventLogRecord): void {
    this.keep(record.deviceKind, record.deviceId, undefined, record);
  }

  /** Oldest first. */
  list(): EventLogEntry[] {
    const all: Kept[] = [];
    for (const ring of this.byDevice.values()) all.push(...ring.items);
    return all.sort((a, b) => a.seq - b.seq).map(entryOf);
  }

  private keep(deviceKind: EventLogEntry['deviceKind'], deviceId: string, entry: EventLogEntry | undefined, record: EventLogRecord | undefined): void {
    const key = `${deviceKind}:${deviceId}`;
    let ring = this.byDevice.get(key);
    if (!ring) {
      ring = { items: [], next: 0 };
      this.byDevice.set(key, ring);
    }
    if (ring.items.length < this.perDevice) {
      ring.items.push({ seq: this.seq++, entry, record });
      return;
    }
    // The oldest slot is reused rather than replaced: a full ring takes an event per callback,
    // and a new slot each time would outlive the young generation.
    const oldest = ring.items[ring.next];
    if (oldest === undefined) return;
    oldest.seq = this.seq++;
    oldest.entry = entry;
    oldest.record = record;
    ring.next = (ring.next + 1) % this.perDevice;
  }
}

/** A kept event's entry, made from its record the first time. */
function entryOf(kept: Kept): EventLogEntry {
  if (kept.entry === undefined && kept.record !== undefined) {
    kept.entry = toEntry(kept.record);
    kept.record = undefined;
  }
  // One of the two is always set (keep() is given either).
  return kept.entry as EventLogEntry;
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
