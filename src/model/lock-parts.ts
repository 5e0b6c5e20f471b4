// Which parts a lock has and what they are called, from its entry and its state: the one rule both
// views follow. HomeKit binds each part to a service, Matter to an endpoint or a cluster; a part
// the rule no longer lists is removed by the view. A new part is a new kind here plus one binding
// in each view (the views' switches over `kind` do not compile until they bind it).
import type { LockEntry } from './device-entry.js';
import type { LockState } from './lock-state.js';

export type LockPart =
  /** Lock and unlock; the lock's main part unless only its door sensor is shown. */
  | { kind: 'mechanism'; name: string }
  /** How it was last operated, and the auto-lock delay. */
  | { kind: 'management'; name: string }
  /** The door contact; the main part of a door-sensor-only lock. */
  | { kind: 'door'; name: string; primary: boolean }
  | { kind: 'battery'; name: string }
  | { kind: 'keypadBattery'; name: string }
  /** The guard's alerts: the door open, the lock unlocked, for longer than their delay. */
  | { kind: 'leftOpen'; name: string }
  | { kind: 'leftUnlocked'; name: string }
  /** A person's automation trigger (`index` from 1, in the order of the config). */
  | { kind: 'person'; name: string; userId: string; index: number };

export type LockPartKind = LockPart['kind'];

/** What of an entry the parts depend on. */
export type PartsEntry = Pick<LockEntry, 'doorSensor' | 'doorSensorOnly' | 'people' | 'leftOpenSeconds' | 'leftUnlockedSeconds'>;

/**
 * The user said the lock has a door sensor (`doorSensor`, or door-sensor-only). Auto-lock needs
 * this: a sensor known only from stray reports is shown, but never trusted to close the door on.
 */
export function doorSensorDeclared(entry: Pick<LockEntry, 'doorSensor' | 'doorSensorOnly'>): boolean {
  return entry.doorSensor || entry.doorSensorOnly === true;
}

/** The lock has a door sensor to show: declared, or a door event has arrived. */
export function hasDoorSensor(entry: Pick<LockEntry, 'doorSensor' | 'doorSensorOnly'>, state: Pick<LockState, 'doorSensorSeen'>): boolean {
  return doorSensorDeclared(entry) || state.doorSensorSeen;
}

/** The lock's parts, named after the lock (`name`: the name the views show). */
export function lockParts(entry: PartsEntry, state: Pick<LockState, 'doorSensorSeen' | 'keypadSeen'>, name: string): LockPart[] {
  const doorOnly = entry.doorSensorOnly === true;
  const parts: LockPart[] = [];
  // The lock itself is in HomeKit on its own: neither its mechanism nor its management is shown here.
  if (!doorOnly) parts.push({ kind: 'mechanism', name }, { kind: 'management', name: `${name} Management` });
  if (hasDoorSensor(entry, state)) parts.push({ kind: 'door', name: `${name} Door`, primary: doorOnly });
  parts.push({ kind: 'battery', name: `${name} Battery` });
  if (state.keypadSeen) parts.push({ kind: 'keypadBattery', name: `${name} Keypad Battery` });
  if ((entry.leftOpenSeconds ?? 0) > 0) parts.push({ kind: 'leftOpen', name: `${name} Left Open` });
  if ((entry.leftUnlockedSeconds ?? 0) > 0) parts.push({ kind: 'leftUnlocked', name: `${name} Left Unlocked` });
  for (const [index, person] of (entry.people ?? []).entries()) parts.push({ kind: 'person', name: person.name, userId: person.userId, index: index + 1 });
  return parts;
}

/**
 * The state's share of what decides the parts (the entry's share changes only with the entry, which
 * views are told of on its own). Compared on every event instead of building the parts again.
 */
export interface PartsFacts {
  name: string;
  doorSensorSeen: boolean;
  keypadSeen: boolean;
}

export function partsFacts(state: Pick<LockState, 'doorSensorSeen' | 'keypadSeen'>, name: string): PartsFacts {
  return { name, doorSensorSeen: state.doorSensorSeen, keypadSeen: state.keypadSeen };
}

/** Whether the parts may differ from those built from `facts` (the entry unchanged). */
export function partsFactsChanged(facts: PartsFacts, state: Pick<LockState, 'doorSensorSeen' | 'keypadSeen'>, name: string): boolean {
  return facts.name !== name || facts.doorSensorSeen !== state.doorSensorSeen || facts.keypadSeen !== state.keypadSeen;
}

/** What the parts are, as one string: a view re-binds when it changes. */
export function partsKey(parts: readonly LockPart[]): string {
  return parts.map((part) => `${part.kind}\t${part.name}`).join('\n');
}
