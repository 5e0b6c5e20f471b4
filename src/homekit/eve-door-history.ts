// The door's history (model state, src/model/door-history.ts) as the Eve app reads it: Eve's history
// service, "door" kind. Pure byte encodings; no HAP, no clock, no I/O.
//
// Facts about Eve's protocol, from public plugin code (fakegato-history, homebridge-lib):
// - times are seconds since 2001-01-01 (history reference) or since the history's start (entries);
// - HistoryStatus: last entry time, 0, reference time, a fingerprint of the values an entry holds
//   (here one 1-byte contact value, tag 06), entry count, memory size, first entry, 0, 01 01;
// - HistoryRequest: Eve writes the entry number it wants next (little-endian, at byte 2);
// - HistoryEntries: each read returns up to 11 records from there; the first entry of the memory is
//   sent as a reference-time record, later ones as 11-byte contact records; one 00 byte ends it.
import type { DoorHistoryState } from '../model/door-history.js';

/** Unix seconds of 2001-01-01T00:00:00Z, Eve's epoch. */
export const EVE_EPOCH = 978_307_200;
const RECORDS_PER_READ = 11;
const CONTACT_FINGERPRINT = [0x01, 0x06, 0x01];

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
