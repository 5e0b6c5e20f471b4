// What the process knows about its tokens, as one pure function: checked for every kind of state
// and event, and by properties over any sequence of events: a refused token never comes back from
// a record, a token from before an unlink is never taken from an answer, listeners hear each change
// of the link, and "link again" is logged once per loss of the link.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { acceptsHeaderToken, know, LIVE_MEMORY, REFUSED_MEMORY, nothingKnown, type Knowledge, type KnowledgeEffect, type KnowledgeEvent } from '../../../src/cloud/tokens/token-knowledge.js';
import type { TokenRecord } from '../../../src/storage/token-file.js';
import { linkedRecord as record } from '../../fixtures/token-harness.js';


/** Runs events from `state`, collecting every effect in order. */
function run(state: Knowledge, ...events: KnowledgeEvent[]): { state: Knowledge; effects: KnowledgeEffect[] } {
  const effects: KnowledgeEffect[] = [];
  for (const event of events) {
    const step = know(state, event);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const linked = run(nothingKnown, { type: 'adopted', record: record() }).state;

const STATES = {
  nothingKnown,
  linked,
  reauthorizationNeeded: run(nothingKnown, { type: 'adopted', record: record({ state: 'reauthorizationNeeded', refreshToken: undefined }) }).state,
  unlinking: run(linked, { type: 'unlinkStarted' }).state,
  tombstone: run(nothingKnown, { type: 'adopted', record: record({ state: 'unlinked', unlinks: 1, refreshToken: undefined, accessToken: undefined }) }).state,
  withHeaderToken: run(linked, { type: 'handedOut', token: 'header-1' }, { type: 'used', token: { token: 'header-1', expiresAt: 3_000 } }).state,
  settingsLogged: run(linked, { type: 'settingsProblem', message: 'the client secret is wrong' }).state,
} satisfies Record<string, Knowledge>;

const EVENTS = {
  stored: { type: 'stored', record: record({ rotations: 2, accessToken: 'access-2' }) },
  adoptedSame: { type: 'adopted', record: record() },
  adoptedRotation: { type: 'adopted', record: record({ rotations: 2, accessToken: 'access-2' }) },
  adoptedNone: { type: 'adopted', record: undefined },
  adoptedTombstone: { type: 'adopted', record: record({ state: 'unlinked', unlinks: 1, refreshToken: undefined, accessToken: undefined }) },
  adoptedRelinked: { type: 'adopted', record: record({ unlinks: 1, rotations: 0, accessToken: 'access-new' }) },
  used: { type: 'used', token: { token: 'header-2' } },
  dropped: { type: 'dropped' },
  alive: { type: 'alive', at: 4_000 },
  handedOut: { type: 'handedOut', token: 'access-1' },
  refused: { type: 'refused', token: 'access-1' },
  unlinkStarted: { type: 'unlinkStarted' },
  unlinkEnded: { type: 'unlinkEnded' },
  linkState: { type: 'linkState', link: 'reauthorizationNeeded', message: 'refused' },
  settingsProblem: { type: 'settingsProblem', message: 'the client ID is wrong' },
  linkLost: { type: 'linkLost', reason: 'the refresh token was refused.' },
} satisfies Record<string, KnowledgeEvent>;

describe('every state x every event', () => {
  for (const [stateName, state] of Object.entries<Knowledge>(STATES)) {
    for (const [eventName, event] of Object.entries(EVENTS) as [string, KnowledgeEvent][]) {
      it(`${stateName} + ${eventName}`, () => {
        const { state: next, effects } = know(state, event);
        // The state given is never changed: the old one stays valid for whoever still holds it.
        expect(know(state, event)).toEqual({ state: next, effects });
        // Unlinks only count up, and only an unlink (here or on disk) counts.
        expect(next.unlinks).toBeGreaterThanOrEqual(state.unlinks);
        if (next.unlinks > state.unlinks) expect(['unlinkStarted', 'adoptedNone', 'adoptedTombstone', 'adoptedRelinked']).toContain(eventName);
        // A link listener hears the state the process is in once the event is handled.
        const told = effects.filter((e): e is Extract<KnowledgeEffect, { type: 'linkChanged' }> => e.type === 'linkChanged');
        if (next.link !== state.link) expect(told.at(-1)?.link).toBe(next.link);
        else expect(told.length === 0 || told.length === 2).toBe(true);
        // A record never brings back a token the service refused.
        if (event.type === 'adopted' && next.current !== undefined) expect(next.refused.has(next.current.token)).toBe(false);
      });
    }
  }
});

describe('records', () => {
  it('adopting a record takes its access token with its times, its link state and its message, and tells the listeners', () => {
    const { state, effects } = run(nothingKnown, { type: 'adopted', record: record({ state: 'reauthorizationNeeded', message: 'refused' }) });
    expect(state.current).toEqual({ token: 'access-1', expiresAt: 2_000, issuedAt: 1_000 });
    expect(state.link).toBe('reauthorizationNeeded');
    expect(state.message).toBe('refused');
    expect(effects).toEqual([{ type: 'linkChanged', link: 'reauthorizationNeeded' }, { type: 'statusChanged' }]);
  });

  it('the same record again keeps a newer token from a header; a new rotation replaces it; a record without one leaves none', () => {
    const header = run(linked, { type: 'used', token: { token: 'from-a-header' } }, { type: 'adopted', record: record({ generation: 2 }) }).state;
    expect(header.current?.token).toBe('from-a-header');
    const rotated = know(header, { type: 'adopted', record: record({ rotations: 2, accessToken: 'access-2' }) }).state;
    expect(rotated.current?.token).toBe('access-2');
    expect(know(rotated, { type: 'adopted', record: record({ rotations: 3, accessToken: undefined }) }).state.current).toBeUndefined();
  });

  it('a refused token is not taken back from a record, and the next one is', () => {
    const refused = run(nothingKnown, { type: 'refused', token: 'access-1' }, { type: 'adopted', record: record() }).state;
    expect(refused.current).toBeUndefined();
    expect(refused.link).toBe('linked');
    expect(know(refused, { type: 'adopted', record: record({ rotations: 2, accessToken: 'access-2' }) }).state.current?.token).toBe('access-2');
  });

  it('no record is "unlinked": no token, and a new unlink count', () => {
    const { state, effects } = run(linked, { type: 'adopted', record: undefined });
    expect(state).toMatchObject({ link: 'unlinked', current: undefined, record: undefined, unlinks: 1 });
    expect(effects).toContainEqual({ type: 'linkChanged', link: 'unlinked' });
  });

  it('unlinked and linked again elsewhere passes through "unlinked", so every webhook is registered again', () => {
    const { state, effects } = run(linked, { type: 'adopted', record: record({ unlinks: 1, accessToken: 'access-new' }) });
    expect(effects.filter((e) => e.type === 'linkChanged')).toEqual([
      { type: 'linkChanged', link: 'unlinked' },
      { type: 'linkChanged', link: 'linked' },
    ]);
    expect(state).toMatchObject({ link: 'linked', unlinks: 1, current: { token: 'access-new' } });
  });

  it('a stored record is known without telling anyone', () => {
    const { state, effects } = know(linked, { type: 'stored', record: record({ rotations: 5 }) });
    expect(state.record?.rotations).toBe(5);
    expect(state.current).toBe(linked.current);
    expect(effects).toEqual([]);
  });
});

describe('unsaved renewed tokens', () => {
  const ours = record({ rotations: 2, refreshToken: 'refresh-2', accessToken: 'access-2' });
  const unsaved = { record: ours, diskRotations: 1 };
  const holding = know(linked, { type: 'stored', record: ours }).state;

  it('the file that still holds the grant\'s starting point does not replace them', () => {
    const { state, effects } = know(holding, { type: 'adopted', record: record(), unsaved });
    expect(state).toBe(holding);
    expect(effects).toEqual([]);
  });

  it('no file at all does not replace them either', () => {
    expect(know(holding, { type: 'adopted', record: undefined, unsaved }).state).toBe(holding);
  });

  it('an unlink elsewhere, or a newer link, replaces them: they are forgotten, never written', () => {
    for (const elsewhere of [record({ state: 'unlinked', unlinks: 1, refreshToken: undefined, accessToken: undefined }), record({ rotations: 3, refreshToken: 'refresh-other', accessToken: 'access-other' })]) {
      const { state, effects } = know(holding, { type: 'adopted', record: elsewhere, unsaved });
      expect(effects.slice(0, 2)).toEqual([{ type: 'forgetUnsaved' }, { type: 'statusChanged' }]);
      expect(state.record).toBe(elsewhere);
    }
  });

  it('adopting the unsaved record itself is the normal path', () => {
    const { state, effects } = know(holding, { type: 'adopted', record: ours, unsaved });
    expect(effects).not.toContainEqual({ type: 'forgetUnsaved' });
    expect(state.record).toBe(ours);
  });
});

describe('unlink and header tokens', () => {
  it('after an unlink starts, nothing handed out before is in use or accepted from an answer', () => {
    const before = run(linked, { type: 'handedOut', token: 'in-flight' }, { type: 'alive', at: 4_000 }).state;
    expect(acceptsHeaderToken(before, 'in-flight', 'rotated')).toBe(true);
    const { state, effects } = know(before, { type: 'unlinkStarted' });
    expect(effects).toEqual([{ type: 'forgetUnsaved' }]);
    expect(state).toMatchObject({ current: undefined, aliveAt: undefined, unlinks: 1 });
    expect(acceptsHeaderToken(state, 'in-flight', 'rotated')).toBe(false);
  });

  it('a header token is never taken while unlinked, or by a request sent with an nothingKnown token', () => {
    const tombstone = STATES.tombstone;
    expect(acceptsHeaderToken(tombstone, undefined, 'any')).toBe(false);
    expect(acceptsHeaderToken(linked, 'never-handed-out', 'any')).toBe(false);
    expect(acceptsHeaderToken(linked, 'access-1', 'next')).toBe(true);
    expect(acceptsHeaderToken(linked, undefined, 'next')).toBe(true);
  });

  it('the token handed out again for the next call changes nothing: the knowledge is the same object (no copy per call)', () => {
    const once = know(linked, { type: 'handedOut', token: 'access-1' }).state;
    const again = know(once, { type: 'handedOut', token: 'access-1' });
    expect(again.state).toBe(once);
    expect(again.effects).toEqual([]);
    // Handed out before an unlink, the same token is news again afterwards.
    const relinked = know(know(once, { type: 'unlinkStarted' }).state, { type: 'unlinkEnded' }).state;
    expect(know(relinked, { type: 'handedOut', token: 'access-1' }).state.live.get('access-1')).toBe(relinked.unlinks);
  });

  it('handed-out and refused tokens are bounded, starting over once full', () => {
    let state = linked;
    for (let i = 0; i < LIVE_MEMORY; i++) state = know(state, { type: 'handedOut', token: `live-${i}` }).state;
    expect(state.live.size).toBe(LIVE_MEMORY);
    state = know(state, { type: 'handedOut', token: 'one-more' }).state;
    expect([...state.live.keys()]).toEqual(['one-more']);
    for (let i = 0; i <= REFUSED_MEMORY; i++) state = know(state, { type: 'refused', token: `refused-${i}` }).state;
    expect([...state.refused]).toEqual([`refused-${REFUSED_MEMORY}`]);
  });
});

describe('what the user is told', () => {
  it('listeners hear each change of the link once; a new message alone is a status change', () => {
    const { effects } = run(nothingKnown, { type: 'linkState', link: 'linked', message: undefined }, { type: 'linkState', link: 'linked', message: 'note' }, { type: 'linkState', link: 'linked', message: 'note' });
    expect(effects).toEqual([{ type: 'linkChanged', link: 'linked' }, { type: 'statusChanged' }, { type: 'statusChanged' }]);
  });

  it('"link again" is logged once per loss of the link, and again after a new link is lost', () => {
    const { effects } = run(
      nothingKnown,
      { type: 'linkState', link: 'reauthorizationNeeded', message: undefined },
      { type: 'linkLost', reason: 'first.' },
      { type: 'linkLost', reason: 'second.' },
      { type: 'linkState', link: 'linked', message: undefined },
      { type: 'linkState', link: 'reauthorizationNeeded', message: undefined },
      { type: 'linkLost', reason: 'third.' },
    );
    expect(effects.filter((e) => e.type === 'errorLinkLost')).toEqual([
      { type: 'errorLinkLost', reason: 'first.' },
      { type: 'errorLinkLost', reason: 'third.' },
    ]);
  });

  it('a settings problem is logged once and shown until a record without it comes', () => {
    const once = run(linked, { type: 'settingsProblem', message: 'the client secret is wrong' }, { type: 'settingsProblem', message: 'the client secret is wrong' });
    expect(once.effects.filter((e) => e.type === 'warnSettings')).toHaveLength(1);
    expect(once.state.message).toBe('the client secret is wrong');
    const fixed = run(once.state, { type: 'adopted', record: record({ rotations: 2 }) }, { type: 'settingsProblem', message: 'the client ID is wrong' });
    expect(fixed.effects.filter((e) => e.type === 'warnSettings')).toEqual([{ type: 'warnSettings', message: 'the client ID is wrong' }]);
  });
});

describe('over any sequence of events', () => {
  const token = fc.constantFrom('access-1', 'access-2', 'access-3', 'header-1', 'header-2');
  const recordArb = fc.option(
    fc.record({
      state: fc.constantFrom<TokenRecord['state']>('linked', 'reauthorizationNeeded', 'unlinked'),
      rotations: fc.integer({ min: 0, max: 3 }),
      unlinks: fc.integer({ min: 0, max: 2 }),
      accessToken: fc.option(token, { nil: undefined }),
    }).map((change) => record(change)),
    { nil: undefined },
  );
  const event: fc.Arbitrary<KnowledgeEvent> = fc.oneof(
    recordArb.map((r) => ({ type: 'adopted', record: r }) as const),
    token.map((t) => ({ type: 'used', token: { token: t } }) as const),
    token.map((t) => ({ type: 'handedOut', token: t }) as const),
    token.map((t) => ({ type: 'refused', token: t }) as const),
    fc.constant({ type: 'dropped' } as const),
    fc.constant({ type: 'unlinkStarted' } as const),
    fc.constant({ type: 'unlinkEnded' } as const),
    fc.constantFrom('linked', 'reauthorizationNeeded', 'unlinked').map((link) => ({ type: 'linkState', link, message: undefined }) as const),
    fc.constant({ type: 'linkLost', reason: 'refused.' } as const),
  );

  it('each told link differs from the one before it, and the last one told is the state', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        let state = nothingKnown;
        let heard = state.link;
        for (const e of events) {
          const step = know(state, e);
          for (const effect of step.effects) {
            if (effect.type !== 'linkChanged') continue;
            expect(effect.link).not.toBe(heard);
            heard = effect.link;
          }
          state = step.state;
          expect(heard).toBe(state.link);
        }
      }),
    );
  });

  it('a token handed out before an unlink is never accepted from an answer after it', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.array(event, { maxLength: 40 }), (before, after) => {
        let state = run(nothingKnown, ...before, { type: 'handedOut', token: 'old-link' }, { type: 'unlinkStarted' }).state;
        for (const e of after) {
          if (e.type === 'handedOut' || e.type === 'used') continue;
          state = know(state, e).state;
          expect(acceptsHeaderToken(state, 'old-link', 'rotated')).toBe(false);
        }
      }),
    );
  });

  it('"link again" is logged at most once while the link stays lost', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        let state = nothingKnown;
        let loggedThisLoss = 0;
        for (const e of events) {
          const step = know(state, e);
          // A record adopted with more unlinks is another process's unlink and link since: a new loss.
          if (step.state.link !== 'reauthorizationNeeded' || state.link !== 'reauthorizationNeeded' || step.state.unlinks !== state.unlinks) loggedThisLoss = 0;
          loggedThisLoss += step.effects.filter((effect) => effect.type === 'errorLinkLost').length;
          expect(loggedThisLoss).toBeLessThanOrEqual(1);
          state = step.state;
        }
      }),
    );
  });
});

