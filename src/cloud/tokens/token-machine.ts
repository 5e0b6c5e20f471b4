// The token rules as one pure function: (state, event) -> { state, effects }. No I/O, no clock:
// the jobs around it (grant, checks, header tokens, saver, unlink) turn what happened into an
// event and carry out the effects. Three rules hold for every sequence of events (see the
// property tests): a valid refresh token is never dropped, a used refresh token is never sent
// again, and nothing after an unlink brings a token back. Below it, also pure: how a state maps to
// and from tokens.json's record, and the arithmetic of when keep-alive and renewal are due.
import { doublingDelay } from '../../util/backoff.js';
import type { GrantOutcome, SettingToFix } from './oauth.js';
import type { TokenRecord } from './token-store.js';

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

export interface Step {
  state: MachineState;
  effects: TokenEffect[];
}

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
    case 'spent': {
      const next: MachineState = { ...without(ended, 'refreshToken', 'settingsProblem'), refreshLost: 'rejected', link: 'reauthorizationNeeded' };
      return { state: next, effects: [{ type: 'persist' }, { type: 'warn', about: 'reauthorization' }] };
    }
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
  if (state.pending?.token !== token) {
    if (result === 'unauthorized') return unauthorized(state, token);
    return same(state);
  }
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
      const next: MachineState = {
        ...without(state, 'refreshLost', 'settingsProblem'),
        granting: false,
        link: 'linked',
        refreshToken: event.refreshToken,
        pending: event.access,
      };
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
      const access: CurrentToken = { token: event.token };
      if (state.access?.expiresAt !== undefined) access.expiresAt = state.access.expiresAt;
      return same({ ...state, access });
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

/** A failed token-endpoint answer as the machine's event: was the refresh token used? */
export function grantFailureOf(outcome: Exclude<GrantOutcome, { kind: 'tokens' }>): GrantFailure {
  switch (outcome.kind) {
    case 'rejected':
      return { kind: 'spent' };
    case 'lost':
      return { kind: 'lost' };
    case 'clientRejected':
      return { kind: 'settings', setting: outcome.setting };
    case 'otherError':
    case 'rateLimited':
    case 'unavailable':
    case 'notSent':
      return { kind: 'transient' };
  }
}

// When to run the keep-alive call and the refresh grant: pure arithmetic, so every rule has a
// unit test without waiting.
export const DAY_MS = 24 * 60 * 60 * 1000;
/** A successful API call at least this often keeps the access token valid (spec: never under 24 h). */
export const KEEP_ALIVE_INTERVAL_MS = DAY_MS;
/** Header tokens are written to disk at most this often (spec: once per 24 h suffices). */
export const HEADER_SAVE_INTERVAL_MS = DAY_MS;
export const MAX_REFRESH_MARGIN_MS = 7 * DAY_MS;
export const REFRESH_MARGIN_SHARE = 0.1;
/** setTimeout cannot wait longer than this; longer waits are split into several timers. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long before expiry the refresh grant is due: the smaller of 7 days and 10% of the lifetime. */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.max(0, Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs * REFRESH_MARGIN_SHARE));
}

/** When the refresh grant is due; undefined when the expiry is unknown (then only a 401 triggers one). */
export function refreshDueAt(expiresAt: number | undefined, issuedAt: number | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  // Without an issue time, assume the spec's usual four months so the margin is the 7-day cap.
  const lifetime = issuedAt !== undefined && issuedAt < expiresAt ? expiresAt - issuedAt : 120 * DAY_MS;
  return expiresAt - refreshMarginMs(lifetime);
}

/**
 * A refresh token is valid for at most one year (spec). Header rotation can keep the access token
 * alive for longer than that, so the grant would never run: the refresh token is spent once it is
 * this old, with two months to spare for outages and retries.
 */
export const REFRESH_TOKEN_SPEND_AGE_MS = 300 * DAY_MS;

/**
 * When the refresh token must be spent for its age: from the last grant, else from the link (a
 * seed's own issue time is unknown, so a seed counts from when it was linked).
 */
export function refreshTokenDueAt(record: { lastRefreshAt?: number | undefined; linkedAt: number }): number {
  return (record.lastRefreshAt ?? record.linkedAt) + REFRESH_TOKEN_SPEND_AGE_MS;
}

/** Expiry from a token response: the JWT's own `exp` wins over `expires_in`. */
export function expiryOf(jwtExpiresAt: number | undefined, expiresInSeconds: number | undefined, receivedAt: number): number | undefined {
  if (jwtExpiresAt !== undefined) return jwtExpiresAt;
  if (expiresInSeconds !== undefined && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0) return receivedAt + expiresInSeconds * 1000;
  return undefined;
}

/** Back-off after a failed keep-alive or refresh: 1 min doubling to 1 h. */
export function retryDelayMs(failures: number): number {
  return doublingDelay(failures, { firstMs: 60_000, maxMs: 60 * 60 * 1000 });
}

/** Delay for the next timer: never negative, never beyond what setTimeout can do. */
export function timerDelay(dueAt: number, now: number, minMs = 1000): number {
  return Math.min(MAX_TIMER_MS, Math.max(minMs, dueAt - now));
}
