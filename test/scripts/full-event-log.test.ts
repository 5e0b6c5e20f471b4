// The soak's starting event log: what the plugin itself reads back from it, every device's ring full.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { fleet } from '../../bench/lib/fleet.js';
import { writeFullEventLog } from '../../bench/lib/full-event-log.js';
import { DEFAULT_EVENTS_PER_DEVICE, EventLog } from '../../src/status/event-log.js';
import { Storage } from '../../src/storage.js';

describe('the soak\'s full event log', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is read by the plugin\'s event log whole: every device with a full ring, in time order', async () => {
    dir = await mkdtemp(join(tmpdir(), 'full-event-log-'));
    const f = fleet(3, 2);
    const written = await writeFullEventLog(dir, f, 'http://127.0.0.1:1', 10_000_000);
    const log = await EventLog.open(Storage.under(dir));
    const entries = log.entries();
    expect(written).toBe(5 * DEFAULT_EVENTS_PER_DEVICE);
    expect(entries).toHaveLength(written);
    for (const id of [...f.locks, ...f.doorbells].map((d) => d.id)) {
      expect(entries.filter((e) => e.deviceId === id)).toHaveLength(DEFAULT_EVENTS_PER_DEVICE);
    }
    expect(new Set(entries.map((e) => e.kind))).toEqual(new Set(['lockState', 'doorState', 'battery', 'doorbellPress', 'motion', 'videoAvailable']));
    const times = entries.map((e) => e.at);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });
});
