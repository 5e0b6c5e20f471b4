// One rule for which parts a lock has and their names, from its entry and its state: HomeKit binds
// each part to a service, Matter to an endpoint, and the guard asks the same rule about the door.
import { describe, expect, it } from 'vitest';

import { hasDoorSensor, lockParts, partsKey } from '../../src/model/lock-parts.js';
import { autoLockMayRun } from '../../src/model/lock-guard.js';
import { initialLockState } from '../../src/model/lock-state.js';

const state = initialLockState();

describe('which parts a lock has', () => {
  it('a plain lock: mechanism, management and its battery, named after the lock', () => {
    expect(lockParts({ doorSensor: false }, state, 'Front Door')).toEqual([
      { kind: 'mechanism', name: 'Front Door' },
      { kind: 'management', name: 'Front Door Management' },
      { kind: 'battery', name: 'Front Door Battery' },
    ]);
  });

  it('the door part once configured or once a door event arrived; the keypad battery once a keypad event arrived', () => {
    const seen = { ...state, doorSensorSeen: true, keypadSeen: true };
    const kinds = lockParts({ doorSensor: false }, seen, 'Front Door').map((p) => p.kind);
    expect(kinds).toEqual(['mechanism', 'management', 'door', 'battery', 'keypadBattery']);
    expect(lockParts({ doorSensor: true }, state, 'Front Door').find((p) => p.kind === 'door')).toEqual({ kind: 'door', name: 'Front Door Door', primary: false });
  });

  it('door sensor only: no mechanism and no management; the door leads', () => {
    expect(lockParts({ doorSensor: false, doorSensorOnly: true }, state, 'Gate')).toEqual([
      { kind: 'door', name: 'Gate Door', primary: true },
      { kind: 'battery', name: 'Gate Battery' },
    ]);
  });

  it('the guard\'s alerts while their delays are on, and one trigger per person in config order', () => {
    const parts = lockParts({ doorSensor: true, leftOpenSeconds: 300, leftUnlockedSeconds: 0, people: [{ userId: 'u1', name: 'Jamie' }, { userId: 'u2', name: 'Alex' }] }, state, 'Front Door');
    expect(parts.filter((p) => p.kind === 'leftOpen' || p.kind === 'leftUnlocked')).toEqual([{ kind: 'leftOpen', name: 'Front Door Left Open' }]);
    expect(parts.filter((p) => p.kind === 'person')).toEqual([
      { kind: 'person', name: 'Jamie', userId: 'u1', index: 1 },
      { kind: 'person', name: 'Alex', userId: 'u2', index: 2 },
    ]);
  });

  it('the key changes with a rename or a new part, not with an event that adds none', () => {
    const before = partsKey(lockParts({ doorSensor: true }, state, 'Front Door'));
    expect(partsKey(lockParts({ doorSensor: true }, { ...state, doorSensorSeen: true }, 'Front Door'))).toBe(before);
    expect(partsKey(lockParts({ doorSensor: true }, state, 'Back Door'))).not.toBe(before);
    expect(partsKey(lockParts({ doorSensor: true }, { ...state, keypadSeen: true }, 'Front Door'))).not.toBe(before);
  });
});

describe('"has a door sensor" is one rule, for the views and for the guard', () => {
  it('configured, door sensor only, or a door event seen', () => {
    expect(hasDoorSensor({ doorSensor: false }, state)).toBe(false);
    expect(hasDoorSensor({ doorSensor: true }, state)).toBe(true);
    expect(hasDoorSensor({ doorSensor: false, doorSensorOnly: true }, state)).toBe(true);
    expect(hasDoorSensor({ doorSensor: false }, { doorSensorSeen: true })).toBe(true);
  });

  it('auto-lock may run on a lock whose door sensor is known from its events, as the views show it', () => {
    const closedUnlocked = { ...state, lock: 'unlocked' as const, door: 'closed' as const, doorSensorSeen: true };
    const settings = { doorSensor: hasDoorSensor({ doorSensor: false }, closedUnlocked), autoLockSeconds: 30, leftOpenSeconds: 0, leftUnlockedSeconds: 0 };
    expect(autoLockMayRun(closedUnlocked, settings)).toBe(true);
  });
});
