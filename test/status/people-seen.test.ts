import { describe, expect, it } from 'vitest';

import type { Actor, DeviceEvent } from '../../src/model/events.js';
import { toEntry, type EventLogEntry } from '../../src/status/event-entry.js';
import { peopleSeen } from '../../src/status/people-seen.js';

const jamie: Actor = { kind: 'person', userId: 'u-jamie', firstName: 'Jamie', lastName: 'Guest' };
const entry = (event: Record<string, unknown>, at: number): EventLogEntry =>
  toEntry({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', event: { at, lockId: 'L1', ...event } as DeviceEvent, at });

describe('the people seen in the event log (name and UserID)', () => {
  it('an entry about a person carries their userId and name; reserved actors (by hand, One-Touch, master PIN) are nobody', () => {
    expect(entry({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: jamie }, 1)).toMatchObject({ userId: 'u-jamie', userName: 'Jamie Guest' });
    for (const actor of [{ kind: 'manual', userId: 'manualunlock' }, { kind: 'oneTouch', userId: 'onetouchlock', firstName: 'One Touch', lastName: 'Lock' }, { kind: 'masterPin', userId: 'masterpin' }]) {
      const made = entry({ kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor }, 1);
      expect(made.userId).toBeUndefined();
    }
    expect(entry({ kind: 'doorState', state: 'open' }, 1).userId).toBeUndefined();
  });

  it('PIN owners, renamers and members whose access changed are people too', () => {
    expect(entry({ kind: 'pinManaged', state: 'load', pinUser: { kind: 'person', userId: 'u-sam', firstName: 'Sam' }, actor: jamie, masterPin: false }, 1).userId).toBe('u-sam');
    expect(entry({ kind: 'lockName', name: 'Back', actor: jamie }, 1).userId).toBe('u-jamie');
    expect(entry({ kind: 'membership', change: 'added', user: { kind: 'person', userId: 'u-new' }, viaUserHook: true }, 1)).toMatchObject({ userId: 'u-new' });
  });

  it('one row per userId, newest first, with the newest name and a count', () => {
    const log = [
      entry({ kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: jamie }, 300),
      entry({ kind: 'membership', change: 'added', user: { kind: 'person', userId: 'u-new' }, viaUserHook: true }, 200),
      entry({ kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: { ...jamie, firstName: 'Jay' } }, 100),
      entry({ kind: 'doorState', state: 'open' }, 50),
    ];
    expect(peopleSeen(log)).toEqual([
      { userId: 'u-jamie', name: 'Jamie Guest', lastSeen: 300, events: 2 },
      { userId: 'u-new', lastSeen: 200, events: 1 },
    ]);
    expect(peopleSeen([])).toEqual([]);
  });
});
