// What the token manager knows right now, shared by every job in this folder: the record last read
// or written, the access token in use, the tokens the service refused, the link state with its
// listeners, and the work still running. Each job changes it only through the store it carries.
import type { Logger } from '../../util/logger.js';
import { safeErrorText } from './safe-error-text.js';
import { notSavedMessage, REAUTHORIZATION_ADVICE } from './token-messages.js';
import { step, type MachineState } from './token-machine.js';
import { TokenSaver } from './token-saver.js';
import type { PendingAccessToken, TokenRecord, TokenStore } from './token-store.js';

export type LinkState = 'unlinked' | 'linked' | 'reauthorizationNeeded';

/** Why a refresh grant runs. */
export type RefreshReason = 'expiry' | 'unauthorized' | 'link' | 'noAccessToken' | 'explicit' | 'refreshTokenAge';

/** The access token in use, with the times the refresh schedule needs. */
export interface CurrentToken {
  token: string;
  expiresAt?: number;
  issuedAt?: number;
}

/**
 * Something the user must know although the link state did not change: the token endpoint blamed
 * our own settings, or renewed tokens are not on disk yet.
 */
export type TokenProblem = 'settings' | 'notSaved';

export interface TokenStatus {
  state: LinkState;
  problem?: TokenProblem;
  accessTokenExpiresAt?: number;
  lastRefreshAt?: number;
  lastKeepAliveAt?: number;
  message?: string;
}

/** Access tokens of the current link remembered at most (header rotation adds one per answer). */
const LIVE_MEMORY = 64;

/** Refused tokens remembered at most (a few per grant is the most that ever happens). */
const REJECTED_MEMORY = 16;

export function currentFromPending(pending: PendingAccessToken): CurrentToken {
  return { token: pending.token, issuedAt: pending.issuedAt, ...(pending.expiresAt !== undefined ? { expiresAt: pending.expiresAt } : {}) };
}

export class TokenSession {
  // The jobs read these through getters and change them only through the named methods below,
  // so every change of what is known happens in this file.
  private recordNow: TokenRecord | undefined;
  private currentNow: CurrentToken | undefined;
  private aliveNow: number | undefined;
  private messageNow: string | undefined;

  /** tokens.json as this process last read or wrote it. */
  get record(): TokenRecord | undefined {
    return this.recordNow;
  }

  /** The access token in use. */
  get current(): CurrentToken | undefined {
    return this.currentNow;
  }

  /** Last time the service accepted the current token (keep-alive or any answer with a header token). */
  get lastAliveAt(): number | undefined {
    return this.aliveNow;
  }

  /** Plain-words note for the UI (never a secret). */
  get message(): string | undefined {
    return this.messageNow;
  }

  /** This process wrote (or is about to write) `record`: it is what is known now. */
  stored(record: TokenRecord): void {
    this.recordNow = record;
  }

  /** Use `token` for calls from now on (a checked grant token, a header token). */
  useAccess(token: CurrentToken): void {
    this.currentNow = token;
  }

  /** The token in use is refused or belongs to a link that was replaced: use none until a new one comes. */
  dropAccess(): void {
    this.currentNow = undefined;
  }

  /** The service accepted the current token at `at` (undefined: not known since the last start). */
  aliveAt(at: number | undefined): void {
    this.aliveNow = at;
  }

  private linkState: LinkState = 'unlinked';
  private readonly listeners = new Set<(state: LinkState) => void>();
  private readonly statusListeners = new Set<() => void>();
  private settingsLogged = false;
  /** Access tokens handed out or received, with the unlink count they belong to (see acceptsHeaderFrom). */
  private readonly liveTokens = new Map<string, number>();
  /** Unlinks this process has seen: a token of an earlier count belongs to a link that was undone. */
  private unlinks = 0;
  readonly saver: TokenSaver;
  private readonly rejectedTokens = new Set<string>();
  private readonly busy = new Set<Promise<unknown>>();
  private reauthorizationLogged = false;

  constructor(
    readonly store: TokenStore,
    readonly log: Logger,
    readonly now: () => number,
  ) {
    this.saver = new TokenSaver({
      store,
      log,
      onSaved: (record, superseded) => {
        if (superseded) this.adopt(superseded);
        else if (record) this.recordNow = record;
      },
      onUnsavedChange: () => {
        this.notifyStatus();
      },
    });
  }

  /** Called by the unlink, before anything is awaited: everything in flight from now on is stale. */
  markUnlinked(): void {
    this.saver.clear();
    this.forgetLink();
    this.currentNow = undefined;
    this.aliveNow = undefined;
  }

  /** An access token handed to a caller or taken from an answer during the current link. */
  noteLive(token: string): void {
    if (this.liveTokens.size >= LIVE_MEMORY) this.liveTokens.clear();
    this.liveTokens.set(token, this.unlinks);
  }

  /** The link ends: every token handed out so far belongs to the past. */
  private forgetLink(): void {
    this.unlinks += 1;
    this.liveTokens.clear();
  }

  /**
   * May an answer's header token be used? Never while unlinked, and never when the request was
   * sent with a token of a link that an unlink ended since (it was in flight during the unlink).
   */
  acceptsHeaderFrom(sentWith: string | undefined, token = sentWith ?? ''): boolean {
    const view: MachineState = { link: this.recordNow?.state === 'unlinked' ? 'unlinked' : this.linkState, granting: false, unlinks: this.unlinks };
    if (this.currentNow) view.access = { token: this.currentNow.token };
    const sentIn = sentWith === undefined || this.currentNow?.token === sentWith ? this.unlinks : (this.liveTokens.get(sentWith) ?? -1);
    // The token machine decides: used only while linked, and only from a request of this link.
    return step(view, { type: 'headerToken', token, unlinksWhenSent: sentIn }).state.access?.token === token;
  }

