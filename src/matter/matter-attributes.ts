// Pure mapping from a device's state to Matter attribute values. The state is the model's (the
// same HomeKit shows); nothing here reduces events a second time.
import { batteryWord, type BatteryWarning } from '../model/battery-words.js';
import type { LockState } from '../model/lock-state.js';

/** DoorLock.LockState: Locked 1, Unlocked 2; null while nobody has told us. */
export type MatterLockState = 1 | 2 | null;

/** PowerSource.BatChargeLevel: Ok 0, Warning 1, Critical 2 (Homebridge 2.4 exports no enum for it). */
export type BatChargeLevel = 0 | 1 | 2;

export interface DoorLockAttributes {
  lockState: MatterLockState;
}

export interface PowerSourceAttributes {
  batChargeLevel: BatChargeLevel;
  /** Half-percent units: 200 is 100 %. */
  batPercentRemaining: number;
  batReplacementNeeded: boolean;
}

export interface BooleanStateAttributes {
  /** ContactSensor: true is closed (contact), false is open or ajar. */
  stateValue: boolean;
}

export interface OccupancyAttributes {
  occupancy: { occupied: boolean };
}

export function doorLockAttributes(state: Pick<LockState, 'lock'>): DoorLockAttributes {
  switch (state.lock) {
    case 'locked':
      return { lockState: 1 };
    case 'unlocked':
      return { lockState: 2 };
    case 'unknown':
      return { lockState: null };
  }
}


/** Matter's charge level for each warning of the service's words. */
const CHARGE_LEVEL: Record<BatteryWarning, BatChargeLevel> = { none: 0, low: 1, critical: 2 };

/**
 * The lock battery as a PowerSource. Before any battery event the service has not warned, which it
 * only does when batteries run low: OK and 100 %, as HomeKit shows.
 */
export function powerSourceAttributes(battery: LockState['battery']): PowerSourceAttributes {
  const word = battery ? batteryWord(battery.raw) : undefined;
  const batChargeLevel = CHARGE_LEVEL[word?.warning ?? 'none'];
  return { batChargeLevel, batPercentRemaining: Math.round((word?.percent ?? 100) * 2), batReplacementNeeded: batChargeLevel !== 0 };
}

/** The door as a ContactSensor, or undefined while no real position (closed/open/ajar) has arrived. */
export function doorAttributes(state: Pick<LockState, 'door'>): BooleanStateAttributes | undefined {
  switch (state.door) {
    case 'closed':
      return { stateValue: true };
    case 'open':
    case 'ajar':
      return { stateValue: false };
    case 'unknown':
      return undefined;
  }
}

export function occupancyAttributes(motion: boolean): OccupancyAttributes {
  return { occupancy: { occupied: motion } };
}
