// What this process holds between the token machine's decisions (`know`, pure, no I/O, no clock):
// tokens.json as last read or written, the access token in use, the tokens handed out and refused,
// the link state and what was already logged. The session holds it and carries out its effects.
import type { PendingAccessToken, TokenRecord } from '../../storage/token-file.js';
import type { Unsaved } from './token-writes.js';
import { type CurrentToken, type Decided, type LinkState, type MachineState, step } from './token-machine.js';

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
      // The same token is handed out for call after call: nothing to learn, and no copy to make.
      if (state.live.get(event.token) === state.unlinks && state.live.size < LIVE_MEMORY) return { state, effects };
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

export function currentFromPending(pending: PendingAccessToken): CurrentToken {
  return { token: pending.token, issuedAt: pending.issuedAt, ...(pending.expiresAt !== undefined ? { expiresAt: pending.expiresAt } : {}) };
}

/**
 * May an answer's header token be used? Never while unlinked, and never when the request was sent
 * with a token of a link that an unlink ended since (it was in flight during the unlink).
 */
export function acceptsHeaderToken(state: Knowledge, sentWith: string | undefined, token: string): boolean {
  const view: MachineState = { link: state.record?.state === 'unlinked' ? 'unlinked' : state.link, granting: false, unlinks: state.unlinks };
  if (state.current) view.access = { token: state.current.token };
  const sentIn = sentWith === undefined || state.current?.token === sentWith ? state.unlinks : (state.live.get(sentWith) ?? -1);
  // The token machine decides: used only while linked, and only from a request of this link.
  return step(view, { type: 'headerToken', token, unlinksWhenSent: sentIn }).state.access?.token === token;
}
