// The token rules as one pure function, checked for every state and event, and by properties over
// any sequence of events: a valid refresh token is never dropped, a used refresh token is never
// sent again, and nothing after an unlink brings a token back. Then the arithmetic of the
// keep-alive and refresh schedule.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { DAY_MS, MAX_TIMER_MS, refreshDueAt, refreshMarginMs, retryDelayMs, timerDelay } from '../../../src/cloud/tokens/keep-alive.js';
import { expiryOf } from '../../../src/cloud/http/oauth.js';
import { canAuthenticate, initialState, step, type MachineState, type TokenEffect, type TokenEvent } from '../../../src/cloud/tokens/token-machine.js';

const linked: MachineState = { link: 'linked', granting: false, unlinks: 0, refreshToken: 'rt-1', access: { token: 'at-1', expiresAt: 1000 } };

/** One of each kind of state the plugin can be in. */
const STATES = {
  fresh: initialState,
  linked,
  granting: { ...linked, granting: true },
  withoutRefresh: { link: 'linked', granting: false, unlinks: 0, refreshLost: 'uncertain', access: { token: 'at-1' } },
  reauthorizationNeeded: { link: 'reauthorizationNeeded', granting: false, unlinks: 0, refreshLost: 'rejected', access: { token: 'at-1' } },
  lostEverything: { link: 'reauthorizationNeeded', granting: false, unlinks: 0, refreshLost: 'rejected' },
  waitingCheck: { ...linked, refreshToken: 'rt-2', pending: { token: 'at-2' } },
  unsaved: { ...linked, refreshToken: 'rt-2', unsaved: 'the disk is full (ENOSPC)' },
  settingsWrong: { ...linked, settingsProblem: 'clientSecret' },
  tombstone: { link: 'unlinked', granting: false, unlinks: 1 },
} satisfies Record<string, MachineState>;

/** One of each event, with payloads that match the states above where it matters. */
const EVENTS = {
  seeded: { type: 'seeded', refreshToken: 'rt-seed' },
  linked: { type: 'linked', refreshToken: 'rt-link', pending: { token: 'at-link' } },
  refreshDue: { type: 'refreshDue' },
  grantSucceeded: { type: 'grantSucceeded', refreshToken: 'rt-next', access: { token: 'at-next' } },
  grantSpent: { type: 'grantFailed', failure: { kind: 'spent' } },
  grantSettings: { type: 'grantFailed', failure: { kind: 'settings', setting: 'clientSecret' } },
  grantTransient: { type: 'grantFailed', failure: { kind: 'transient' } },
  grantLost: { type: 'grantFailed', failure: { kind: 'lost' } },
  checkedOk: { type: 'checked', token: 'at-2', result: 'ok' },
  checkedRefused: { type: 'checked', token: 'at-2', result: 'unauthorized' },
  checkedNoAnswer: { type: 'checked', token: 'at-2', result: 'inconclusive' },
  writeFailed: { type: 'writeFailed', reason: 'the file system is read-only (EROFS)' },
  writeSucceeded: { type: 'writeSucceeded' },
  headerToken: { type: 'headerToken', token: 'at-header', unlinksWhenSent: 0 },
  staleHeaderToken: { type: 'headerToken', token: 'at-stale', unlinksWhenSent: -1 },
  unauthorized: { type: 'unauthorized', token: 'at-1' },
  unlinked: { type: 'unlinked' },
} satisfies Record<string, TokenEvent>;

const DROPS_REFRESH = new Set(['seeded', 'linked', 'grantSucceeded', 'grantSpent', 'grantLost', 'unlinked']);

describe('every state x every event', () => {
  for (const [stateName, state] of Object.entries(STATES) as [string, MachineState][]) {
    for (const [eventName, event] of Object.entries(EVENTS) as [string, TokenEvent][]) {
      it(`${stateName} + ${eventName}`, () => {
        const given = structuredClone(state);
        const { state: next, effects } = step(state, event);
        // A refresh token is only ever replaced, refused, possibly used, or unlinked.
        if (state.refreshToken !== undefined && !DROPS_REFRESH.has(eventName)) expect(next.refreshToken).toBe(state.refreshToken);
        // Only an unused refresh token that is not already on its way is ever sent.
        for (const effect of effects.filter((e): e is Extract<TokenEffect, { type: 'callRefresh' }> => e.type === 'callRefresh')) {
          expect(state.granting).toBe(false);
          expect(effect.refreshToken).toBe(state.refreshToken);
          expect(state.unsaved).toBeUndefined();
          expect(next.granting).toBe(true);
        }
        // While unlinked only a new link brings tokens.
        if (state.link === 'unlinked' && eventName !== 'seeded' && eventName !== 'linked') {
          expect(next.link).toBe('unlinked');
          expect(canAuthenticate(next)).toBe(false);
        }
        if (eventName === 'unlinked') {
          expect(next).toEqual({ link: 'unlinked', granting: false, unlinks: state.unlinks + 1 });
          expect(effects).toEqual([{ type: 'persist' }]);
        }
        // The machine never changes the state it was given.
        expect(state).toEqual(given);
      });
    }
  }
});

