// The door's open/close history as the Eve app reads it (Eve's history service, "door" kind), and the
// opening count and "last opened" Eve shows on the contact sensor. Pure: plain JSON state (saved by
// door-history-store.ts) and byte encodings; no HAP, no clock, no I/O.
//
// Facts about Eve's protocol, from public plugin code (fakegato-history, homebridge-lib):
// - times are seconds since 2001-01-01 (history reference) or since the history's start (entries);
// - HistoryStatus: last entry time, 0, reference time, a fingerprint of the values an entry holds
//   (here one 1-byte contact value, tag 06), entry count, memory size, first entry, 0, 01 01;
// - HistoryRequest: Eve writes the entry number it wants next (little-endian, at byte 2);
// - HistoryEntries: each read returns up to 11 records from there; the first entry of the memory is
//   sent as a reference-time record, later ones as 11-byte contact records; one 00 byte ends it.
import { z } from 'zod/v3';

/** Unix seconds of 2001-01-01T00:00:00Z, Eve's epoch. */
export const EVE_EPOCH = 978_307_200;
/** Entries kept per door: each is one open or close, so about 500 of each. */
export const DOOR_HISTORY_SIZE = 1024;
const RECORDS_PER_READ = 11;
const CONTACT_FINGERPRINT = [0x01, 0x06, 0x01];

export const doorHistorySchema = z.object({
  version: z.literal(1),
  /** Unix seconds when this history started; entry times count from here. */
  initialTime: z.number().int().nonnegative(),
  memorySize: z.number().int().min(2),
  /** The oldest entry number Eve may still ask for (sent as the reference record). */
  firstEntry: z.number().int().min(1),
  lastEntry: z.number().int().min(1),
  /** [entry number, unix seconds, 1 open / 0 closed], oldest first, numbers after firstEntry. */
  entries: z.array(z.tuple([z.number().int(), z.number().int(), z.union([z.literal(0), z.literal(1)])])),
  timesOpened: z.number().int().nonnegative(),
  /** Unix seconds of the last opening. */
  lastOpened: z.number().int().optional(),
  /** What Eve last wrote to ResetTotal (seconds since 2001), echoed on reads. */
  resetTotal: z.number().int().nonnegative().optional(),
});

export type DoorHistoryState = z.infer<typeof doorHistorySchema>;

export function newDoorHistory(nowSeconds: number, memorySize = DOOR_HISTORY_SIZE): DoorHistoryState {
  return { version: 1, initialTime: nowSeconds, memorySize, firstEntry: 1, lastEntry: 1, entries: [], timesOpened: 0 };
}

/** A saved history, or undefined when it does not validate or starts in the future (the clock was wrong). */
export function parseDoorHistory(raw: unknown, nowSeconds: number): DoorHistoryState | undefined {
  const parsed = doorHistorySchema.safeParse(raw);
  if (!parsed.success || parsed.data.initialTime > nowSeconds + 24 * 60 * 60) return undefined;
  return parsed.data;
}

export interface DoorHistoryChange {
  state: DoorHistoryState;
  /** false when the door kept its position (open after ajar, a second closed): nothing is recorded. */
  recorded: boolean;
}

/** The door's position at `seconds` (unix). Records only changes; counts closed -> open as an opening. */
export function recordDoor(state: DoorHistoryState, seconds: number, open: boolean): DoorHistoryChange {
  const last = state.entries.at(-1);
  const status = open ? 1 : 0;
  if (last?.[2] === status) return { state, recorded: false };
  // Entries stay in time order and never before the start, whatever the lock's clock says.
  const time = Math.max(Math.round(seconds), last?.[1] ?? state.initialTime, state.initialTime);
  const lastEntry = state.lastEntry + 1;
  // The window of answerable numbers (firstEntry..lastEntry) never exceeds the memory size.
  const firstEntry = Math.max(state.firstEntry, lastEntry - state.memorySize + 1);
  const entries = [...state.entries, [lastEntry, time, status] as [number, number, 0 | 1]].filter(([n]) => n > firstEntry);
  const next: DoorHistoryState = { ...state, firstEntry, lastEntry, entries };
  if (open) {
    next.timesOpened = state.timesOpened + 1;
    next.lastOpened = time;
  }
  return { state: next, recorded: true };
}

