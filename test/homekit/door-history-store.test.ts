import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DoorHistoryFiles, doorHistoryFileName } from '../../src/homekit/door-history-store.js';
import { EVE_HISTORY_SERVICE_UUID } from '../../src/homekit/eve-characteristics.js';
import { lockUuid } from '../../src/homekit/lock-accessory.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { Storage } from '../../src/storage.js';
import { captureLog, hapEnvs, newAccessory } from './hap-env.js';
import { serveLock } from './serve-device.js';

const api = hapEnvs[0]?.api;
if (!api) throw new Error('no Homebridge API for the test');

describe('door history stored under <storagePath>/lock-access/, bounded', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lock-access-door-'));
    storage = Storage.under(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('one file per lock (0600), named by a hash of the lock id, read back by the next run', async () => {
    const { log } = captureLog();
    const files = await DoorHistoryFiles.open(storage, log);
    files.forLock('LOCK/1').save({ some: 'history' });
    files.forLock('LOCK-2').save({ other: 1 });
    await files.flush();
    const names = (await readdir(storage.dir)).sort();
    expect(names).toEqual([doorHistoryFileName('LOCK-2'), doorHistoryFileName('LOCK/1')].sort());
    expect(names.every((n) => /^door-history-[0-9a-f]{16}\.json$/.test(n))).toBe(true);
    expect((await stat(join(storage.dir, doorHistoryFileName('LOCK/1')))).mode & 0o777).toBe(0o600);
    const again = await DoorHistoryFiles.open(storage, log);
    expect(again.forLock('LOCK/1').load()).toEqual({ some: 'history' });
    expect(again.forLock('nobody').load()).toBeUndefined();
  });

  it('an unreadable file is skipped with a warning; its door starts a new history', async () => {
    await storage.ensureDir();
    await writeFile(join(storage.dir, doorHistoryFileName('L1')), '{ torn');
    const captured = captureLog();
    const files = await DoorHistoryFiles.open(storage, captured.log);
    expect(files.forLock('L1').load()).toBeUndefined();
    expect(captured.text('warn')).toMatch(/door history could not be read and starts anew/);
  });

  it('a lock\'s Eve history survives a restart through its file, and stays within the memory size', async () => {
    const { log } = captureLog();
    let files = await DoorHistoryFiles.open(storage, log);
    const now = 1_800_000_000_000;
    const first = serveLock({ api, log, operate: () => Promise.resolve(), describeCommandFailure, now: () => now + 5_000_000, doorHistory: files }, newAccessory(api, 'Front Door', lockUuid(api, 'L1')), { id: 'L1', name: 'Front Door', doorSensor: true });
    for (let i = 0; i < 1500; i += 1) first.apply({ lockId: 'L1', at: now + i * 1000, kind: 'doorState', state: i % 2 === 0 ? 'open' : 'closed' }, { receivedAt: now + 5_000_000, signedAt: now });
    first.dispose();
    await files.flush();
    const text = await readFile(join(storage.dir, doorHistoryFileName('L1')), 'utf8');
    const saved = JSON.parse(text) as { lockId: string; history: { entries: unknown[]; timesOpened: number; lastEntry: number } };
    expect(saved.lockId).toBe('L1');
    expect(saved.history.entries.length).toBeLessThan(1024);
    expect(saved.history.timesOpened).toBe(750);
    files = await DoorHistoryFiles.open(storage, log);
    const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
    const again = serveLock({ api, log, operate: () => Promise.resolve(), describeCommandFailure, now: () => now + 5_000_000, doorHistory: files }, accessory, { id: 'L1', name: 'Front Door', doorSensor: true });
    const times = accessory.services.flatMap((s) => s.characteristics).find((c) => c.UUID.startsWith('E863F129'));
    expect(times?.value).toBe(750);
    expect(accessory.services.some((s) => s.UUID === EVE_HISTORY_SERVICE_UUID)).toBe(true);
    again.dispose();
  });
});
