import { legacyMessage } from '../../src/util/ui-message.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { statusSchema } from '../../src/status/status-shape.js';
import { StatusWriter, readStatus, type Status } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';

describe('"Rejections are never silent", README "Settings UI" > Status: status.json', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'status-'));
    storage = Storage.under(dir);
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a snapshot that matches the zod schema, with link state and message', async () => {
    const writer = await StatusWriter.open(storage, { now: () => 1000 });
    writer.update({ link: { state: 'reauthorizationNeeded', message: legacyMessage('Link the account again in the plugin settings.') } });
    await writer.flush();
    const status = await readStatus(storage);
    expect(status?.link).toEqual({ state: 'reauthorizationNeeded', message: legacyMessage('Link the account again in the plugin settings.') });
    expect(statusSchema().safeParse(JSON.parse(await readFile(storage.file('status.json'), 'utf8'))).success).toBe(true);
  });

  it('counts accepted, duplicate and rejected callbacks by reason, and the last callback per device', async () => {
    const writer = await StatusWriter.open(storage);
    writer.callbackAccepted({ deviceKind: 'lock', deviceId: 'L1', at: 5, kind: 'lockState' });
    writer.callbackAccepted({ deviceKind: 'lock', deviceId: 'L1', at: 9, kind: 'doorState' });
    writer.receiverCounters(1, { 'bad signature': 2, 'stale timestamp': 1 });
    await writer.flush();
    const receiver = (await readStatus(storage))?.receiver;
    expect(receiver?.accepted).toBe(2);
    expect(receiver?.duplicates).toBe(1);
    expect(receiver?.rejected).toEqual({ 'bad signature': 2, 'stale timestamp': 1 });
    expect(receiver?.lastCallbacks['lock:L1']).toEqual({ deviceKind: 'lock', deviceId: 'L1', at: 9, kind: 'doorState' });
  });

  it('a snapshot handed out is not changed by later callbacks', async () => {
    const writer = await StatusWriter.open(storage);
    writer.callbackAccepted({ deviceKind: 'lock', deviceId: 'L1', at: 5, kind: 'lockState' });
    const before = writer.status;
    writer.callbackAccepted({ deviceKind: 'lock', deviceId: 'L2', at: 6, kind: 'lockState' });
    expect(before.receiver.accepted).toBe(1);
    expect(Object.keys(before.receiver.lastCallbacks)).toEqual(['lock:L1']);
    expect(writer.status.receiver.accepted).toBe(2);
  });

  it('receiver counters are written only when they change', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const writer = await StatusWriter.open(storage, { debounceMs: 500 });
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    const write = vi.spyOn(storage, 'write');
    writer.receiverCounters(0, {});
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    expect(write).not.toHaveBeenCalled();
    writer.receiverCounters(0, { 'bad signature': 1 });
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    expect(write).toHaveBeenCalledTimes(1);
    expect((await readStatus(storage))?.receiver.rejected).toEqual({ 'bad signature': 1 });
  });

  it('a failing registration keeps its last success; a success clears the error', async () => {
    const writer = await StatusWriter.open(storage);
    const t1 = '2026-11-22T01:00:00.000Z';
    const t2 = '2026-11-22T02:00:00.000Z';
    writer.updateRegistration({ kind: 'lock', id: 'L1', state: 'registered', lastSuccessAt: t1 });
    writer.updateRegistration({ kind: 'lock', id: 'L1', state: 'failed', lastError: legacyMessage('the service answered 503') });
    expect(writer.status.registrations).toEqual([{ kind: 'lock', id: 'L1', state: 'failed', lastSuccessAt: t1, lastError: legacyMessage('the service answered 503') }]);
    writer.updateRegistration({ kind: 'lock', id: 'L1', state: 'registered', lastSuccessAt: t2 });
    expect(writer.status.registrations).toEqual([{ kind: 'lock', id: 'L1', state: 'registered', lastSuccessAt: t2 }]);
  });

  it('a new run starts its counters at zero but keeps the last callback per device', async () => {
    const first = await StatusWriter.open(storage);
    first.callbackAccepted({ deviceKind: 'doorbell', deviceId: 'D1', at: 7 });
    await first.flush();
    const second = await StatusWriter.open(storage);
    expect(second.status.receiver.accepted).toBe(0);
    expect(second.status.receiver.lastCallbacks['doorbell:D1']?.at).toBe(7);
  });

  it('debounces writes: many updates, one write', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const write = vi.spyOn(storage, 'write');
    const writer = await StatusWriter.open(storage, { debounceMs: 500 });
    for (let i = 1; i <= 10; i += 1) writer.receiverCounters(i, {});
    expect(write).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    expect(write).toHaveBeenCalledTimes(1);
    expect((await readStatus(storage))?.receiver.duplicates).toBe(10);
  });

  it('never writes a status that breaks the schema: the file keeps the last valid one', async () => {
    const warnings: string[] = [];
    const writer = await StatusWriter.open(storage, { log: { warn: (m) => warnings.push(m) } });
    writer.update({ link: { state: 'linked', message: legacyMessage('Linked.') } });
    await writer.flush();
    writer.update({ link: { state: 'bogus' as 'linked', message: legacyMessage('') } });
    await writer.flush();
    expect((await readStatus(storage))?.link.state).toBe('linked');
    expect(warnings.join()).toMatch(/unexpected shape \(link\.state\)/);
  });

  it('rejection counts reach the file within a second, with no accepted callback since', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const writer = await StatusWriter.open(storage, { debounceMs: 500 });
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    const write = vi.spyOn(storage, 'write');
    writer.receiverCounters(0, { 'stale timestamp': 1 });
    await vi.advanceTimersByTimeAsync(500);
    expect(write).toHaveBeenCalledTimes(1);
    // Waits for that write only: nothing is pending, so flush adds none.
    await writer.flush();
    expect(write).toHaveBeenCalledTimes(1);
    expect((await readStatus(storage))?.receiver).toMatchObject({ accepted: 0, rejected: { 'stale timestamp': 1 } });
  });

  it('a steady stream of rejections is still written every 10 seconds (the quiet spell never comes)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const writer = await StatusWriter.open(storage, { debounceMs: 500 });
    await vi.advanceTimersByTimeAsync(500);
    await writer.flush();
    const write = vi.spyOn(storage, 'write');
    const written = () => write.mock.calls.map(([, data]) => (data as Status).receiver.rejected['stale timestamp']);
    for (let n = 1; n <= 60; n += 1) {
      writer.receiverCounters(0, { 'stale timestamp': n });
      await vi.advanceTimersByTimeAsync(250);
    }
    // 15 s of a rejection every 250 ms: written once, at 10 s, with the count of that moment.
    expect(written()).toEqual([40]);
    await writer.flush();
    expect(written()).toEqual([40, 60]);
  });

  it('a failed save is logged and retried with the next change', async () => {
    const warnings: string[] = [];
    const writer = await StatusWriter.open(storage, { log: { warn: (m) => warnings.push(m) } });
    await writer.flush();
    vi.spyOn(storage, 'write').mockRejectedValueOnce(new Error('read-only file system'));
    writer.update({ link: { state: 'linked', message: legacyMessage('Linked.') } });
    await writer.flush();
    expect(warnings).toEqual(['The status for the settings UI could not be saved (read-only file system).']);
    expect((await readStatus(storage))?.link.state).toBe('unlinked');
    writer.update({ devices: [] });
    await writer.flush();
    expect((await readStatus(storage))?.link.state).toBe('linked');
  });

  it('readStatus: absent file is undefined', async () => {
    expect(await readStatus(storage)).toBeUndefined();
  });
});
