// A lock as config and discovery describe it: its name and settings. The lock device is made from
// it, and its parts follow from it (lock-parts.ts).
import type { Person } from './person-triggers.js';

export interface LockEntry {
  id: string;
  name: string;
  doorSensor: boolean;
  /** The lock itself is in HomeKit on its own: only its door sensor is shown here. */
  doorSensorOnly?: boolean | undefined;
  /** Whose unlocks and locks get a trigger of their own. */
  people?: readonly Person[] | undefined;
  /** The guard (absent or 0: off). */
  autoLockSeconds?: number | undefined;
  leftOpenSeconds?: number | undefined;
  leftUnlockedSeconds?: number | undefined;
}