describe('the transitions the spec and the design name', () => {
  it('refresh due: the grant is marked and written before the request goes out', () => {
    expect(step(linked, { type: 'refreshDue' })).toEqual({
      state: { ...linked, granting: true },
      effects: [{ type: 'persist' }, { type: 'callRefresh', refreshToken: 'rt-1' }],
    });
  });

  it('a grant: the successor is written first, the new access token is checked before the old one goes', () => {
    const { state, effects } = step(STATES.granting, EVENTS.grantSucceeded);
    expect(state).toMatchObject({ refreshToken: 'rt-next', pending: { token: 'at-next' }, access: { token: 'at-1' }, granting: false });
    expect(effects).toEqual([{ type: 'persist' }, { type: 'checkToken', token: 'at-next' }]);
    expect(step(state, { type: 'checked', token: 'at-next', result: 'ok' }).state.access).toEqual({ token: 'at-next' });
  });

  it('invalid_grant: the token is gone, re-authorization needed, the access token kept while it works', () => {
    const { state, effects } = step(STATES.granting, EVENTS.grantSpent);
    expect(state).toMatchObject({ link: 'reauthorizationNeeded', refreshLost: 'rejected', access: { token: 'at-1' } });
    expect(state.refreshToken).toBeUndefined();
    expect(effects).toContainEqual({ type: 'warn', about: 'reauthorization' });
  });

  it('a client error: the refresh token stays, one warning naming the setting, retried later', () => {
    const first = step(STATES.granting, EVENTS.grantSettings);
    expect(first.state).toMatchObject({ refreshToken: 'rt-1', settingsProblem: 'clientSecret', link: 'linked' });
    expect(first.effects).toEqual([{ type: 'persist' }, { type: 'warn', about: 'settings' }, { type: 'scheduleRetry', what: 'refresh' }]);
    const again = step(step(first.state, { type: 'refreshDue' }).state, EVENTS.grantSettings);
    expect(again.effects).not.toContainEqual({ type: 'warn', about: 'settings' });
    const fixed = step(step(again.state, { type: 'refreshDue' }).state, EVENTS.grantSucceeded);
    expect(fixed.state.settingsProblem).toBeUndefined();
  });

  it('a storage fault: warned once per reason, retried; a grant waits for the save; saved, it says so', () => {
    const failed = step(linked, EVENTS.writeFailed);
    expect(failed.effects).toEqual([{ type: 'warn', about: 'notSaved' }, { type: 'scheduleRetry', what: 'save' }]);
    expect(step(failed.state, EVENTS.writeFailed).effects).toEqual([{ type: 'scheduleRetry', what: 'save' }]);
    expect(step(failed.state, { type: 'refreshDue' }).effects).toEqual([{ type: 'persist' }]);
    expect(step(failed.state, { type: 'writeSucceeded' })).toEqual({ state: linked, effects: [{ type: 'info', about: 'saved' }] });
  });

  it('a 401: one refresh when a refresh token is left, else re-authorization needed', () => {
    expect(step(linked, EVENTS.unauthorized).effects).toContainEqual({ type: 'callRefresh', refreshToken: 'rt-1' });
    const lost = step(STATES.withoutRefresh, EVENTS.unauthorized);
    expect(lost.state.link).toBe('reauthorizationNeeded');
    expect(canAuthenticate(lost.state)).toBe(false);
  });

  it('header tokens: used at once, but never from a request sent before an unlink', () => {
    expect(step(linked, EVENTS.headerToken).state.access).toEqual({ token: 'at-header', expiresAt: 1000 });
    const relinked = step(step(linked, EVENTS.unlinked).state, EVENTS.linked).state;
    expect(step(relinked, { type: 'headerToken', token: 'at-old', unlinksWhenSent: 0 }).state).toEqual(relinked);
  });
});

// --- properties over any sequence of events

const tokenArb = fc.constantFrom('t1', 't2', 't3', 't4', 't5', 't6');
const eventArb: fc.Arbitrary<TokenEvent> = fc.oneof(
  fc.record({ type: fc.constant('seeded' as const), refreshToken: tokenArb }),
  fc.record({ type: fc.constant('linked' as const), refreshToken: tokenArb }),
  fc.constant({ type: 'refreshDue' as const }),
  fc.record({ type: fc.constant('grantSucceeded' as const), refreshToken: tokenArb, access: fc.record({ token: tokenArb }) }),
  fc.constantFrom<TokenEvent>(
    { type: 'grantFailed', failure: { kind: 'spent' } },
    { type: 'grantFailed', failure: { kind: 'lost' } },
    { type: 'grantFailed', failure: { kind: 'transient' } },
    { type: 'grantFailed', failure: { kind: 'settings', setting: 'clientId' } },
    { type: 'writeSucceeded' },
    { type: 'unlinked' },
  ),
  fc.record({ type: fc.constant('checked' as const), token: tokenArb, result: fc.constantFrom('ok' as const, 'unauthorized' as const, 'inconclusive' as const) }),
  fc.record({ type: fc.constant('writeFailed' as const), reason: fc.constantFrom('ENOSPC', 'EROFS') }),
  fc.record({ type: fc.constant('headerToken' as const), token: tokenArb, unlinksWhenSent: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant('unauthorized' as const), token: tokenArb }),
);

