// The token rules as one pure machine, no I/O, no clock. `step` decides what happens to the tokens
// (grant, check, header token, write, unlink): for every sequence of events a valid refresh token is
// never dropped, a used one is never sent again, and nothing after an unlink brings a token back
// (see the property tests). `know` is what this process holds between those decisions. Both return
// effects; the session holds the state and, with the jobs around it, carries the effects out.
import type { SettingToFix } from './oauth.js';
import type { TokenRecord, Unsaved } from './token-store.js';

export type LinkState = 'unlinked' | 'linked' | 'reauthorizationNeeded';

/** An access token, with the times the refresh schedule needs. */
export interface CurrentToken {
  token: string;
  expiresAt?: number;
  issuedAt?: number;
}

export interface MachineState {
  link: LinkState;
  /** The unused refresh token; absent once spent without a known successor. */
  refreshToken?: string;
  /** A grant with `refreshToken` is under way: it must not be sent a second time meanwhile. */
  granting: boolean;
  /** Why there is no refresh token. */
  refreshLost?: 'rejected' | 'uncertain';
  access?: CurrentToken;
  /** A grant's new access token, waiting for its check before the old one is dropped. */
  pending?: CurrentToken;
  /** The token endpoint blamed our own settings; the refresh token is kept. */
  settingsProblem?: SettingToFix;
  /** The newest tokens are only in memory: why they could not be written. */
  unsaved?: string;
  /** Counts unlinks; a header token from a request of an earlier link is ignored. */
  unlinks: number;
}

export type GrantFailure =
  /** invalid_grant (or a 400 without readable error): the refresh token is spent, expired or revoked. */
  | { kind: 'spent' }
  /** invalid_client, unauthorized_client, invalid_request, 401/403: our settings; nothing consumed. */
  | { kind: 'settings'; setting: SettingToFix }
  /** 429, 503, never sent, a 400 with another OAuth error: nothing consumed, try again later. */
  | { kind: 'transient' }
  /** Sent, but no usable answer: the token may have been used, so it is never sent again. */
  | { kind: 'lost' };

export type TokenEvent =
  | { type: 'seeded'; refreshToken?: string; access?: CurrentToken }
  | { type: 'linked'; refreshToken?: string; pending?: CurrentToken }
  | { type: 'refreshDue' }
  | { type: 'grantSucceeded'; refreshToken: string; access: CurrentToken }
  | { type: 'grantFailed'; failure: GrantFailure }
  | { type: 'checked'; token: string; result: 'ok' | 'unauthorized' | 'inconclusive' }
  | { type: 'writeFailed'; reason: string }
  | { type: 'writeSucceeded' }
  | { type: 'headerToken'; token: string; unlinksWhenSent: number }
  | { type: 'unauthorized'; token: string }
  | { type: 'unlinked' };

export type TokenEffect =
  /** Write the state to tokens.json (the saver keeps it in memory when that fails). */
  | { type: 'persist' }
  /** Send the refresh grant with this token (persist, with the grant marked, comes first). */
  | { type: 'callRefresh'; refreshToken: string }
  /** GET /users/me with this token. */
  | { type: 'checkToken'; token: string }
  | { type: 'warn'; about: 'settings' | 'notSaved' | 'reauthorization' | 'uncertain' }
  | { type: 'info'; about: 'saved' }
  /** Try the write (or the grant) again later, with back-off. */
  | { type: 'scheduleRetry'; what: 'save' | 'refresh' };

/** What a machine decided: the new state and what the jobs around it must carry out. */
export interface Decided<State, Effect> {
  state: State;
  effects: Effect[];
}

export type Step = Decided<MachineState, TokenEffect>;

export const initialState: MachineState = { link: 'unlinked', granting: false, unlinks: 0 };

const same = (state: MachineState): Step => ({ state, effects: [] });

type Optional = 'refreshToken' | 'refreshLost' | 'access' | 'pending' | 'settingsProblem' | 'unsaved';

/** A copy without the named optional fields (absent, not undefined: the state is compared whole). */
function without(state: MachineState, ...keys: Optional[]): MachineState {
  const drop = new Set<string>(keys);
  return Object.fromEntries(Object.entries(state).filter(([key]) => !drop.has(key))) as unknown as MachineState;
}

/** Can anything still sign in: an access token, or an unused refresh token of a live link? */
export function canAuthenticate(state: MachineState): boolean {
  return state.access !== undefined || (state.link !== 'unlinked' && state.refreshToken !== undefined);
}

