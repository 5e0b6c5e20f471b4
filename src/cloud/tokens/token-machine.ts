// The token rules as one pure machine, no I/O, no clock. `step` decides what happens to the tokens
// (grant, check, header token, write, unlink): for every sequence of events a valid refresh token is
// never dropped, a used one is never sent again, and nothing after an unlink brings a token back
// (see the property tests). `know` is what this process holds between those decisions. Both return
// effects; the session holds the state and, with the jobs around it, carries the effects out. `know`
// lives in token-knowledge.ts; here, beside `step`, how tokens.json's record maps to its state.
import type { SettingToFix } from '../http/oauth.js';
import type { TokenRecord } from '../../storage/token-file.js';

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

// Between the token machine's state and tokens.json's record: the machine decides, the record is
// what is written. Fields the machine does not know (times, seeds, the access token on disk) are
// carried over from the record the change starts from.
/** The machine's view of a record; `granting` when a grant with its refresh token is under way. */
export function machineFromRecord(record: TokenRecord, granting: boolean): MachineState {
  const state: MachineState = { link: record.state, granting, unlinks: record.unlinks ?? 0 };
  if (record.refreshToken !== undefined) state.refreshToken = record.refreshToken;
  if (record.refreshTokenLost === 'rejected' || record.refreshTokenLost === 'uncertain') state.refreshLost = record.refreshTokenLost;
  if (record.settingsProblem !== undefined) state.settingsProblem = record.settingsProblem;
  if (record.accessToken !== undefined) {
    state.access = { token: record.accessToken };
    if (record.accessTokenExpiresAt !== undefined) state.access.expiresAt = record.accessTokenExpiresAt;
  }
  if (record.pendingAccessToken) state.pending = { ...record.pendingAccessToken };
  return state;
}

/** `base` changed to what the machine decided. */
export function recordFromMachine(base: TokenRecord, state: MachineState): TokenRecord {
  const next: TokenRecord = { ...base, state: state.link };
  if (state.refreshToken !== undefined) {
    next.refreshToken = state.refreshToken;
    delete next.refreshTokenLost;
  } else {
    delete next.refreshToken;
    if (state.refreshLost !== undefined) next.refreshTokenLost = state.refreshLost;
  }
  if (state.settingsProblem !== undefined) next.settingsProblem = state.settingsProblem;
  else delete next.settingsProblem;
  if (!state.granting) delete next.refreshInFlight;
  if (state.pending) next.pendingAccessToken = { token: state.pending.token, issuedAt: state.pending.issuedAt ?? base.lastRefreshAt ?? base.linkedAt, ...(state.pending.expiresAt !== undefined ? { expiresAt: state.pending.expiresAt } : {}) };
  else delete next.pendingAccessToken;
  return next;
}
