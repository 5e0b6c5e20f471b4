// An event log as a plugin that has run for a while leaves it: every device's ring full (50
// entries), of the kinds the soak's callbacks make. Written before Homebridge starts, so a soak
// measures the steady state a restart comes back to rather than the one-time fill of a first run.
import type { DeviceEvent } from '../../src/model/events.js';
import { toEntry, type EventLogEntry } from '../../src/status/event-entry.js';
import { DEFAULT_EVENTS_PER_DEVICE, EVENT_LOG_FILE } from '../../src/status/event-log.js';
import { Storage } from '../../src/storage.js';
import type { Fleet } from './fleet.js';

const person = { kind: 'person' as const, userId: 'user-soak-1', firstName: 'Sam', lastName: 'Soak' };

function lockEvent(lockId: string, n: number, at: number): DeviceEvent {
  switch (n % 4) {
    case 0:
      return { at, lockId, kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: person };
    case 1:
      return { at, lockId, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'manual' } };
    case 2:
      return { at, lockId, kind: 'doorState', state: n % 8 === 2 ? 'open' : 'closed' };
    default:
      return { at, lockId, kind: 'battery', device: 'lock', raw: 'warning' };
  }
}

function doorbellEvent(doorbellId: string, n: number, at: number, baseUrl: string): DeviceEvent {
  const dvrId = `dvr-${doorbellId}-${String(n).padStart(6, '0')}`;
  switch (n % 3) {
    case 0:
      return { at, doorbellId, kind: 'doorbellPress', dvrId };
    case 1:
      return { at, doorbellId, kind: 'motion', imageUrl: `${baseUrl}/media/motion/${doorbellId}/${String(at)}.jpg` };
    default:
      return { at, doorbellId, kind: 'videoAvailable', dvrId, cause: 'buttonpush', startTime: at };
  }
}

/** Writes `events.json` into a Homebridge storage folder, as the plugin writes it, with every device's ring full, the newest a minute old. */
export async function writeFullEventLog(storagePath: string, fleet: Fleet, baseUrl: string, now = Date.now()): Promise<number> {
  const per = DEFAULT_EVENTS_PER_DEVICE;
  const entries: EventLogEntry[] = [];
  for (let n = 0; n < per; n += 1) {
    const at = now - (per - n) * 60_000;
    for (const lock of fleet.locks) entries.push(toEntry({ deviceKind: 'lock', deviceId: lock.id, deviceName: lock.name, at, event: lockEvent(lock.id, n, at) }));
    for (const bell of fleet.doorbells) entries.push(toEntry({ deviceKind: 'doorbell', deviceId: bell.id, deviceName: bell.name, at, event: doorbellEvent(bell.id, n, at, baseUrl) }));
  }
  await Storage.under(storagePath).write(EVENT_LOG_FILE, { version: 1, entries }, { compact: true });
  return entries.length;
}
