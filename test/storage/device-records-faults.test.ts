// devices.json through the real Storage on a real folder, with faults injected where the file system
// answers: a read that fails for a while (EIO, EMFILE) is no missing file, and a write that fails
// during a short disk fault reaches the file on its own.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { DEVICES_FILE, DeviceRecords } from '../../src/storage/device-records.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { Storage } from '../../src/storage.js';
import { systemClock } from '../../src/util/clock.js';
import { recordingLog } from '../callbacks/helpers.js';
import { clearFsFaults, fsFaults as faults } from '../fixtures/fs-faults.js';

vi.mock('node:fs/promises', async (real) => (await import('../fixtures/fs-faults.js')).faultyFsPromises(await real()));
vi.mock('write-file-atomic', async (real) => (await import('../fixtures/fs-faults.js')).faultyWriteFileAtomic(await real()));

const NOW = 1_800_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const FRONT: DeviceEntry = { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, autoLockSeconds: 30 };
const BELL: DeviceEntry = { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 };

interface SavedFile {
  devices: Record<string, { entry?: unknown; values: Record<string, unknown> }>;
}

describe('devices.json: a passing read or write fault never costs what it keeps', () => {
  let dir: string;
  let storage: Storage;
  let stops: (() => Promise<void>)[];
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    clearFsFaults();
    dir = await mkdtemp(join(tmpdir(), 'lock-access-devices-faults-'));
    storage = Storage.under(dir);
    stops = [];
  });
  afterEach(async () => {
    for (const stop of stops) await stop();
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  async function run(wanted: DeviceEntry[]) {
    const { log, lines } = recordingLog();
    const records = await DeviceRecords.open(storage, log);
    const registry = new DeviceRegistry({ log, clock: { ...systemClock, now: () => NOW }, records, operate: () => Promise.resolve(), describeCommandFailure });
    registry.sync(wanted, false);
    const stop = async () => {
      registry.disposeAll();
      await records.flush();
      records.stop();
    };
    stops.push(stop);
    return { records, registry, lines, stop };
  }

  /** The file as it is on disk (past the injected faults). */
  function saved(): SavedFile {
    return JSON.parse(readFileSync(storage.file(DEVICES_FILE), 'utf8')) as SavedFile;
  }

  /** What the first run chose: the chime off, an auto-lock delay from HomeKit, the lock locked. */
  async function firstRun(): Promise<void> {
    const first = await run([FRONT, BELL]);
    first.registry.doorbell('D1')?.setChime(false);
    first.registry.lock('L1')?.setAutoLockSeconds(120, 'HomeKit');
    first.registry.lock('L1')?.apply({ lockId: 'L1', at: NOW - 10_000, kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: { kind: 'person', userId: 'u' } }, ctx);
    await first.stop();
    expect(saved().devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
  }

  it.each(['EIO', 'EMFILE'])('a read that fails at start (%s) is no missing file: nothing is written over it, it is read again and what it kept stays', async (code) => {
    await firstRun();
    faults.read.set(DEVICES_FILE, [code, code]);
    const second = await run([FRONT, BELL]);
    expect(second.lines.join('\n')).toMatch(new RegExp(`devices\\.json \\(the devices' saved state\\) could not be read .*${code}.*it is kept, not written over, and read again`));
    // This run learns something new and a user's choice is made: nothing may replace the file yet.
    second.registry.lock('L1')?.apply({ lockId: 'L1', at: NOW - 1_000, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'person', userId: 'u' } }, ctx);
    second.registry.lock('L1')?.setAutoLockSeconds(60, 'HomeKit');
    await vi.advanceTimersByTimeAsync(1_500);
    await second.records.flush();
    expect(saved().devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
    // Read again on its own (the second try fails too, the third reads it). The file system
    // answers in real time: each look lets the waits run on until the read is through.
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(1_000);
      const file = saved();
      // What the file kept stays, and what this run learnt or chose is added on top.
      expect(file.devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
      expect(file.devices['lock:L1']?.values.lockAccessGuard).toEqual({ configSeconds: 30, homekitSeconds: 60 });
    });
    expect(second.lines.join('\n')).toMatch(/devices\.json can be read again/);
  });

  it('while the file cannot be read, nothing counts as saved: an earlier version\'s door-history file stays until its history is on disk', async () => {
    await firstRun();
    const old = 'door-history-0123456789abcdef.json';
    await storage.write(old, { lockId: 'L1', history: { start: NOW / 1000 - 3600, entries: [] } }, { compact: true });
    faults.read.set(DEVICES_FILE, ['EIO']);
    const second = await run([FRONT, BELL]);
    expect(await second.records.save()).toBe(false);
    expect(existsSync(storage.file(old))).toBe(true);
  });

  it('a damaged file (not JSON) may be replaced: the devices start from what the service reports', async () => {
    await firstRun();
    await writeFile(storage.file(DEVICES_FILE), '{ torn');
    const second = await run([FRONT, BELL]);
    expect(second.lines.join('\n')).toMatch(/devices\.json \(the devices' saved state\) was damaged .*not valid JSON.*it is replaced/);
    second.registry.doorbell('D1')?.setChime(false);
    await vi.waitFor(() => {
      expect(saved().devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
    });
  });

  it('a write that fails during a short disk fault is tried again on its own, without waiting for the next change', async () => {
    const first = await run([FRONT, BELL]);
    await first.records.flush();
    faults.write.set(DEVICES_FILE, ['EIO', 'ENOSPC']);
    first.registry.doorbell('D1')?.setChime(false);
    await vi.waitFor(() => {
      expect(first.lines.join('\n')).toMatch(/could not be written .*EIO/);
    });
    // No further change: the writes are tried again after a wait, and the second retry succeeds.
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(saved().devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
    });
    // Said once for the whole fault, and once when it is over (that line follows the write itself).
    await vi.waitFor(() => {
      expect(first.lines.join('\n')).toMatch(/devices\.json is written again/);
    });
    expect(first.lines.filter((line) => line.includes('could not be written'))).toHaveLength(1);
  });
});
