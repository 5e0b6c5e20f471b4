// The event log the settings UI shows: the last events per device in plain words (`events.json`).
// Bounded per device, written atomically through Storage and debounced, so a burst of callbacks
// costs one write. It holds no secrets: words, ids, names, times, recording ids and still-image URLs.
import { z } from 'zod';

import type { DeviceEvent } from './devices/events.js';
import { describeEvent } from './event-words.js';
import type { Storage } from './storage.js';

export { describeEvent } from './event-words.js';

export const EVENT_LOG_FILE = 'events.json';
export const DEFAULT_EVENTS_PER_DEVICE = 50;
export const DEFAULT_EVENT_LOG_DEBOUNCE_MS = 1000;

export const eventLogEntrySchema = z.object({
  deviceKind: z.enum(['lock', 'doorbell', 'account']),
  deviceId: z.string(),
  deviceName: z.string(),
  /** The DeviceEvent kind, e.g. "lockState" or "videoAvailable". */
  kind: z.string(),
  /** Epoch milliseconds. */
  at: z.number(),
  text: z.string(),
  /** Recording id of a doorbell press or recording, for "play recording". */
  dvrId: z.string().optional(),
  /** The still image of a motion event. */
  imageUrl: z.string().optional(),
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
}

export interface EventLogOptions {
  perDevice?: number;
  debounceMs?: number;
  log?: { warn(message: string): void };
}

/** Turns a record into the stored entry (pure). */
export function toEntry(record: EventLogRecord): EventLogEntry {
  const { event } = record;
  const entry: EventLogEntry = {
    deviceKind: record.deviceKind,
    deviceId: record.deviceId,
    deviceName: record.deviceName,
    kind: event.kind,
    at: record.at,
    text: describeEvent(event, record.deviceName),
  };
  if ((event.kind === 'doorbellPress' || event.kind === 'videoAvailable') && event.dvrId) entry.dvrId = event.dvrId;
  if (event.kind === 'motion' && event.imageUrl) entry.imageUrl = event.imageUrl;
  return entry;
}

/** Appends and keeps only the newest `perDevice` entries of that device (pure). */
export function appendBounded(entries: readonly EventLogEntry[], entry: EventLogEntry, perDevice: number): EventLogEntry[] {
  const next = [...entries, entry];
  const sameDevice = (e: EventLogEntry) => e.deviceKind === entry.deviceKind && e.deviceId === entry.deviceId;
  let excess = next.filter(sameDevice).length - perDevice;
  if (excess <= 0) return next;
  return next.filter((e) => {
    if (excess > 0 && sameDevice(e)) {
      excess -= 1;
      return false;
    }
    return true;
  });
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
  private list: EventLogEntry[];
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly perDevice: number;
  private readonly debounceMs: number;

  private constructor(
    private readonly storage: Storage,
    entries: EventLogEntry[],
    private readonly options: EventLogOptions,
  ) {
    this.list = entries;
    this.perDevice = Math.max(1, options.perDevice ?? DEFAULT_EVENTS_PER_DEVICE);
    this.debounceMs = options.debounceMs ?? DEFAULT_EVENT_LOG_DEBOUNCE_MS;
  }

  /** Loads the existing log; a broken file starts a fresh log (and is replaced on the next write). */
  static async open(storage: Storage, options: EventLogOptions = {}): Promise<EventLog> {
    let entries: EventLogEntry[] = [];
    try {
      entries = (await storage.read(EVENT_LOG_FILE, eventLogFileSchema))?.entries ?? [];
    } catch (error) {
      options.log?.warn(`The event log could not be read and starts empty (${error instanceof Error ? error.message : String(error)}).`);
    }
    return new EventLog(storage, entries, options);
  }

  record(record: EventLogRecord): void {
    this.list = appendBounded(this.list, toEntry(record), this.perDevice);
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.write();
    }, this.debounceMs);
    this.timer.unref();
  }

  /** Newest first. */
  entries(): EventLogEntry[] {
    return [...this.list].reverse();
  }

  /** Writes pending entries now (call on shutdown). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.write();
  }

  private write(): Promise<void> {
    // Chained so two writes never overlap and the last one always carries the newest list.
    this.writing = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      try {
        await this.storage.write(EVENT_LOG_FILE, { version: 1, entries: this.list });
      } catch (error) {
        this.dirty = true;
        this.options.log?.warn(`The event log could not be saved (${error instanceof Error ? error.message : String(error)}); it will be retried with the next event.`);
      }
    });
    return this.writing;
  }
}