/**
 * Runs the events and tells `check` which refresh tokens are used: sent, and then renewed, refused
 * as spent, or left without an answer (a client error or an outage leaves the token unused).
 */
function run(events: TokenEvent[], check: (before: MachineState, event: TokenEvent, after: MachineState, effects: TokenEffect[], used: Set<string>) => void): void {
  let state = initialState;
  const used = new Set<string>();
  let sending: string | undefined;
  for (const event of events) {
    const { state: after, effects } = step(state, event);
    check(state, event, after, effects, used);
    if (sending !== undefined && state.granting && !after.granting) {
      const unused = event.type === 'grantFailed' && (event.failure.kind === 'transient' || event.failure.kind === 'settings');
      if (!unused) used.add(sending);
      sending = undefined;
    }
    for (const effect of effects) if (effect.type === 'callRefresh') sending = effect.refreshToken;
    state = after;
  }
}

describe('properties over any sequence of events', () => {
  it('a used refresh token is never sent again', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        // Only the service's fresh tokens come back from a grant or a link: skip a reused name.
        const issued = new Set<string>();
        const realistic = events.filter((event) => {
          const token = event.type === 'seeded' || event.type === 'linked' || event.type === 'grantSucceeded' ? event.refreshToken : undefined;
          if (token === undefined) return true;
          if (issued.has(token)) return false;
          issued.add(token);
          return true;
        });
        run(realistic, (_before, _event, _after, effects, used) => {
          for (const effect of effects) if (effect.type === 'callRefresh') expect(used.has(effect.refreshToken)).toBe(false);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('a valid refresh token is never dropped: only replaced, refused, possibly used, or unlinked', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        run(events, (before, event, after) => {
          if (before.refreshToken === undefined || after.refreshToken === before.refreshToken) return;
          const allowed = event.type === 'seeded' || event.type === 'linked' || event.type === 'unlinked'
            || (before.granting && (event.type === 'grantSucceeded' || (event.type === 'grantFailed' && (event.failure.kind === 'spent' || event.failure.kind === 'lost'))));
          expect(allowed).toBe(true);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('nothing after an unlink brings a token back until the user links again', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        let unlinked = false;
        run(events, (_before, event, after) => {
          if (event.type === 'unlinked') unlinked = true;
          if (event.type === 'seeded' || event.type === 'linked') unlinked = false;
          if (unlinked) {
            expect(canAuthenticate(after)).toBe(false);
            expect(after.pending).toBeUndefined();
          }
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe('refresh "when the token nears expiry (expires_in, or the JWT exp)"', () => {
  it('the JWT exp wins over expires_in; expires_in counts from receipt; neither means unknown', () => {
    expect(expiryOf(5_000, 100, 1_000)).toBe(5_000);
    expect(expiryOf(undefined, 100, 1_000)).toBe(101_000);
    expect(expiryOf(undefined, undefined, 1_000)).toBeUndefined();
    expect(expiryOf(undefined, 0, 1_000)).toBeUndefined();
  });

  it('refreshes when less than 7 days or 10% of the lifetime remains, whichever is smaller', () => {
    expect(refreshMarginMs(120 * DAY_MS)).toBe(7 * DAY_MS); // four months: 12 days is 10%, 7 days is smaller
    expect(refreshMarginMs(10 * DAY_MS)).toBe(DAY_MS);
    expect(refreshMarginMs(1000)).toBe(100);
    const issued = Date.UTC(2026, 0, 1);
    expect(refreshDueAt(issued + 120 * DAY_MS, issued)).toBe(issued + 113 * DAY_MS);
    expect(refreshDueAt(issued + DAY_MS, issued)).toBe(issued + DAY_MS - DAY_MS / 10);
    expect(refreshDueAt(undefined, issued)).toBeUndefined();
    // Unknown issue time: the 7-day cap.
    expect(refreshDueAt(issued + 30 * DAY_MS, undefined)).toBe(issued + 23 * DAY_MS);
  });

  it('timers never wait less than a second nor longer than setTimeout can', () => {
    expect(timerDelay(0, 10_000)).toBe(1000);
    expect(timerDelay(10_000 + 5000, 10_000)).toBe(5000);
    expect(timerDelay(400 * DAY_MS, 0)).toBe(MAX_TIMER_MS);
    expect([1, 2, 3, 6, 7, 20].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
  });
});
