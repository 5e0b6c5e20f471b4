// How the lock was last operated, as a word of the model. Each view says it its own way (HomeKit's
// LockLastKnownAction numbers); the word is part of the lock's state, so it survives a restart.
import type { LockEvent } from './events.js';

export const LAST_ACTIONS = [
  'securedByKeypad',
  'unsecuredByKeypad',
  'securedRemotely',
  'unsecuredRemotely',
  'securedPhysically',
  'unsecuredPhysically',
  /** The plugin's own auto-lock (the lock was unlocked with the door closed for that long). */
  'securedByAutoLock',
] as const;

export type LastAction = (typeof LAST_ACTIONS)[number];

/**
 * The action an applied lock event stands for, or undefined when it is not an action: a `status`
 * callback is a report of the present state, and events of other kinds never operate the lock.
 */
export function lastActionOf(event: LockEvent): LastAction | undefined {
  if (event.kind !== 'lockState' || event.source !== 'operation') return undefined;
  const locked = event.state === 'locked';
  // Turned by hand: the service names the reserved manuallock / manualunlock actor.
  if (event.actor.kind === 'manual') return locked ? 'securedPhysically' : 'unsecuredPhysically';
  // A PIN or One-Touch at the keypad (normalise marks One-Touch as a keypad operation).
  if (event.device === 'keypad' || event.oneTouch === true || event.actor.kind === 'oneTouch') {
    return locked ? 'securedByKeypad' : 'unsecuredByKeypad';
  }
  // Device `lock` without the manual actor: the app, the API, or Apple Home through the service.
  return locked ? 'securedRemotely' : 'unsecuredRemotely';
}

/** A lock or unlock sent from Apple Home or a Matter controller that the service carried out. */
export function commandAction(action: 'lock' | 'unlock'): LastAction {
  return action === 'lock' ? 'securedRemotely' : 'unsecuredRemotely';
}
