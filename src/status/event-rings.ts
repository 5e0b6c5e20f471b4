// The newest events of every device, held for the event log between its writes. Held compactly:
// it is full for as long as Homebridge runs (50 per device, thousands in all), so every byte an
// entry keeps is kept that many times. The device's kind and id live once in its ring, and the
// English sentence is made again from the line's code and params when the list is read.
import { eventMessage, isEventCode, type EventCode } from '../model/event-messages.js';
import { NO_PARAMS } from '../util/ui-message.js';
import { toEntry, type EventLogEntry, type EventLogRecord } from './event-entry.js';

/** What a ring keeps of an entry: all but its device and, for a line the catalog words, its sentence. */
type Stored = Omit<EventLogEntry, 'deviceKind' | 'deviceId' | 'text'> & ({ text: string } | { text?: undefined; how: EventCode });

/** One kept event: its stored entry, or the record it is made from once it is first needed. */
interface Kept {
  seq: number;
  stored: Stored | undefined;
  record: EventLogRecord | undefined;
}

/** One device's newest events: a ring that overwrites its oldest once full, so adding moves nothing. */
interface Ring {
  deviceKind: EventLogEntry['deviceKind'];
  deviceId: string;
  items: Kept[];
  /** Where the next one goes once the ring is full (its oldest). */
  next: number;
}

/**
 * The newest `perDevice` entries of every device, in arrival order (pure, no I/O). Each device has
 * its own ring, so adding is constant time however many devices there are: this runs for every
 * accepted callback. An event's words are made only when the list is written or read: under a
 * flood most events leave the list before that and never cost their words.
 */
export class BoundedEntries {
  private readonly byKind = new Map<EventLogEntry['deviceKind'], Map<string, Ring>>();
  private seq = 0;

  constructor(private readonly perDevice: number, entries: readonly EventLogEntry[] = []) {
    for (const entry of entries) this.add(entry);
  }

  add(entry: EventLogEntry): void {
    this.keep(entry.deviceKind, entry.deviceId, stored(entry), undefined);
  }

  /** An event whose entry is made when first needed (toEntry). */
  addRecord(record: EventLogRecord): void {
    this.keep(record.deviceKind, record.deviceId, undefined, record);
  }

  /** Oldest first; each entry a new object, made from what is kept. */
  list(): EventLogEntry[] {
    const all: { seq: number; ring: Ring; kept: Kept }[] = [];
    for (const rings of this.byKind.values()) {
      for (const ring of rings.values()) for (const kept of ring.items) all.push({ seq: kept.seq, ring, kept });
    }
    return all.sort((a, b) => a.seq - b.seq).map(({ ring, kept }) => entryOf(ring, kept));
  }

  private keep(deviceKind: EventLogEntry['deviceKind'], deviceId: string, entry: Stored | undefined, record: EventLogRecord | undefined): void {
    let rings = this.byKind.get(deviceKind);
    if (!rings) {
      rings = new Map();
      this.byKind.set(deviceKind, rings);
    }
    let ring = rings.get(deviceId);
    if (!ring) {
      ring = { deviceKind, deviceId, items: [], next: 0 };
      rings.set(deviceId, ring);
    }
    if (ring.items.length < this.perDevice) {
      ring.items.push({ seq: this.seq++, stored: entry, record });
      return;
    }
    // The oldest slot is reused rather than replaced: a full ring takes an event per callback,
    // and a new slot each time would outlive the young generation.
    const oldest = ring.items[ring.next];
    if (oldest === undefined) return;
    oldest.seq = this.seq++;
    oldest.stored = entry;
    oldest.record = record;
    ring.next = (ring.next + 1) % this.perDevice;
  }
}

/** An entry as a ring keeps it: no device, and no sentence where the catalog makes the same one again. */
function stored(entry: EventLogEntry): Stored {
  const { deviceKind: _kind, deviceId: _id, text, how, params, ...rest } = entry;
  const shared = params !== undefined && Object.keys(params).length === 0 ? NO_PARAMS : params;
  // An entry an earlier version wrote (no code) or a code this version's catalog lacks keeps its words.
  return how !== undefined && isEventCode(how) ? { ...rest, how, params: shared } : { ...rest, how, params: shared, text };
}

/** A kept event's entry; a record becomes its stored form the first time. */
function entryOf(ring: Ring, kept: Kept): EventLogEntry {
  if (kept.stored === undefined && kept.record !== undefined) {
    kept.stored = stored(toEntry(kept.record));
    kept.record = undefined;
  }
  // One of the two is always set (keep() is given either).
  const entry = kept.stored as Stored;
  const text = entry.text ?? eventMessage(entry.how, entry.params).text;
  return { deviceKind: ring.deviceKind, deviceId: ring.deviceId, ...entry, text };
}
