// What devices keep across restarts lives in one file under <storagePath>/lock-access/ (devices.json,
// 0600), written through the real Storage. What older versions kept in the accessory cache and in one
// door-history file per lock moves over once, and nothing of it is lost.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { PlatformAccessory } from 'homebridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod/v3';

import { moveContextToRecords } from '../../src/storage/context-migration.js';
import { EVE_HISTORY_SERVICE_UUID } from '../../src/homekit/eve-characteristics.js';
import { doorbellUuid } from '../../src/homekit/doorbell-accessory.js';
import { lockUuid } from '../../src/homekit/lock-accessory.js';
import { DEVICES_FILE, DeviceRecords } from '../../src/storage/device-records.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import { newDoorHistory, recordDoor } from '../../src/model/door-history.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { AccessoryRegistry } from '../../src/homekit/accessory-registry.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { Storage } from '../../src/storage.js';
import { systemClock } from '../../src/util/clock.js';
import { captureLog, hapEnvs, newAccessory, service } from '../homekit/hap-env.js';

const [hb2] = hapEnvs;
if (!hb2) throw new Error('no Homebridge API for the test');
const { api } = hb2;
const { Service: S, Characteristic: C } = api.hap;
const NOW = 1_800_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const FRONT: DeviceEntry = { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, autoLockSeconds: 30 };
const devicesFileShape = z.object({ devices: z.record(z.object({ values: z.record(z.unknown()) })) });
const BELL: DeviceEntry = { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 };

