import { describe, expect, it } from 'vitest';

import type { Actor, LockEvent } from '../../src/model/events.js';
import { personSubtype, personTrigger, triggerKey, type TriggerContext } from '../../src/model/person-triggers.js';

const NOW = 1_800_000_000_000;
const jamie: Actor = { kind: 'person', userId: 'u-jamie', firstName: 'Jamie' };
const alex: Actor = { kind: 'person', userId: 'u-alex', firstName: 'Alex' };
const op = (state: 'locked' | 'unlocked', extra: Partial<Extract<LockEvent, { kind: 'lockState' }>> = {}): Extract<LockEvent, { kind: 'lockState' }> => ({
  lockId: 'L1', at: NOW - 1_000, eventId: 'ev-1', kind: 'lockState', state, source: 'operation', device: 'lock', actor: jamie, ...extra,
});
const ctx = (extra: Partial<TriggerContext> = {}): TriggerContext => ({ receivedAt: NOW, signedAt: NOW, applied: true, people: new Set(['u-jamie']), lastFired: undefined, ...extra });

describe('a person\'s trigger fires once per real event', () => {
  it('unlock by the person: SINGLE_PRESS; lock: DOUBLE_PRESS (app, API or keypad)', () => {
    expect(personTrigger(op('unlocked'), ctx())).toEqual({ fire: true, userId: 'u-jamie', press: 'single', key: 'id:ev-1' });
    expect(personTrigger(op('locked'), ctx())).toMatchObject({ fire: true, press: 'double' });
    expect(personTrigger(op('unlocked', { device: 'keypad' }), ctx())).toMatchObject({ fire: true, press: 'single' });
  });

  it('never for another person, or a person without a trigger', () => {
    expect(personTrigger(op('unlocked', { actor: alex }), ctx())).toEqual({ fire: false, reason: 'this person has no trigger' });
  });

  it('never for a status report', () => {
    expect(personTrigger(op('unlocked', { source: 'status' }), ctx())).toMatchObject({ fire: false, reason: 'a status report, not an action' });
  });

  it('never for an event that ordering ignores', () => {
    expect(personTrigger(op('unlocked'), ctx({ applied: false }))).toMatchObject({ fire: false, reason: 'an older event arrived after a newer one' });
  });

  it('never for a redelivery: the same EventID, or (without one) the same person, state and time', () => {
    expect(personTrigger(op('unlocked'), ctx({ lastFired: 'id:ev-1' }))).toMatchObject({ fire: false, reason: 'the same event arrived twice' });
    const noId = op('unlocked', { eventId: undefined });
    const key = triggerKey(noId);
    expect(key).toBe(`at:u-jamie:unlocked:${NOW - 1_000}`);
    expect(personTrigger(noId, ctx({ lastFired: key }))).toMatchObject({ fire: false });
    // The next real event (a new id) fires again.
    expect(personTrigger(op('locked', { eventId: 'ev-2' }), ctx({ lastFired: 'id:ev-1' }))).toMatchObject({ fire: true });
  });

  it('never for an event older than 60 s by its own time, or by the signature time when it has none', () => {
    expect(personTrigger(op('unlocked', { at: NOW - 60_000 }), ctx())).toMatchObject({ fire: true });
    expect(personTrigger(op('unlocked', { at: NOW - 60_001 }), ctx())).toEqual({ fire: false, reason: 'it arrived more than 60 seconds late' });
    expect(personTrigger(op('unlocked', { at: undefined }), ctx({ signedAt: NOW - 61_000 }))).toMatchObject({ fire: false });
    expect(personTrigger(op('unlocked', { at: undefined }), ctx({ signedAt: NOW - 5_000 }))).toMatchObject({ fire: true, key: 'id:ev-1' });
  });

  it('never for reserved actors (by hand, One-Touch, master PIN) or other kinds of event', () => {
    for (const actor of [{ kind: 'manual', userId: 'manualunlock' }, { kind: 'oneTouch', userId: 'onetouchlock' }, { kind: 'masterPin', userId: 'masterpin' }] as Actor[]) {
      expect(personTrigger(op('unlocked', { actor }), ctx({ people: new Set([actor.userId ?? '']) }))).toMatchObject({ fire: false, reason: 'not done by a person' });
    }
    expect(personTrigger({ lockId: 'L1', at: NOW, kind: 'doorState', state: 'open' }, ctx())).toMatchObject({ fire: false });
  });

  it('the switch subtype is person:<userId>', () => {
    expect(personSubtype('u-jamie')).toBe('person:u-jamie');
  });
});