/** Eve's reset button: the opening count starts again (the history stays). */
export function resetDoorCount(state: DoorHistoryState, resetTotal: number): DoorHistoryState {
  return { ...state, timesOpened: 0, resetTotal };
}

/** LastActivation: seconds from the history's start to the last opening (0 before any). */
export function lastActivation(state: DoorHistoryState): number {
  return state.lastOpened === undefined ? 0 : Math.max(0, state.lastOpened - state.initialTime);
}

/** The HistoryStatus value. */
export function historyStatus(state: DoorHistoryState): Buffer {
  const lastTime = state.entries.at(-1)?.[1] ?? state.initialTime;
  const buffer = Buffer.alloc(32);
  let offset = 0;
  offset = buffer.writeUInt32LE(lastTime - state.initialTime, offset);
  offset = buffer.writeUInt32LE(0, offset);
  offset = buffer.writeUInt32LE(Math.max(0, state.initialTime - EVE_EPOCH), offset);
  for (const byte of CONTACT_FINGERPRINT) offset = buffer.writeUInt8(byte, offset);
  offset = buffer.writeUInt16LE(state.lastEntry - state.firstEntry + 1, offset);
  offset = buffer.writeUInt16LE(state.memorySize, offset);
  offset = buffer.writeUInt32LE(state.firstEntry, offset);
  offset = buffer.writeUInt32LE(0, offset);
  offset = buffer.writeUInt8(1, offset);
  offset = buffer.writeUInt8(1, offset);
  return buffer.subarray(0, offset);
}

/** The entry number a HistoryRequest asks for, or undefined for a value too short to hold one. */
export function requestedEntry(request: Buffer): number | undefined {
  return request.length >= 6 ? request.readUInt32LE(2) : undefined;
}

/**
 * One HistoryEntries read: up to 11 records from `from`, and where the next read continues.
 * `next` past lastEntry means the transfer is done; the read after that answers a single 00 byte.
 */
export function historyEntries(state: DoorHistoryState, from: number): { data: Buffer; next: number } {
  let cursor = Math.max(from, state.firstEntry);
  if (cursor > state.lastEntry) return { data: Buffer.from([0]), next: cursor };
  const byNumber = new Map(state.entries.map(([n, time, status]) => [n, { time, status }]));
  const records: Buffer[] = [];
  while (records.length < RECORDS_PER_READ && cursor <= state.lastEntry) {
    const entry = cursor === state.firstEntry ? undefined : byNumber.get(cursor);
    records.push(entry === undefined ? referenceRecord(cursor, state.initialTime) : contactRecord(cursor, entry.time - state.initialTime, entry.status));
    cursor += 1;
  }
  return { data: Buffer.concat(records), next: cursor };
}

/** Tells Eve the reference time; it is sent for the first entry of the memory. */
function referenceRecord(entry: number, initialTime: number): Buffer {
  const record = Buffer.alloc(21);
  record.writeUInt8(21, 0);
  record.writeUInt32LE(entry, 1);
  Buffer.from([0x01, 0x00, 0x00, 0x00, 0x81]).copy(record, 5);
  record.writeUInt32LE(Math.max(0, initialTime - EVE_EPOCH), 10);
  return record;
}

/** Length, entry number, seconds since the start, value bitmap (one value), 1 open / 0 closed. */
function contactRecord(entry: number, offsetSeconds: number, status: number): Buffer {
  const record = Buffer.alloc(11);
  record.writeUInt8(11, 0);
  record.writeUInt32LE(entry, 1);
  record.writeUInt32LE(Math.max(0, offsetSeconds), 5);
  record.writeUInt8(0x01, 9);
  record.writeUInt8(status, 10);
  return record;
}
