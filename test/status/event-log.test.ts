import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { Actor, DeviceEvent } from '../../src/model/events.js';
import { toEntry, type EventLogEntry } from '../../src/status/event-entry.js';
import { EventLog, describeEvent, readEventLog } from '../../src/status/event-log.js';
import { BoundedEntries } from '../../src/status/event-rings.js';
import { Storage } from '../../src/storage.js';

const jane: Actor = { kind: 'person', userId: 'u-1', firstName: 'Jane', lastName: 'Doe' };
const lockEv = (e: Record<string, unknown>): DeviceEvent => ({ at: 1, lockId: 'L1', ...e }) as DeviceEvent;
const bellEv = (e: Record<string, unknown>): DeviceEvent => ({ at: 1, doorbellId: 'D1', ...e }) as DeviceEvent;

describe('README "Settings UI" > Event log: describeEvent, one plain-words line per event', () => {
  it.each<[string, DeviceEvent, string]>([
    ['keypad unlock by a person', lockEv({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: jane }), 'Unlocked by Jane Doe at the keypad'],
    ['app lock by a person', lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: jane }), 'Locked remotely by Jane Doe'],
    ['lock with nobody named', lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: { kind: 'unknown' } }), 'Locked remotely'],
    ['manual lock', lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: { kind: 'manual', userId: 'manuallock' } }), 'Locked by hand'],
    ['manual unlock', lockEv({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'manual', userId: 'manualunlock' } }), 'Unlocked by hand'],
    ['one-touch lock', lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: { kind: 'oneTouch' }, oneTouch: true }), 'Locked with One-Touch at the keypad'],
    ['status check', lockEv({ kind: 'lockState', state: 'locked', source: 'status', device: 'lock', actor: jane }), 'Status check: locked (asked by Jane Doe)'],
    ['door ajar', lockEv({ kind: 'doorState', state: 'ajar' }), 'Door ajar'],
    ['door open', lockEv({ kind: 'doorState', state: 'open' }), 'Door opened'],
    ['keypad battery critical', lockEv({ kind: 'battery', device: 'keypad', raw: 'keypad_battery_critical' }), 'Keypad battery critical: replace the batteries now'],
    ['keypad battery warning', lockEv({ kind: 'battery', device: 'keypad', raw: 'keypad_battery_warning' }), 'Keypad battery low'],
    ['lock battery 2 weeks', lockEv({ kind: 'battery', device: 'lock', raw: 'lock_state_battery_warning_2week' }), 'Lock battery low: about 2 weeks left'],
    ['announced lock battery critical', lockEv({ kind: 'battery', device: 'lock', raw: 'battery_level_critical' }), 'Lock battery critical: replace the batteries now'],
    ['bridge offline', lockEv({ kind: 'online', online: false }), 'Bridge offline: the lock cannot be reached remotely'],
    ['bridge online', lockEv({ kind: 'online', online: true }), 'Bridge online'],
    ['rename', lockEv({ kind: 'lockName', name: 'Back Door', actor: jane }), 'Renamed to "Back Door" by Jane Doe'],
    ['privacy mode', lockEv({ kind: 'configFlag', flag: 'privacyMode', value: true }), 'Privacy mode on: PINs do not unlock'],
    ['keypad disabled', lockEv({ kind: 'configFlag', flag: 'keypadEnabled', value: false }), 'Keypad disabled'],
    ['pin added', lockEv({ kind: 'pinManaged', state: 'load', pinUser: { kind: 'person', firstName: 'Sam', lastName: 'Lee' }, actor: jane, masterPin: false }), 'PIN added for Sam Lee by Jane Doe'],
    ['master pin', lockEv({ kind: 'pinManaged', state: 'update', pinUser: { kind: 'masterPin' }, actor: { kind: 'masterPin' }, masterPin: true }), 'Master PIN changed'],
    ['user added', lockEv({ kind: 'membership', change: 'added', user: jane, viaUserHook: false }), 'Jane Doe was given access'],
    ['now owner', lockEv({ kind: 'membership', change: 'userType', user: jane, value: 'superuser', viaUserHook: false }), 'Jane Doe is now an owner'],
    ['schedule', lockEv({ kind: 'membership', change: 'accessType', user: jane, value: 'rule_access_recurring', viaUserHook: false }), 'Jane Doe now has access on a schedule'],
    ['doorbell press', bellEv({ kind: 'doorbellPress', dvrId: 'dvr-1' }), 'Doorbell pressed'],
    ['motion', bellEv({ kind: 'motion', imageUrl: 'https://img/1.jpg' }), 'Motion at Front Door'],
    ['recording', bellEv({ kind: 'videoAvailable', dvrId: 'dvr-1', cause: 'buttonpush' }), 'Recording available (doorbell press)'],
    ['account deleted', { at: 1, kind: 'accountDeleted', event: 'user_deleted' }, 'The Lock Access account was deleted: the plugin unlinked it'],
  ])('%s', (_name, event, words) => {
    expect(describeEvent(event, 'Front Door')).toBe(words);
  });

  it('the lock callback of the plugin\'s own auto-lock is worded as auto-lock and names nobody, not "locked remotely by" the account owner', () => {
    const event = lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: jane });
    const entry = toEntry({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 5, event, own: { autoLockSeconds: 30 } });
    expect(entry.text).toBe('Locked by auto-lock (the door was closed for 30 s)');
    expect(entry.userId).toBeUndefined();
    expect(entry.userName).toBeUndefined();
  });

  it('never names "n/a" placeholders of non-person actors', () => {
    const actor: Actor = { kind: 'person', firstName: 'n/a', lastName: 'n/a' };
    expect(describeEvent(lockEv({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor }), 'X')).toBe('Unlocked by a PIN user at the keypad');
  });
});