function refreshDue(state: MachineState): Step {
  if (state.link === 'unlinked' || state.granting) return same(state);
  // Unsaved tokens first: a grant now would leave the disk two refresh tokens behind.
  if (state.unsaved !== undefined) return { state, effects: [{ type: 'persist' }] };
  if (state.refreshToken === undefined) return same(state);
  return { state: { ...state, granting: true }, effects: [{ type: 'persist' }, { type: 'callRefresh', refreshToken: state.refreshToken }] };
}

function grantFailed(state: MachineState, failure: GrantFailure): Step {
  if (!state.granting) return same(state);
  const ended = { ...state, granting: false };
  switch (failure.kind) {
    case 'spent':
      return { state: { ...without(ended, 'refreshToken', 'settingsProblem'), refreshLost: 'rejected', link: 'reauthorizationNeeded' }, effects: [{ type: 'persist' }, { type: 'warn', about: 'reauthorization' }] };
    case 'lost':
      return { state: { ...without(ended, 'refreshToken'), refreshLost: 'uncertain' }, effects: [{ type: 'persist' }, { type: 'warn', about: 'uncertain' }] };
    case 'settings': {
      const warn: TokenEffect[] = state.settingsProblem === undefined ? [{ type: 'warn', about: 'settings' }] : [];
      return { state: { ...ended, settingsProblem: failure.setting }, effects: [{ type: 'persist' }, ...warn, { type: 'scheduleRetry', what: 'refresh' }] };
    }
    case 'transient':
      return { state: ended, effects: [{ type: 'persist' }, { type: 'scheduleRetry', what: 'refresh' }] };
  }
}

function checked(state: MachineState, token: string, result: 'ok' | 'unauthorized' | 'inconclusive'): Step {
  if (state.pending?.token !== token) return result === 'unauthorized' ? unauthorized(state, token) : same(state);
  if (result === 'ok') return { state: { ...without(state, 'pending'), access: state.pending }, effects: [{ type: 'persist' }] };
  if (result === 'unauthorized') return { state: without(state, 'pending'), effects: [{ type: 'persist' }] };
  // No answer: keep both; use the new one only when there is nothing else.
  return state.access === undefined ? same({ ...state, access: state.pending }) : same(state);
}

function unauthorized(state: MachineState, token: string): Step {
  if (state.access?.token !== token) return same(state);
  const dropped = without(state, 'access');
  if (dropped.link !== 'unlinked' && dropped.refreshToken !== undefined) return refreshDue(dropped);
  if (dropped.link === 'unlinked') return same(dropped);
  return { state: { ...dropped, link: 'reauthorizationNeeded' }, effects: [{ type: 'persist' }, { type: 'warn', about: 'reauthorization' }] };
}

export function step(state: MachineState, event: TokenEvent): Step {
  switch (event.type) {
    case 'seeded':
    case 'linked': {
      // A link the user made: it replaces what was there, and starts over after an unlink.
      const base: MachineState = { link: 'linked', granting: false, unlinks: state.unlinks };
      if (event.refreshToken !== undefined) base.refreshToken = event.refreshToken;
      if (event.type === 'seeded' && event.access) base.access = event.access;
      if (event.type === 'linked' && event.pending) base.pending = event.pending;
      const effects: TokenEffect[] = [{ type: 'persist' }];
      if (base.pending) effects.push({ type: 'checkToken', token: base.pending.token });
      return { state: base, effects };
    }
    case 'refreshDue':
      return refreshDue(state);
    case 'grantSucceeded': {
      if (!state.granting) return same(state);
      const next: MachineState = { ...without(state, 'refreshLost', 'settingsProblem'), granting: false, link: 'linked', refreshToken: event.refreshToken, pending: event.access };
      return { state: next, effects: [{ type: 'persist' }, { type: 'checkToken', token: event.access.token }] };
    }
    case 'grantFailed':
      return grantFailed(state, event.failure);
    case 'checked':
      return checked(state, event.token, event.result);
    case 'writeFailed': {
      const warn: TokenEffect[] = state.unsaved === event.reason ? [] : [{ type: 'warn', about: 'notSaved' }];
      return { state: { ...state, unsaved: event.reason }, effects: [...warn, { type: 'scheduleRetry', what: 'save' }] };
    }
    case 'writeSucceeded':
      return state.unsaved === undefined ? same(state) : { state: without(state, 'unsaved'), effects: [{ type: 'info', about: 'saved' }] };
    case 'headerToken': {
      if (state.link === 'unlinked' || event.unlinksWhenSent !== state.unlinks || event.token === '') return same(state);
      return same({ ...state, access: { token: event.token, ...(state.access?.expiresAt !== undefined ? { expiresAt: state.access.expiresAt } : {}) } });
    }
    case 'unauthorized':
      return unauthorized(state, event.token);
    case 'unlinked':
      return { state: { link: 'unlinked', granting: false, unlinks: state.unlinks + 1 }, effects: [{ type: 'persist' }] };
  }
}

