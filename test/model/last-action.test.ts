import { describe, expect, it } from 'vitest';

import type { Actor, LockEvent } from '../../src/model/events.js';
import { commandAction, lastActionOf, type LastAction } from '../../src/model/last-action.js';
import { actorOf } from '../../src/callbacks/normalise.js';

const person: Actor = { kind: 'person', userId: 'u-jamie', firstName: 'Jamie', lastName: 'Guest' };
const op = (state: 'locked' | 'unlocked', device: 'lock' | 'keypad', actor: Actor, extra: Partial<LockEvent> = {}): LockEvent =>
  ({ lockId: 'L1', at: 1, kind: 'lockState', state, source: 'operation', device, actor, ...extra }) as LockEvent;

describe('LockLastKnownAction follows the last applied lock operation', () => {
  it.each<[string, LockEvent, LastAction]>([
    ['lock with Device lock and a person (app or API): SECURED_REMOTELY (6)', op('locked', 'lock', person), 'securedRemotely'],
    ['unlock with Device lock and a person (app or API): UNSECURED_REMOTELY (7)', op('unlocked', 'lock', person), 'unsecuredRemotely'],
    ['lock with Device keypad: SECURED_BY_KEYPAD (4)', op('locked', 'keypad', person), 'securedByKeypad'],
    ['unlock with Device keypad: UNSECURED_BY_KEYPAD (5)', op('unlocked', 'keypad', person), 'unsecuredByKeypad'],
    ['onetouchlock: SECURED_BY_KEYPAD (4)', op('locked', 'keypad', actorOf({ UserID: 'onetouchlock', FirstName: 'One Touch', LastName: 'Lock' }), { oneTouch: true }), 'securedByKeypad'],
    ['manuallock: SECURED_PHYSICALLY (9)', op('locked', 'lock', actorOf({ UserID: 'manuallock' })), 'securedPhysically'],
    ['manualunlock: UNSECURED_PHYSICALLY (10)', op('unlocked', 'lock', actorOf({ UserID: 'manualunlock' })), 'unsecuredPhysically'],
    ['an operation whose User names nobody, Device lock: remotely (only manual operations are physical)', op('unlocked', 'lock', { kind: 'unknown' }), 'unsecuredRemotely'],
    ['the master PIN at the keypad: by keypad', op('unlocked', 'keypad', { kind: 'masterPin', userId: 'masterpin' }), 'unsecuredByKeypad'],
  ])('%s', (_row, event, value) => {
    expect(lastActionOf(event)).toBe(value);
  });

  it('a lock or unlock from Apple Home is remote: SECURED_REMOTELY (6) / UNSECURED_REMOTELY (7)', () => {
    expect(commandAction('lock')).toBe('securedRemotely');
    expect(commandAction('unlock')).toBe('unsecuredRemotely');
  });

  it('"status callbacks: no change (a report, not an action)"', () => {
    expect(lastActionOf(op('locked', 'lock', person, { source: 'status' }))).toBeUndefined();
    expect(lastActionOf(op('unlocked', 'lock', person, { source: 'status' }))).toBeUndefined();
  });

  it('events that operate nothing (door, battery, online) change nothing', () => {
    expect(lastActionOf({ lockId: 'L1', at: 1, kind: 'doorState', state: 'open' })).toBeUndefined();
    expect(lastActionOf({ lockId: 'L1', at: 1, kind: 'online', online: false })).toBeUndefined();
    expect(lastActionOf({ lockId: 'L1', at: 1, kind: 'battery', device: 'lock', raw: 'x' })).toBeUndefined();
  });
});
