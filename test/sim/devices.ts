// The simulated accounts' devices: locks (lock, door, battery, keypad, bridge) and doorbells.
import { randomBytes } from 'node:crypto';
import { MAIN_ACCOUNT } from './accounts.js';

export type BridgeState = 'online' | 'offline' | 'busy' | 'timeout' | 'none';
export type LockState = 'locked' | 'unlocked';
export type DoorState = 'open' | 'closed' | 'ajar' | 'init' | 'unknown';
export type LockBatteryLevel = 'lock_state_battery_warning_none' | 'lock_state_battery_warning_2week' | 'lock_state_battery_warning_1week' | 'lock_state_battery_warning_2day';
export type KeypadBatteryLevel = 'keypad_battery_none' | 'keypad_battery_warning' | 'keypad_battery_critical';

export interface LockInput {
  id: string;
  name?: string;
  doorSensor?: boolean;
  keypad?: boolean;
  bridge?: BridgeState;
  lockState?: LockState;
  doorState?: DoorState;
  houseName?: string;
  clockOffsetMs?: number;
  /** The accounts (ids) that hold the lock; the main account by default. */
  accounts?: string[];
}

export interface SimLock {
  id: string;
  name: string;
  doorSensor: boolean;
  keypad: boolean;
  bridge: BridgeState;
  lockState: LockState;
  doorState: DoorState;
  battery: LockBatteryLevel;
  keypadBattery: KeypadBatteryLevel;
  keypadSerialNumber: string;
  keypadEnabled: boolean;
  privacyMode: boolean;
  vacationMode: boolean;
  macAddress: string;
  houseName: string;
  /**
   * How far the lock's own clock is off (ms, negative = behind). Events the lock stamps itself
   * (operations, door states) carry the service's now plus this; 0 is a lock in sync.
   */
  clockOffsetMs: number;
  /** The accounts (ids) that hold it, in the order they got it. */
  accounts: string[];
}

export interface DoorbellInput {
  id: string;
  name?: string;
  /** The accounts (ids) that hold the doorbell; the main account by default. */
  accounts?: string[];
}

export interface SimDoorbell {
  id: string;
  name: string;
  serialNumber: string;
  status: 'online' | 'offline';
  accounts: string[];
}

function macAddress(): string {
  return [...randomBytes(6)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

export function makeLock(input: LockInput): SimLock {
  return {
    id: input.id,
    name: input.name ?? input.id,
    doorSensor: input.doorSensor ?? false,
    keypad: input.keypad ?? false,
    bridge: input.bridge ?? 'online',
    lockState: input.lockState ?? 'locked',
    doorState: input.doorState ?? (input.doorSensor ? 'closed' : 'unknown'),
    battery: 'lock_state_battery_warning_none',
    keypadBattery: 'keypad_battery_none',
    keypadSerialNumber: `K${randomBytes(4).toString('hex').toUpperCase()}`,
    keypadEnabled: true,
    privacyMode: false,
    vacationMode: false,
    macAddress: macAddress(),
    houseName: input.houseName ?? 'Home',
    clockOffsetMs: input.clockOffsetMs ?? 0,
    accounts: [...(input.accounts ?? [MAIN_ACCOUNT])],
  };
}

export function makeDoorbell(input: DoorbellInput): SimDoorbell {
  return { id: input.id, name: input.name ?? input.id, serialNumber: `D${randomBytes(4).toString('hex').toUpperCase()}`, status: 'online', accounts: [...(input.accounts ?? [MAIN_ACCOUNT])] };
}

/** The default demo account: one lock with door sensor and keypad, one doorbell. */
export function demoDevices(locks = 1, doorbells = 1): { locks: LockInput[]; doorbells: DoorbellInput[] } {
  const lockNames = ['Front Door', 'Back Door', 'Garage Door', 'Side Door'];
  const bellNames = ['Front Doorbell', 'Back Doorbell', 'Garage Doorbell'];
  return {
    locks: Array.from({ length: locks }, (_, i) => ({
      id: i === 0 ? 'LOCK-FRONT-DOOR' : `LOCK-${i + 1}`,
      name: lockNames[i] ?? `Lock ${i + 1}`,
      doorSensor: true,
      keypad: true,
    })),
    doorbells: Array.from({ length: doorbells }, (_, i) => ({
      id: i === 0 ? 'DOORBELL-FRONT' : `DOORBELL-${i + 1}`,
      name: bellNames[i] ?? `Doorbell ${i + 1}`,
    })),
  };
}