export interface Knowledge {
  /** tokens.json as this process last read or wrote it. */
  readonly record: TokenRecord | undefined;
  /** The access token in use. */
  readonly current: CurrentToken | undefined;
  readonly link: LinkState;
  /** Plain-words note for the UI (never a secret). */
  readonly message: string | undefined;
  /** Last time the service accepted the current token (undefined: not known since the last start). */
  readonly aliveAt: number | undefined;
  /** Unlinks this process has seen: a token of an earlier count belongs to a link that was undone. */
  readonly unlinks: number;
  /** Access tokens handed out or received, with the unlink count they belong to. */
  readonly live: ReadonlyMap<string, number>;
  /** Tokens the service refused: never used again. */
  readonly refused: ReadonlySet<string>;
  /** The settings problem was logged (once until a grant clears it). */
  readonly settingsLogged: boolean;
  /** "Link again" was logged (once per loss of the link). */
  readonly linkLostLogged: boolean;
  /** An unlink is under way: nothing that was in flight (a grant, a check) may link again. */
  readonly unlinking: boolean;
}

export type KnowledgeEvent =
  | { type: 'stored'; record: TokenRecord }
  /** A record read or written is the truth now; `unsaved` are renewed tokens not yet on disk. */
  | { type: 'adopted'; record: TokenRecord | undefined; unsaved?: Pick<Unsaved, 'record' | 'diskRotations'> | undefined }
  | { type: 'used'; token: CurrentToken }
  | { type: 'dropped' }
  | { type: 'alive'; at: number | undefined }
  | { type: 'handedOut'; token: string }
  | { type: 'refused'; token: string }
  | { type: 'unlinkStarted' }
  | { type: 'unlinkEnded' }
  | { type: 'linkState'; link: LinkState; message: string | undefined }
  | { type: 'settingsProblem'; message: string }
  | { type: 'linkLost'; reason: string };

export type KnowledgeEffect =
  | { type: 'linkChanged'; link: LinkState }
  | { type: 'statusChanged' }
  /** Renewed tokens of a link that ended (or was replaced elsewhere) must never be written. */
  | { type: 'forgetUnsaved' }
  | { type: 'warnSettings'; message: string }
  | { type: 'errorLinkLost'; reason: string };

export type Known = Decided<Knowledge, KnowledgeEffect>;

/** Access tokens of the current link remembered at most (header rotation adds one per answer). */
export const LIVE_MEMORY = 64;
/** Refused tokens remembered at most (a few per grant is the most that ever happens). */
export const REFUSED_MEMORY = 16;

/** Before anything is read: unlinked, no record, no token. */
export const nothingKnown: Knowledge = {
  record: undefined, current: undefined, link: 'unlinked', message: undefined, aliveAt: undefined, unlinks: 0,
  live: new Map(), refused: new Set(), settingsLogged: false, linkLostLogged: false, unlinking: false,
};

/** The link ends: every token handed out so far belongs to the past. */
function forgetLink(state: Knowledge): Knowledge {
  return { ...state, unlinks: state.unlinks + 1, live: new Map() };
}

function withLink(state: Knowledge, link: LinkState, message: string | undefined, effects: KnowledgeEffect[]): Knowledge {
  const messageChanged = state.message !== message;
  let next: Knowledge = { ...state, message };
  if (next.record?.settingsProblem === undefined) next = { ...next, settingsLogged: false };
  if (link === next.link) {
    if (messageChanged) effects.push({ type: 'statusChanged' });
    return next;
  }
  next = { ...next, link, linkLostLogged: link === 'reauthorizationNeeded' ? next.linkLostLogged : false };
  effects.push({ type: 'linkChanged', link }, { type: 'statusChanged' });
  return next;
}

