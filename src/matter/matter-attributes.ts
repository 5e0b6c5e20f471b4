// Pure mapping from the device state HomeKit shows to Matter attribute values. The
// state comes from the HAP accessories' reducers; nothing here reduces events a second time.
import type { LockState } from '../model/lock-state.js';
import { BATTERY_TABLE } from '../model/battery-table.js';

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


/** Lowest HAP level of the battery table (2 days left, critical): anything at or under it is critical. */
const CRITICAL_LEVEL = 5;

/**
 * The lock battery as a PowerSource. Before any battery event the service has not warned, which it
 * only does when batteries run low: OK and 100 %, as HomeKit shows. A word the table does not know
 * falls back to what HomeKit shows (its level and low flag).
 */
export function powerSourceAttributes(battery: LockState['battery']): PowerSourceAttributes {
  const level = battery?.level ?? 100;
  const low = battery?.low ?? false;
  const known = battery ? BATTERY_TABLE[battery.raw]?.charge : 0;
  const batChargeLevel: BatChargeLevel = known ?? (!low ? 0 : level <= CRITICAL_LEVEL ? 2 : 1);
  return { batChargeLevel, batPercentRemaining: Math.round(level * 2), batReplacementNeeded: batChargeLevel !== 0 };
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