describe('devices.json under <storagePath>/lock-access/', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lock-access-devices-'));
    storage = Storage.under(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** One run: the records, the device registry and HomeKit's view on the cached accessories. */
  async function run(cached: PlatformAccessory[], wanted: DeviceEntry[] = [FRONT, BELL]) {
    const captured = captureLog();
    const records = await DeviceRecords.open(storage, captured.log);
    const moved = await moveContextToRecords(cached, records);
    const registry = new DeviceRegistry({ log: captured.log, clock: { ...systemClock, now: () => NOW }, records, operate: () => Promise.resolve(), describeCommandFailure });
    const homekit = new AccessoryRegistry({ api, log: captured.log, devices: registry, fetchImage: () => Promise.resolve(Buffer.from('jpeg')), pluginName: 'homebridge-lock-access', platformName: 'LockAccess', cached });
    registry.attach(homekit);
    registry.sync(wanted, false);
    const stop = async () => {
      registry.disposeAll();
      await records.flush();
    };
    return { records, registry, homekit, captured, moved, stop };
  }

  it('one file (0600) holds every device\'s entry and state; the next run serves them from it', async () => {
    const first = await run([]);
    first.registry.lock('L1')?.apply({ lockId: 'L1', at: NOW - 10, kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: { kind: 'person', userId: 'u' } }, ctx);
    first.registry.lock('L1')?.setAutoLockSeconds(120, 'HomeKit');
    first.registry.doorbell('D1')?.setChime(false);
    await first.stop();
    expect(await readdir(storage.dir)).toEqual([DEVICES_FILE]);
    expect((await stat(storage.file(DEVICES_FILE))).mode & 0o777).toBe(0o600);

    const again = await run([], []);
    expect(again.records.remembered()).toEqual([FRONT, BELL]);
    again.registry.sync(again.records.remembered(), false);
    const lock = again.registry.lock('L1');
    expect(lock?.state.lock).toBe('locked');
    expect(lock?.state.lastAction).toBe('securedByKeypad');
    expect(lock?.autoLockSeconds()).toBe(120);
    expect(again.registry.doorbell('D1')?.chimeOn).toBe(false);
    await again.stop();
  });

  it('a choice made from a controller (the chime, the auto-lock delay) reaches the file at once, without waiting for a quiet spell', async () => {
    const first = await run([]);
    await first.records.flush();
    first.registry.doorbell('D1')?.setChime(false);
    first.registry.lock('L1')?.setAutoLockSeconds(45, 'HomeKit');
    // No flush here: the write is already on its way (a state change would wait a quiet second).
    let saved: z.infer<typeof devicesFileShape> | undefined;
    for (let i = 0; i < 20 && saved?.devices['lock:L1']?.values.lockAccessGuard === undefined; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      saved = await storage.read(DEVICES_FILE, devicesFileShape);
    }
    expect(saved?.devices['doorbell:D1']?.values.lockAccessChime).toBe(false);
    expect(saved?.devices['lock:L1']?.values.lockAccessGuard).toEqual({ configSeconds: 30, homekitSeconds: 45 });
    first.registry.disposeAll();
  });

  it('an earlier version\'s accessory cache moves over once: state, the delay chosen in HomeKit, the chime; the context keeps nothing of it', async () => {
    const lockAccessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
    const bellAccessory = newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'));
    // What version 1.x wrote into accessory.context.
    const state = { version: 1, lock: 'unlocked', door: 'closed', doorSensorSeen: true, battery: null, keypadBattery: null, keypadSeen: true, online: true, flags: {}, lastAt: { lock: NOW - 60_000 }, recent: [] };
    Object.assign(lockAccessory.context, { lockAccessDevice: FRONT, lockAccess: state, lockAccessGuard: { configSeconds: 30, homekitSeconds: 90 } });
    Object.assign(bellAccessory.context, { lockAccessDevice: BELL, lockAccessChime: false });

    const first = await run([lockAccessory, bellAccessory], []);
    expect(first.moved).toBe(true);
    expect(lockAccessory.context).toEqual({});
    expect(bellAccessory.context).toEqual({});
    expect(first.records.remembered()).toEqual([FRONT, BELL]);
    first.registry.sync(first.records.remembered(), false);
    expect(first.registry.lock('L1')?.state.lock).toBe('unlocked');
    expect(first.registry.lock('L1')?.autoLockSeconds()).toBe(90);
    expect(service(lockAccessory, S.LockManagement).getCharacteristic(C.LockManagementAutoSecurityTimeout).value).toBe(90);
    expect(service(lockAccessory, S.Battery, 'keypad')).toBeDefined();
    expect(first.registry.doorbell('D1')?.chimeOn).toBe(false);
    await first.stop();

    // The next start has nothing left to move and still knows everything.
    const again = await run([lockAccessory, bellAccessory]);
    expect(again.moved).toBe(false);
    expect(again.registry.lock('L1')?.state.lock).toBe('unlocked');
    expect(again.registry.lock('L1')?.autoLockSeconds()).toBe(90);
    expect(again.registry.doorbell('D1')?.chimeOn).toBe(false);
    await again.stop();
  });

  it('an earlier version\'s door-history file is read in its own format, kept in devices.json, and then removed', async () => {
    let history = newDoorHistory(NOW / 1000 - 3600);
    history = recordDoor(history, NOW / 1000 - 600, true).state;
    history = recordDoor(history, NOW / 1000 - 500, false).state;
    await storage.write('door-history-0123456789abcdef.json', { lockId: 'L1', history }, { compact: true });
    await storage.ensureDir();
    await writeFile(storage.file('door-history-fedcba9876543210.json'), '{ torn');
    const first = await run([]);
    expect(first.captured.text('warn')).toMatch(/door history of an earlier version could not be read/);
    expect((await readdir(storage.dir)).sort()).toEqual([DEVICES_FILE]);
    const lock = first.registry.lock('L1');
    expect(lock?.doorHistory).toEqual(history);
    const accessory = first.homekit.accessoryOf('lock', 'L1');
    expect(accessory?.services.some((s) => s.UUID === EVE_HISTORY_SERVICE_UUID)).toBe(true);
    const times = accessory?.services.flatMap((s) => s.characteristics).find((c) => c.UUID.startsWith('E863F129'));
    expect(times?.value).toBe(1);
    await first.stop();
    const again = await run([]);
    expect(again.registry.lock('L1')?.doorHistory).toEqual(history);
    await again.stop();
  });

  it('a door history stays within its memory size across a restart', async () => {
    const first = await run([]);
    const lock = first.registry.lock('L1');
    for (let i = 0; i < 1500; i += 1) lock?.apply({ lockId: 'L1', at: NOW - 2_000_000 + i * 1000, kind: 'doorState', state: i % 2 === 0 ? 'open' : 'closed' }, ctx);
    await first.stop();
    const again = await run([]);
    const history = again.registry.lock('L1')?.doorHistory;
    expect(history?.entries.length).toBeLessThan(1024);
    expect(history?.timesOpened).toBe(750);
    await again.stop();
  });

  it('a damaged devices.json (not JSON) is reported and replaced: the devices start fresh', async () => {
    await storage.ensureDir();
    await writeFile(storage.file(DEVICES_FILE), '{ torn');
    const first = await run([]);
    expect(first.captured.text('warn')).toMatch(/devices\.json \(the devices' saved state\) was damaged .*it is replaced/);
    expect(first.registry.lock('L1')?.state.lock).toBe('unknown');
    await first.stop();
  });
});
