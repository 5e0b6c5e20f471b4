import { describe, expect, it } from 'vitest';

import { doorAttributes, doorLockAttributes, occupancyAttributes, powerSourceAttributes } from '../../src/matter/matter-attributes.js';
import { initialLockState, reduceLock, type LockState } from '../../src/model/lock-state.js';
import type { LockEvent } from '../../src/model/events.js';

/** The service's words with what HomeKit shows for them (level, low) and what Matter shows. */
const BATTERY_ROWS = [
  ['lock_state_battery_warning_none', 100, false, 0, 200],
  ['lock_state_battery_warning_2week', 15, true, 1, 30],
  ['lock_state_battery_warning_1week', 10, true, 1, 20],
  ['lock_state_battery_warning_2day', 5, true, 2, 10],
  ['battery_level_none', 100, false, 0, 200],
  ['battery_level_warning', 20, true, 1, 40],
  ['battery_level_critical', 5, true, 2, 10],
] as const;

function after(...events: LockEvent[]): LockState {
  return events.reduce((state, event) => reduceLock(state, event, { receivedAt: 1_000_000, signedAt: 1_000_000 }).state, initialLockState());
}

describe('DoorLock lockState from the same state as LockCurrentState', () => {
  it('locked is Locked (1), unlocked is Unlocked (2)', () => {
    expect(doorLockAttributes({ lock: 'locked' })).toEqual({ lockState: 1 });
    expect(doorLockAttributes({ lock: 'unlocked' })).toEqual({ lockState: 2 });
  });

  it('"null until known": a lock nobody has reported on', () => {
    expect(doorLockAttributes(initialLockState())).toEqual({ lockState: null });
  });

  it('follows the reducer, ordering rule included: an older event leaves the newer state', () => {
    const state = after(
      { kind: 'lockState', lockId: 'L', at: 2_000, state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'unknown' } },
      { kind: 'lockState', lockId: 'L', at: 1_000, state: 'locked', source: 'operation', device: 'lock', actor: { kind: 'unknown' } },
    );
    expect(doorLockAttributes(state)).toEqual({ lockState: 2 });
  });
});

describe('the lock battery as a PowerSource', () => {
  it.each(BATTERY_ROWS)('%s (HomeKit %i %%, low %s): batChargeLevel %i, batPercentRemaining %i', (raw, level, low, charge, percent) => {
    expect(powerSourceAttributes({ raw })).toEqual({ batChargeLevel: charge, batPercentRemaining: percent, batReplacementNeeded: charge !== 0 });
    expect(percent).toBe(level * 2);
    expect(charge !== 0).toBe(low);
  });

  it('before any battery event: OK and 100 %, as HomeKit shows it', () => {
    expect(powerSourceAttributes(null)).toEqual({ batChargeLevel: 0, batPercentRemaining: 200, batReplacementNeeded: false });
  });

  it('a word the spec does not list (a saved state of another version) shows as no warning, as HomeKit shows it', () => {
    expect(powerSourceAttributes({ raw: 'battery_level_new_word' })).toEqual(powerSourceAttributes(null));
  });

  it('keypad batteries stay HAP-only: a keypad event leaves the PowerSource alone', () => {
    const state = after({ kind: 'battery', lockId: 'L', at: undefined, device: 'keypad', raw: 'keypad_battery_critical' });
    expect(powerSourceAttributes(state.battery)).toEqual(powerSourceAttributes(null));
  });
});

describe('the door sensor as a ContactSensor', () => {
  it('closed is stateValue true; open and ajar are false', () => {
    expect(doorAttributes({ door: 'closed' })).toEqual({ stateValue: true });
    expect(doorAttributes({ door: 'open' })).toEqual({ stateValue: false });
    expect(doorAttributes({ door: 'ajar' })).toEqual({ stateValue: false });
  });

  it('nothing unknown is shown as known: no position until a real one arrives, init/unknown change nothing', () => {
    expect(doorAttributes(initialLockState())).toBeUndefined();
    const init = after({ kind: 'doorState', lockId: 'L', at: undefined, state: 'init' });
    expect(doorAttributes(init)).toBeUndefined();
    const open = after({ kind: 'doorState', lockId: 'L', at: undefined, state: 'open' }, { kind: 'doorState', lockId: 'L', at: undefined, state: 'unknown' });
    expect(doorAttributes(open)).toEqual({ stateValue: false });
  });
});

describe('motion as an OccupancySensor', () => {
  it('occupied while motion is on', () => {
    expect(occupancyAttributes(true)).toEqual({ occupancy: { occupied: true } });
    expect(occupancyAttributes(false)).toEqual({ occupancy: { occupied: false } });
  });
});