describe('README "Settings UI" > Event log: the last N entries per device', () => {
  const entry = (deviceId: string, at: number): EventLogEntry => ({ deviceKind: 'lock', deviceId, deviceName: deviceId, kind: 'doorState', at, text: 'Door opened' });

  it('keeps only the newest N entries of a device and leaves other devices alone', () => {
    const kept = new BoundedEntries(3, [entry('B', 0)]);
    for (let i = 1; i <= 5; i += 1) kept.add(entry('A', i));
    expect(kept.list().filter((e) => e.deviceId === 'A').map((e) => e.at)).toEqual([3, 4, 5]);
    expect(kept.list().filter((e) => e.deviceId === 'B')).toHaveLength(1);
  });

  it('keeps arrival order across devices, also for entries loaded from the file', () => {
    const kept = new BoundedEntries(2, [entry('A', 1), entry('B', 2), entry('A', 3)]);
    kept.add(entry('B', 4));
    kept.add(entry('A', 5));
    expect(kept.list().map((e) => `${e.deviceId}${String(e.at)}`)).toEqual(['B2', 'A3', 'B4', 'A5']);
  });

  it('makes an event\'s words from its record when the list is read, as toEntry makes them, and the same again on every read', () => {
    const kept = new BoundedEntries(2);
    const record = { deviceKind: 'doorbell' as const, deviceId: 'D1', deviceName: 'Door', at: 5, event: bellEv({ kind: 'videoAvailable', dvrId: 'dvr-9', cause: 'buttonpush' }) };
    kept.addRecord(record);
    kept.add(entry('A', 6));
    const first = kept.list();
    expect(first).toEqual([toEntry(record), entry('A', 6)]);
    // Each read hands out new objects: a reader changing one changes nothing kept.
    (first[0] as EventLogEntry).text = 'changed';
    expect(kept.list()).toEqual([toEntry(record), entry('A', 6)]);
  });

  it('words a line again from its code and params, and keeps the words of a line no catalog code makes', () => {
    const worded = { ...toEntry({ deviceKind: 'doorbell', deviceId: 'D1', deviceName: 'Porch', at: 1, event: bellEv({ kind: 'motion', imageUrl: 'https://img/1.jpg' }) }), text: 'stale words' };
    const older = entry('A', 2);
    const later: EventLogEntry = { ...entry('B', 3), how: 'event.fromALaterVersion', params: {}, text: 'A later version\'s line' };
    const kept = new BoundedEntries(5, [worded, older, later]);
    expect(kept.list().map((e) => e.text)).toEqual(['Motion at Porch', 'Door opened', 'A later version\'s line']);
    expect(kept.list()[0]).toMatchObject({ deviceKind: 'doorbell', deviceId: 'D1', how: 'event.motionAt', params: { device: 'Porch' }, imageUrl: 'https://img/1.jpg' });
  });

  it('trims entries loaded from a file written with a larger bound', () => {
    const kept = new BoundedEntries(1, [entry('A', 1), entry('A', 2), entry('A', 3)]);
    expect(kept.list().map((e) => e.at)).toEqual([3]);
  });

  it('keeps the recording id of presses and recordings and the still image of motion', () => {
    expect(toEntry({ deviceKind: 'doorbell', deviceId: 'D1', deviceName: 'Door', at: 5, event: bellEv({ kind: 'videoAvailable', dvrId: 'dvr-9', cause: 'buttonpush' }) }).dvrId).toBe('dvr-9');
    expect(toEntry({ deviceKind: 'doorbell', deviceId: 'D1', deviceName: 'Door', at: 5, event: bellEv({ kind: 'motion', imageUrl: 'https://img/2.jpg' }) }).imageUrl).toBe('https://img/2.jpg');
  });
});

