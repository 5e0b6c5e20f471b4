// Between the token machine's state and tokens.json's record: the machine decides, the record is
// what is written. Fields the machine does not know (times, seeds, the access token on disk) are
// carried over from the record the change starts from.
import type { GrantOutcome } from './oauth.js';
import type { GrantFailure, MachineState } from './token-machine.js';
import type { TokenRecord } from './token-store.js';

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
