// What the listener writes down per verdict: counters, last-callback times, log lines, all bounded.
import { describe, expect, it } from 'vitest';

import type { Duplicate, Verdict } from '../../src/callbacks/accept.js';
import { ReceiverTally } from '../../src/callbacks/receiver-tally.js';
import { recordingLog } from './helpers.js';

function recordingTally() {
  const { log, lines } = recordingLog();
  return { tally: new ReceiverTally(log), lines };
}

const lastCallback = (key: string, at = 1) => ({ key, at });
const ignored = (kindName: string, key = 'lock:L'): Verdict => ({ kind: 'ignored', status: 200, reason: 'unknown-kind', kindName, record: { lastCallback: lastCallback(key) } });
const duplicate = (key: string, at: number): Duplicate => ({ kind: 'duplicate', status: 200, reason: 'duplicate', record: { lastCallback: lastCallback(key, at) } });

describe('the receiver counts every answer for the status file', () => {
  it('accepted, duplicate and unknown-kind answers are counted and stamp the device\'s last callback', () => {
    const { tally } = recordingTally();
    tally.note('lock', {
      kind: 'accepted', status: 200, reason: 'accepted', events: [],
      context: { route: 'lock', pathId: 'L', receivedAt: 5, signedAt: 5, toleranceMs: 300_000, dedupeKey: 'k' },
      record: { claim: { key: 'k', taken: duplicate('lock:L', 5) }, lastCallback: lastCallback('lock:L', 5) },
    });
    tally.note('doorbell', duplicate('doorbell:D', 7));
    tally.note('lock', ignored('operation/jammed', 'lock:L2'));
    expect(tally.stats).toMatchObject({ accepted: 1, duplicates: 1, ignoredUnknown: 1, rejected: {}, lastCallbackAt: { 'lock:L': 5, 'doorbell:D': 7, 'lock:L2': 1 } });
  });
  it('rejections are counted by reason, also those refused before the pipeline, and stamp nothing', () => {
    const { tally } = recordingTally();
    tally.note('lock', { kind: 'rejected', status: 401, reason: 'bad-token' });
    tally.note('user', { kind: 'rejected', status: 401, reason: 'bad-token' });
    tally.countRejection('too-large');
    expect(tally.stats.rejected).toEqual({ 'bad-token': 2, 'too-large': 1 });
    expect(tally.stats.lastCallbackAt).toEqual({});
  });
  it('the last-callback map is bounded: new keys stop at 1000, known keys keep updating', () => {
    const { tally } = recordingTally();
    for (let i = 0; i < 1_200; i++) tally.note('lock', duplicate(`lock:${i}`, i));
    tally.note('lock', duplicate('lock:0', 9_999));
    expect(Object.keys(tally.stats.lastCallbackAt)).toHaveLength(1_000);
    expect(tally.stats.lastCallbackAt['lock:0']).toBe(9_999);
    expect(tally.stats.lastCallbackAt['lock:1100']).toBeUndefined();
    expect(tally.stats.duplicates).toBe(1_201);
  });
});

describe('log lines for answered callbacks', () => {
  it('an unknown kind is logged once per kind, at most 100 kinds', () => {
    const { tally, lines } = recordingTally();
    tally.note('lock', ignored('operation/jammed'));
    tally.note('lock', ignored('operation/jammed'));
    expect(lines).toEqual(['info Webhook: a callback of a kind or value this plugin does not know (operation/jammed) was accepted; nothing it could not map was changed.']);
    for (let i = 0; i < 200; i++) tally.note('lock', ignored(`kind/${i}`));
    expect(lines.filter((l) => l.startsWith('info'))).toHaveLength(100);
    expect(tally.stats.ignoredUnknown).toBe(202);
  });
  it('a rejection is a debug line with its status, reason and detail', () => {
    const { tally, lines } = recordingTally();
    tally.note('doorbell', { kind: 'rejected', status: 400, reason: 'schema-violation', detail: 'DoorbellID: required' });
    tally.note('lock', { kind: 'rejected', status: 503, reason: 'not-ready' });
    expect(lines).toEqual([
      'debug Webhook: doorbell callback refused with 400 (schema-violation: DoorbellID: required).',
      'debug Webhook: lock callback refused with 503 (not-ready).',
    ]);
  });
  it('a failing sink is counted and logged as an error with the plain message', () => {
    const { tally, lines } = recordingTally();
    tally.sinkFailed('lock', new Error('reducer exploded'));
    tally.sinkFailed('user', 'a thrown string');
    expect(tally.stats.sinkErrors).toBe(2);
    expect(lines).toEqual([
      'error Webhook: handling an accepted lock callback failed: reducer exploded',
      'error Webhook: handling an accepted user callback failed: unknown error',
    ]);
  });
});

describe('rejections are never silent (the tally)', () => {
  it('a stale signature is counted, kept as the last rejection with the clock offset, and warned about once an hour', () => {
    const lines: string[] = [];
    const clock = { now: 1_000 };
    const log = { info: () => undefined, warn: (m: string) => lines.push(m), error: () => undefined, debug: () => undefined };
    const tally = new ReceiverTally(log, () => clock.now);
    tally.note('lock', { kind: 'rejected', status: 401, reason: 'stale-timestamp', offsetMs: -900_000 });
    clock.now = 2_000;
    tally.note('lock', { kind: 'rejected', status: 401, reason: 'stale-timestamp', offsetMs: -900_000 });
    expect(tally.stats.rejected).toEqual({ 'stale-timestamp': 2 });
    expect(tally.stats.lastRejection).toEqual({ at: 2_000, reason: 'stale-timestamp', clockOffsetMs: -900_000 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/15 min 0 s behind/);
  });
});