describe('README "Settings UI" > Event log: events.json through Storage', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'event-log-'));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  it('persists on flush, reads back newest first, and survives a reopen', async () => {
    const storage = Storage.under(dir);
    const log = await EventLog.open(storage);
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 10, event: lockEv({ kind: 'doorState', state: 'open' }) });
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 20, event: lockEv({ kind: 'doorState', state: 'closed' }) });
    await log.flush();
    expect((await readEventLog(storage)).map((e) => e.text)).toEqual(['Door closed', 'Door opened']);
    expect((await stat(storage.file('events.json'))).mode & 0o777).toBe(0o600);
    const again = await EventLog.open(storage);
    expect(again.entries().map((e) => e.at)).toEqual([20, 10]);
  });

  it('debounces: a burst of events is one write, made after the debounce delay', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const storage = Storage.under(dir);
    const write = vi.spyOn(storage, 'writeList');
    const log = await EventLog.open(storage, { debounceMs: 1000 });
    for (let i = 0; i < 20; i += 1) log.record({ deviceKind: 'doorbell', deviceId: 'D1', deviceName: 'Bell', at: i, event: bellEv({ kind: 'doorbellPress' }) });
    expect(write).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1000);
    await log.flush();
    expect(write).toHaveBeenCalledTimes(1);
    expect(await readEventLog(storage)).toHaveLength(20);
  });

  it('a broken events.json starts an empty log instead of failing', async () => {
    const storage = Storage.under(dir);
    await storage.ensureDir();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(storage.file('events.json'), '{not json');
    const warnings: string[] = [];
    const log = await EventLog.open(storage, { log: { warn: (m) => warnings.push(m) } });
    expect(log.entries()).toEqual([]);
    expect(warnings[0]).toMatch(/starts empty/);
    expect(await readEventLog(storage)).toEqual([]);
  });

  it('a failed save is logged without a secret and retried with the next event; nothing is lost', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const storage = Storage.under(dir);
    const warnings: string[] = [];
    const log = await EventLog.open(storage, { debounceMs: 1000, log: { warn: (m) => warnings.push(m) } });
    const write = vi.spyOn(storage, 'writeList').mockRejectedValueOnce(new Error('disk full'));
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 1, event: lockEv({ kind: 'doorState', state: 'open' }) });
    await vi.advanceTimersByTimeAsync(1000);
    expect(warnings).toEqual(['The event log could not be saved (disk full); it will be retried with the next event.']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(write).toHaveBeenCalledTimes(1);
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 2, event: lockEv({ kind: 'doorState', state: 'closed' }) });
    await vi.advanceTimersByTimeAsync(1000);
    expect(write).toHaveBeenCalledTimes(2);
    await log.flush();
    expect(write).toHaveBeenCalledTimes(2);
    expect((await readEventLog(storage)).map((e) => e.text)).toEqual(['Door closed', 'Door opened']);
  });
});
