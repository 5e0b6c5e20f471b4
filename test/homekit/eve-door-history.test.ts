import { describe, expect, it } from 'vitest';

import { EVE_EPOCH, historyEntries, historyStatus, requestedEntry } from '../../src/homekit/eve-door-history.js';
import {
  DOOR_HISTORY_SIZE,
  lastActivation,
  newDoorHistory,
  parseDoorHistory,
  recordDoor,
  resetDoorCount,
  type DoorHistoryState,
} from '../../src/model/door-history.js';

const START = 1_800_000_000; // unix seconds

/** Reads the records of one HistoryEntries answer back, as Eve would. */
function decode(data: Buffer): { entry: number; kind: 'reference' | 'contact' | 'end'; seconds?: number; refTime?: number; open?: number }[] {
  const out: ReturnType<typeof decode> = [];
  let offset = 0;
  while (offset < data.length) {
    const length = data.readUInt8(offset);
    if (length === 0) {
      out.push({ entry: 0, kind: 'end' });
      break;
    }
    const entry = data.readUInt32LE(offset + 1);
    if (length === 21) {
      expect(data.subarray(offset + 5, offset + 10).toString('hex')).toBe('0100000081');
      out.push({ entry, kind: 'reference', refTime: data.readUInt32LE(offset + 10) });
    } else {
      expect(length).toBe(11);
      expect(data.readUInt8(offset + 9)).toBe(0x01);
      out.push({ entry, kind: 'contact', seconds: data.readUInt32LE(offset + 5), open: data.readUInt8(offset + 10) });
    }
    offset += length;
  }
  return out;
}

function record(state: DoorHistoryState, ...changes: [number, boolean][]): DoorHistoryState {
  return changes.reduce((s, [at, open]) => recordDoor(s, at, open).state, state);
}

describe('door history for Eve ("when was the door last opened?")', () => {
  it('records changes only; an opening counts once (ajar after open is still open); last opened is seconds since the start', () => {
    let state = newDoorHistory(START);
    state = record(state, [START + 10, false], [START + 20, true], [START + 25, true], [START + 40, false], [START + 50, true]);
    expect(state.entries).toEqual([[2, START + 10, 0], [3, START + 20, 1], [4, START + 40, 0], [5, START + 50, 1]]);
    expect(state.timesOpened).toBe(2);
    expect(lastActivation(state)).toBe(50);
    expect(recordDoor(state, START + 60, true).recorded).toBe(false);
  });

  it('entries stay in time order and never before the start, whatever the lock\'s clock says', () => {
    const state = record(newDoorHistory(START), [START - 500, true], [START + 30, false], [START + 10, true]);
    expect(state.entries.map(([, t]) => t)).toEqual([START, START + 30, START + 30]);
  });

  it('Eve\'s reset clears the opening count, not the history', () => {
    const state = resetDoorCount(record(newDoorHistory(START), [START + 1, true], [START + 2, false]), 123);
    expect(state.timesOpened).toBe(0);
    expect(state.resetTotal).toBe(123);
    expect(state.entries).toHaveLength(2);
  });

  it('is bounded: at most memorySize entry numbers, the oldest dropped first', () => {
    let state = newDoorHistory(START, 4);
    for (let i = 1; i <= 10; i += 1) state = recordDoor(state, START + i, i % 2 === 1).state;
    expect(state.lastEntry).toBe(11);
    expect(state.firstEntry).toBe(8);
    expect(state.entries.map(([n]) => n)).toEqual([9, 10, 11]);
    expect(newDoorHistory(START).memorySize).toBe(DOOR_HISTORY_SIZE);
  });

  it('HistoryStatus: last entry time, reference time (since 2001), contact fingerprint, count, size, first entry', () => {
    const state = record(newDoorHistory(START, 4), [START + 7, true]);
    const status = historyStatus(state);
    expect(status.readUInt32LE(0)).toBe(7);
    expect(status.readUInt32LE(4)).toBe(0);
    expect(status.readUInt32LE(8)).toBe(START - EVE_EPOCH);
    expect(status.subarray(12, 15).toString('hex')).toBe('010601');
    expect(status.readUInt16LE(15)).toBe(2);
    expect(status.readUInt16LE(17)).toBe(4);
    expect(status.readUInt32LE(19)).toBe(1);
    expect(status.subarray(23).toString('hex')).toBe('000000000101');
  });

  it('a transfer starts with the reference time, sends up to 11 records a read, and ends with 00', () => {
    let state = newDoorHistory(START);
    for (let i = 1; i <= 14; i += 1) state = recordDoor(state, START + i * 60, i % 2 === 1).state;
    const request = Buffer.from('0000' + '01000000' + '0000', 'hex');
    expect(requestedEntry(request)).toBe(1);
    const first = historyEntries(state, 1);
    const records = decode(first.data);
    expect(records).toHaveLength(11);
    expect(records[0]).toEqual({ entry: 1, kind: 'reference', refTime: START - EVE_EPOCH });
    expect(records[1]).toEqual({ entry: 2, kind: 'contact', seconds: 60, open: 1 });
    expect(records[2]).toEqual({ entry: 3, kind: 'contact', seconds: 120, open: 0 });
    const second = historyEntries(state, first.next);
    expect(decode(second.data).map((r) => r.entry)).toEqual([12, 13, 14, 15]);
    expect(decode(historyEntries(state, second.next).data)).toEqual([{ entry: 0, kind: 'end' }]);
    // Eve asks from what it already has: only newer entries come.
    expect(decode(historyEntries(state, 14).data).map((r) => r.entry)).toEqual([14, 15]);
  });

  it('after the memory rolled over, a request for a forgotten entry starts at the oldest kept one, as a reference record', () => {
    let state = newDoorHistory(START, 4);
    for (let i = 1; i <= 10; i += 1) state = recordDoor(state, START + i, i % 2 === 1).state;
    const records = decode(historyEntries(state, 2).data);
    expect(records.map((r) => [r.entry, r.kind])).toEqual([[8, 'reference'], [9, 'contact'], [10, 'contact'], [11, 'contact']]);
  });

  it('a too-short request is no request', () => {
    expect(requestedEntry(Buffer.from('0000', 'hex'))).toBeUndefined();
  });

  it('a saved history is read back; a broken one or one that starts in the future starts anew', () => {
    const state = record(newDoorHistory(START), [START + 1, true]);
    expect(parseDoorHistory(JSON.parse(JSON.stringify(state)), START + 5)).toEqual(state);
    expect(parseDoorHistory({ version: 1, entries: 'x' }, START)).toBeUndefined();
    expect(parseDoorHistory(state, START - 2 * 24 * 60 * 60)).toBeUndefined();
  });
});
