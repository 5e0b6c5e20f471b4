import { describe, expect, it } from 'vitest';

import { doorbellEntry, lockEntry } from '../../src/model/device-entry.js';
import { DEFAULT_MOTION_TIMEOUT_SECONDS } from '../../src/settings.js';

describe('a device entry: the settings every entry has, and of the others only those that are on', () => {
  it('defaults fill what is not given; settings that are off are left out, so two entries that mean the same are equal', () => {
    expect(lockEntry('L1', 'Front')).toEqual({ kind: 'lock', id: 'L1', name: 'Front', doorSensor: false });
    expect(lockEntry('L1', 'Front', { doorSensor: false, autoLockSeconds: 0, doorSensorOnly: false })).toEqual(lockEntry('L1', 'Front'));
    expect(lockEntry('L1', 'Front', { doorSensor: true, autoLockSeconds: 30 })).toEqual({ kind: 'lock', id: 'L1', name: 'Front', doorSensor: true, autoLockSeconds: 30 });
    expect(doorbellEntry('B1', 'Porch')).toEqual({ kind: 'doorbell', id: 'B1', name: 'Porch', motionTimeoutSeconds: DEFAULT_MOTION_TIMEOUT_SECONDS });
    expect(doorbellEntry('B1', 'Porch', { motionTimeoutSeconds: 5 }).motionTimeoutSeconds).toBe(5);
  });

  it('each entry is an object of its own: one changed leaves the next entry\'s defaults as they were', () => {
    const first = lockEntry('L1', 'Front') as { doorSensor: boolean };
    first.doorSensor = true;
    expect(lockEntry('L2', 'Back')).toEqual({ kind: 'lock', id: 'L2', name: 'Back', doorSensor: false });
    const bell = doorbellEntry('B1', 'Porch') as { motionTimeoutSeconds: number };
    bell.motionTimeoutSeconds = 99;
    expect(doorbellEntry('B2', 'Side').motionTimeoutSeconds).toBe(DEFAULT_MOTION_TIMEOUT_SECONDS);
  });
});