  /** Listeners for anything the status shows: the link state, its message, a problem. */
  onStatusChange(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  notifyStatus(): void {
    for (const listener of this.statusListeners) {
      try {
        listener();
      } catch (error) {
        this.log.debug(`Lock Access: a status listener failed: ${safeErrorText(error)}`);
      }
    }
  }

  /**
   * The token endpoint blamed our settings: the refresh token stays, the user is told once which
   * setting to fix, and the status shows it until a grant succeeds.
   */
  noteSettingsProblem(message: string): void {
    this.messageNow = message;
    if (!this.settingsLogged) {
      this.settingsLogged = true;
      this.log.warn(`Lock Access: the token renewal failed: ${message}`);
    }
    this.notifyStatus();
  }

  get state(): LinkState {
    return this.linkState;
  }

  onStateChange(listener: (state: LinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes a record as the truth: the access token follows it unless the service refused that one. */
  adopt(record: TokenRecord | undefined): void {
    const unsaved = this.saver.unsaved;
    if (unsaved && record !== unsaved.record) {
      // Our renewed tokens are newer than the file that still holds the grant's starting point; only
      // an unlink or a new link made elsewhere replaces them.
      if (record === undefined || (record.state !== 'unlinked' && record.rotations === unsaved.diskRotations)) return;
      this.saver.clear();
      this.notifyStatus();
    }
    const previous = this.recordNow;
    this.recordNow = record;
    if (!record) {
      this.currentNow = undefined;
      this.forgetLink();
      this.setState('unlinked', undefined);
      return;
    }
    if (record.state === 'unlinked' || (record.unlinks ?? 0) > (previous?.unlinks ?? 0)) {
      // An unlink happened (here, or in the settings server): in-flight answers of the old link
      // must not bring its tokens back.
      if (previous?.state !== 'unlinked' || record.state !== 'unlinked') this.forgetLink();
      this.currentNow = undefined;
      if (record.state !== 'unlinked' && previous !== undefined && previous.state !== 'unlinked' && this.linkState !== 'unlinked') {
        // Unlinked and linked again before this process looked: pass through "unlinked" so the
        // registrations are treated as deleted and every webhook is registered again.
        this.setState('unlinked', undefined);
      }
    }
    const changed = previous?.accessToken !== record.accessToken || previous?.rotations !== record.rotations;
    if (changed || this.currentNow === undefined) {
      if (record.accessToken !== undefined && !this.rejectedTokens.has(record.accessToken)) {
        const current: CurrentToken = { token: record.accessToken };
        if (record.accessTokenExpiresAt !== undefined) current.expiresAt = record.accessTokenExpiresAt;
        if (record.accessTokenIssuedAt !== undefined) current.issuedAt = record.accessTokenIssuedAt;
        this.currentNow = current;
      } else if (changed) {
        this.currentNow = undefined;
      }
    }
    this.setState(record.state, record.message);
  }

  setState(state: LinkState, message: string | undefined): void {
    const messageChanged = this.messageNow !== message;
    this.messageNow = message;
    if (this.recordNow?.settingsProblem === undefined) this.settingsLogged = false;
    if (state === this.linkState) {
      if (messageChanged) this.notifyStatus();
      return;
    }
    if (state !== 'reauthorizationNeeded') this.reauthorizationLogged = false;
    this.linkState = state;
    for (const listener of this.listeners) {
      try {
        listener(state);
      } catch (error) {
        this.log.debug(`Lock Access: a link-state listener failed: ${safeErrorText(error)}`);
      }
    }
    this.notifyStatus();
  }

  /** Once per loss of the link: the user needs one clear line, not one per failed call. */
  logReauthorization(reason: string): void {
    if (this.reauthorizationLogged) return;
    this.reauthorizationLogged = true;
    this.log.error(`Lock Access needs you to link your account again: ${reason} ${REAUTHORIZATION_ADVICE}`);
  }

  /** Read through a method: the field changes across awaits, which narrowing does not see. */
  currentToken(): string | undefined {
    return this.currentNow?.token;
  }

  rememberRejected(token: string): void {
    if (this.rejectedTokens.size >= REJECTED_MEMORY) this.rejectedTokens.clear();
    this.rejectedTokens.add(token);
  }

  isRejected(token: string): boolean {
    return this.rejectedTokens.has(token);
  }

  /** Is there a refresh token that has never been sent? */
  refreshUsable(): boolean {
    return this.recordNow?.refreshToken !== undefined;
  }

  /** Counts `promise` as running work until it settles (see settled()). */
  track<T>(promise: Promise<T>): Promise<T> {
    this.busy.add(promise);
    void promise.then(
      () => this.busy.delete(promise),
      () => this.busy.delete(promise),
    );
    return promise;
  }

  /** Resolves once no tracked work is running. */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  status(): TokenStatus {
    const status: TokenStatus = { state: this.linkState };
    const expiresAt = this.currentNow?.expiresAt;
    if (expiresAt !== undefined) status.accessTokenExpiresAt = expiresAt;
    if (this.recordNow?.lastRefreshAt !== undefined) status.lastRefreshAt = this.recordNow.lastRefreshAt;
    if (this.aliveNow !== undefined) status.lastKeepAliveAt = this.aliveNow;
    const unsaved = this.saver.unsaved;
    if (unsaved) {
      status.problem = 'notSaved';
      status.message = notSavedMessage(unsaved.reason);
    } else {
      if (this.recordNow?.settingsProblem !== undefined && this.linkState !== 'unlinked') status.problem = 'settings';
      if (this.messageNow !== undefined) status.message = this.messageNow;
    }
    return status;
  }
}
