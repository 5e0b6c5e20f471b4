// How the lock was last operated, as HomeKit's LockLastKnownAction says it. Pure: the numbers are
// HAP's, so the table needs no HAP import.
import type { LockEvent } from './events.js';

/** HAP LockLastKnownAction values this plugin shows. */
export const LAST_ACTION = {
  securedByKeypad: 4,
  /** The plugin's own auto-lock (the lock was unlocked with the door closed for that long). */
  securedByAutoSecureTimeout: 8,
  unsecuredByKeypad: 5,
  securedRemotely: 6,
  unsecuredRemotely: 7,
  securedPhysically: 9,
  unsecuredPhysically: 10,
} as const;

export type LastActionValue = (typeof LAST_ACTION)[keyof typeof LAST_ACTION];

/**
 * The action an applied lock event stands for, or undefined when it is not an action: a `status`
 * callback is a report of the present state, and events of other kinds never operate the lock.
 */
export function lastActionOf(event: LockEvent): LastActionValue | undefined {
  if (event.kind !== 'lockState' || event.source !== 'operation') return undefined;
  const locked = event.state === 'locked';
  // Turned by hand: the service names the reserved manuallock / manualunlock actor.
  if (event.actor.kind === 'manual') return locked ? LAST_ACTION.securedPhysically : LAST_ACTION.unsecuredPhysically;
  // A PIN or One-Touch at the keypad (normalise marks One-Touch as a keypad operation).
  if (event.device === 'keypad' || event.oneTouch === true || event.actor.kind === 'oneTouch') {
    return locked ? LAST_ACTION.securedByKeypad : LAST_ACTION.unsecuredByKeypad;
  }
  // Device `lock` without the manual actor: the app, the API, or Apple Home through the service.
  return locked ? LAST_ACTION.securedRemotely : LAST_ACTION.unsecuredRemotely;
}

/** A lock or unlock sent from Apple Home that the service carried out. */
export function commandAction(action: 'lock' | 'unlock'): LastActionValue {
  return action === 'lock' ? LAST_ACTION.securedRemotely : LAST_ACTION.unsecuredRemotely;
}
