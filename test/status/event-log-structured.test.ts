// events.json entries are stored structured: each line's catalog code (`how`) and its params
// (names, numbers, another line), worded by the page in its language; `text` keeps the English
// line for logs and diagnostics. A file an earlier version wrote (only `text`) still reads, and
// its entries keep their words.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Actor, DeviceEvent } from '../../src/model/events.js';
import { toEntry } from '../../src/status/event-entry.js';
import { EventLog, readEventLog } from '../../src/status/event-log.js';
import { Storage } from '../../src/storage.js';

const jane: Actor = { kind: 'person', userId: 'u-1', firstName: 'Jane', lastName: 'Doe' };
const lockEv = (e: Record<string, unknown>): DeviceEvent => ({ at: 1, lockId: 'L1', ...e }) as DeviceEvent;
const entryOf = (event: DeviceEvent, own?: { autoLockSeconds: number }) =>
  toEntry({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 5, event, ...(own ? { own } : {}) });

describe('events.json entries: the line as a code with params, the English text beside it', () => {
  it('a keypad unlock by a person: who, how and where, as the code and the name', () => {
    const entry = entryOf(lockEv({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: jane }));
    expect(entry).toMatchObject({ kind: 'lockState', how: 'event.unlocked.keypadBy', params: { actor: 'Jane Doe' }, text: 'Unlocked by Jane Doe at the keypad', userId: 'u-1' });
  });

  it('nobody named: the unnamed person is a word of the catalog, not English in a param', () => {
    const entry = entryOf(lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: { kind: 'person' } }));
    expect(entry).toMatchObject({ how: 'event.locked.keypadBy', params: { actor: { code: 'event.pinUser', params: {} } }, text: 'Locked by a PIN user at the keypad' });
  });

  it('the plugin\'s auto-lock: its code and the seconds as a number', () => {
    const entry = entryOf(lockEv({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: jane }), { autoLockSeconds: 30 });
    expect(entry).toMatchObject({ how: 'event.autoLock', params: { seconds: 30 } });
  });

  it('a PIN change with its schedule and who made it: one line inside the next', () => {
    const entry = entryOf(lockEv({ kind: 'pinManaged', state: 'load', pinUser: jane, actor: { kind: 'person', userId: 'u-2', firstName: 'Max' }, masterPin: false, schedule: { code: 'schedule.days', params: { days: 'MO-FR' }, text: 'Mon-Fri' } }));
    expect(entry.how).toBe('event.withActor');
    expect(entry.params).toMatchObject({ actor: 'Max', line: { code: 'event.withSchedule', params: { schedule: { code: 'schedule.days', params: { days: 'MO-FR' } }, line: { code: 'event.pinFor.load', params: { owner: 'Jane Doe' } } } } });
    expect(entry.text).toBe('PIN added for Jane Doe (Mon-Fri) by Max');
  });
});

describe('events.json an earlier version wrote: entries with only their words still show', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'event-log-old-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the old entries as they were, and new entries beside them carry their code', async () => {
    const storage = Storage.under(dir);
    await mkdir(join(dir, 'lock-access'), { recursive: true });
    // As the previous version wrote it: `text` only.
    await writeFile(storage.file('events.json'), JSON.stringify({ version: 1, entries: [
      { deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', kind: 'lockState', at: 1, text: 'Unlocked by Jane Doe at the keypad', userId: 'u-1', userName: 'Jane Doe' },
    ] }));
    const old = await readEventLog(storage);
    expect(old).toEqual([{ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', kind: 'lockState', at: 1, text: 'Unlocked by Jane Doe at the keypad', userId: 'u-1', userName: 'Jane Doe' }]);
    const log = await EventLog.open(storage);
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 2, event: lockEv({ kind: 'doorState', state: 'open' }) });
    await log.flush();
    const both = await readEventLog(storage);
    expect(both.map((e) => [e.how, e.text])).toEqual([['event.door.open', 'Door opened'], [undefined, 'Unlocked by Jane Doe at the keypad']]);
  });
});