/** The access token a record brings, unless the service refused it. */
function currentOf(record: TokenRecord, refused: ReadonlySet<string>): CurrentToken | undefined {
  if (record.accessToken === undefined || refused.has(record.accessToken)) return undefined;
  const current: CurrentToken = { token: record.accessToken };
  if (record.accessTokenExpiresAt !== undefined) current.expiresAt = record.accessTokenExpiresAt;
  if (record.accessTokenIssuedAt !== undefined) current.issuedAt = record.accessTokenIssuedAt;
  return current;
}

function adopted(state: Knowledge, record: TokenRecord | undefined, unsaved: Pick<Unsaved, 'record' | 'diskRotations'> | undefined): Known {
  const effects: KnowledgeEffect[] = [];
  if (unsaved && record !== unsaved.record) {
    // Our renewed tokens are newer than the file that still holds the grant's starting point; only
    // an unlink or a new link made elsewhere replaces them.
    if (record === undefined || (record.state !== 'unlinked' && record.rotations === unsaved.diskRotations)) return { state, effects };
    effects.push({ type: 'forgetUnsaved' }, { type: 'statusChanged' });
  }
  if (state.unlinking && record?.state !== 'unlinked') {
    // Tokens of a grant that was in flight when the unlink began: known as written, never used,
    // and the link stays "unlinked" (no registrar, no set-up starts for a link that is ending).
    return { state: { ...state, record, current: undefined }, effects };
  }
  const previous = state.record;
  let next: Knowledge = { ...state, record };
  if (!record) return { state: withLink(forgetLink({ ...next, current: undefined }), 'unlinked', undefined, effects), effects };
  if (record.state === 'unlinked' || (record.unlinks ?? 0) > (previous?.unlinks ?? 0)) {
    // An unlink happened (here, or in the settings server): in-flight answers of the old link
    // must not bring its tokens back.
    if (previous?.state !== 'unlinked' || record.state !== 'unlinked') next = forgetLink(next);
    next = { ...next, current: undefined };
    if (record.state !== 'unlinked' && previous !== undefined && previous.state !== 'unlinked' && next.link !== 'unlinked') {
      // Unlinked and linked again before this process looked: pass through "unlinked" so the
      // registrations are treated as deleted and every webhook is registered again.
      next = withLink(next, 'unlinked', undefined, effects);
    }
  }
  const changed = previous?.accessToken !== record.accessToken || previous?.rotations !== record.rotations;
  if (changed || next.current === undefined) {
    const current = currentOf(record, next.refused);
    if (current !== undefined || changed) next = { ...next, current };
  }
  return { state: withLink(next, record.state, record.message, effects), effects };
}

/** What a bounded memory keeps before adding: all of it, or nothing once `limit` are held (old entries only matter for a short while). */
function keptOf<T>(items: Iterable<T> & { readonly size: number }, limit: number): Iterable<T> {
  return items.size >= limit ? [] : items;
}

export function know(state: Knowledge, event: KnowledgeEvent): Known {
  const effects: KnowledgeEffect[] = [];
  switch (event.type) {
    case 'stored':
      return { state: { ...state, record: event.record }, effects };
    case 'adopted':
      return adopted(state, event.record, event.unsaved);
    case 'used':
      return state.unlinking ? { state, effects } : { state: { ...state, current: event.token }, effects };
    case 'dropped':
      return { state: { ...state, current: undefined }, effects };
    case 'alive':
      return { state: { ...state, aliveAt: event.at }, effects };
    case 'handedOut':
      return { state: { ...state, live: new Map([...keptOf(state.live, LIVE_MEMORY), [event.token, state.unlinks]]) }, effects };
    case 'refused':
      return { state: { ...state, refused: new Set([...keptOf(state.refused, REFUSED_MEMORY), event.token]) }, effects };
    case 'unlinkStarted':
      effects.push({ type: 'forgetUnsaved' });
      return { state: { ...forgetLink(state), current: undefined, aliveAt: undefined, unlinking: true }, effects };
    case 'unlinkEnded':
      return { state: { ...state, unlinking: false }, effects };
    case 'linkState':
      if (state.unlinking && event.link !== 'unlinked') return { state, effects };
      return { state: withLink(state, event.link, event.message, effects), effects };
    case 'settingsProblem':
      if (!state.settingsLogged) effects.push({ type: 'warnSettings', message: event.message });
      effects.push({ type: 'statusChanged' });
      return { state: { ...state, message: event.message, settingsLogged: true }, effects };
    case 'linkLost':
      if (state.linkLostLogged) return { state, effects };
      effects.push({ type: 'errorLinkLost', reason: event.reason });
      return { state: { ...state, linkLostLogged: true }, effects };
  }
}