describe('an unlink under way takes up nothing that was in flight', () => {
  it('a grant record adopted and a "linked" set during the unlink leave the link unlinked, with no token in use', () => {
    const during = run(linked, { type: 'unlinkStarted' }, { type: 'linkState', link: 'unlinked', message: undefined });
    const late = run(during.state,
      { type: 'adopted', record: record({ rotations: 2, refreshToken: 'refresh-2', accessToken: 'access-2' }) },
      { type: 'used', token: { token: 'access-2' } },
      { type: 'linkState', link: 'linked', message: undefined });
    expect(late.state.link).toBe('unlinked');
    expect(late.state.current).toBeUndefined();
    expect(late.effects.filter((effect) => effect.type === 'linkChanged')).toEqual([]);
  });

  it('once the unlink is over, a new link is taken up as usual', () => {
    const after = run(linked, { type: 'unlinkStarted' }, { type: 'linkState', link: 'unlinked', message: undefined }, { type: 'unlinkEnded' });
    const relinked = run(after.state, { type: 'adopted', record: record({ rotations: 5, refreshToken: 'refresh-5', accessToken: 'access-5' }) });
    expect(relinked.state.link).toBe('linked');
    expect(relinked.state.current?.token).toBe('access-5');
    expect(relinked.effects).toContainEqual({ type: 'linkChanged', link: 'linked' });
  });
});
