// What the token manager knows right now, shared by every job in this folder: the record last read
// or written, the access token in use, the tokens the service refused, the link state with its
// listeners, and the work still running. What is known changes only through `know` (a pure
// function in token-knowledge.ts): each method here that changes it is one event, and the
// effects it returns (listeners, status, log lines) are carried out in one place. Beside it, the
// sentences the token jobs show users.
import type { Logger } from '../../util/logger.js';
import type { UiMessage } from '../../util/ui-message.js';
import type { SettingToFix } from '../http/oauth.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { LINK_MESSAGES, linkMessage } from '../link-messages.js';
import { acceptsHeaderToken, know, type Knowledge, type KnowledgeEffect, type KnowledgeEvent, nothingKnown } from './token-knowledge.js';
import { type CurrentToken, type LinkState, type MachineState, step } from './token-machine.js';
import { type TokenRecord, type TokenStore } from '../../storage/token-file.js';
import { TokenSaver } from './token-writes.js';

export type { CurrentToken, LinkState } from './token-machine.js';

/** Why a refresh grant runs. */
export type RefreshReason = 'expiry' | 'unauthorized' | 'link' | 'noAccessToken' | 'explicit' | 'refreshTokenAge';

/**
 * Something the user must know although the link state did not change: the token endpoint blamed
 * our own settings, or renewed tokens are not on disk yet.
 */
export type TokenProblem = 'settings' | 'notSaved';

export interface TokenStatus {
  state: LinkState;
  problem?: TokenProblem;
  /** With problem `notSaved`: why the tokens could not be written (no path, no secret). */
  notSavedReason?: string;
  /** The same as a reason code, for the settings page. */
  notSavedCause?: UiMessage;
  /** With problem `settings`: the setting the token service refused. */
  setting?: SettingToFix;
  accessTokenExpiresAt?: number;
  lastRefreshAt?: number;
  lastKeepAliveAt?: number;
  message?: string;
}

// The sentences the token jobs show users, in one place: the README quotes the advice, and the
// same situation must read the same wherever it is noticed.
/** The fixed part of the log line when the user must link again (documented in the README). */
// Their English words are the templates of their message codes (link-messages.ts).
export const REAUTHORIZATION_ADVICE = LINK_MESSAGES['link.advice'];

export const NOT_LINKED_MESSAGE = LINK_MESSAGES['link.notLinked'];

/** Start-up after an unlink (the tombstone): why nothing links, although tokens may still be in the config. */
export const UNLINKED_AT_START_MESSAGE = LINK_MESSAGES['link.unlinkedAtStart'];

export const UNCERTAIN_MESSAGE = LINK_MESSAGES['link.uncertain'];

/** What callers are told once the link is lost for good. */
export const RELINK_MESSAGE = LINK_MESSAGES['link.relink'];

/** Storage faults right after a grant: the new tokens are in use but not on disk yet. */
export function notSavedMessage(reason: string): string {
  return linkMessage('link.notSaved', { reason }).text;
}

export class TokenSession {
  private known: Knowledge = nothingKnown;
  private readonly listeners = new Set<(state: LinkState) => void>();
  private readonly statusListeners = new Set<() => void>();
  readonly saver: TokenSaver;
  private readonly busy = new Set<Promise<unknown>>();

  constructor(
    readonly store: TokenStore,
    readonly log: Logger,
    readonly now: () => number,
  ) {
    this.saver = new TokenSaver({
      store,
      onSaved: (record, superseded) => {
        if (superseded) {
          this.adopt(superseded);
          this.notifyStatus();
        } else if (record) this.stored(record);
      },
      onUnsavedChange: (before, after) => {
        this.unsavedChanged(before, after);
      },
    });
  }

  /** Why tokens are not saved changed: the token machine decides what the user is told. */
  private unsavedChanged(before: string | undefined, after: string | undefined): void {
    const view: MachineState = { link: 'linked', granting: false, unlinks: 0, ...(before !== undefined ? { unsaved: before } : {}) };
    const { effects } = step(view, after === undefined ? { type: 'writeSucceeded' } : { type: 'writeFailed', reason: after });
    for (const effect of effects) {
      if (effect.type === 'warn') this.log.warn(`Lock Access: ${notSavedMessage(after ?? '')}`);
      else if (effect.type === 'info') this.log.info('Lock Access: the renewed tokens are saved now.');
      else continue;
      this.notifyStatus();
    }
  }

  /** The one way what is known changes. */
  private tell(event: KnowledgeEvent): void {
    const { state, effects } = know(this.known, event);
    this.known = state;
    for (const effect of effects) this.carryOut(effect);
  }

  private carryOut(effect: KnowledgeEffect): void {
    switch (effect.type) {
      case 'linkChanged':
        for (const listener of this.listeners) {
          try {
            listener(effect.link);
          } catch (error) {
            this.log.debug(`Lock Access: a link-state listener failed: ${safeErrorText(error)}`);
          }
        }
        return;
      case 'statusChanged':
        this.notifyStatus();
        return;
      case 'forgetUnsaved':
        this.saver.clear();
        return;
      case 'warnSettings':
        this.log.warn(`Lock Access: the token renewal failed: ${effect.message}`);
        return;
      case 'errorLinkLost':
        this.log.error(`Lock Access needs you to link your account again: ${effect.reason} ${REAUTHORIZATION_ADVICE}`);
        return;
    }
  }

  /** tokens.json as this process last read or wrote it. */
  get record(): TokenRecord | undefined {
    return this.known.record;
  }

  /** The access token in use. */
  get current(): CurrentToken | undefined {
    return this.known.current;
  }

  /** Last time the service accepted the current token (keep-alive or any answer with a header token). */
  get lastAliveAt(): number | undefined {
    return this.known.aliveAt;
  }

  /** Plain-words note for the UI (never a secret). */
  get message(): string | undefined {
    return this.known.message;
  }

  get state(): LinkState {
    return this.known.link;
  }

  /** This process wrote (or is about to write) `record`: it is what is known now. */
  stored(record: TokenRecord): void {
    this.tell({ type: 'stored', record });
  }

  /** Use `token` for calls from now on (a checked grant token, a header token). */
  useAccess(token: CurrentToken): void {
    this.tell({ type: 'used', token });
  }

  /** The token in use is refused or belongs to a link that was replaced: use none until a new one comes. */
  dropAccess(): void {
    this.tell({ type: 'dropped' });
  }

  /** The service accepted the current token at `at` (undefined: not known since the last start). */
  aliveAt(at: number | undefined): void {
    this.tell({ type: 'alive', at });
  }

  /** Called by the unlink, before anything is awaited: everything in flight from now on is stale. */
  markUnlinked(): void {
    this.tell({ type: 'unlinkStarted' });
  }

  /** The unlink is over: records read from now on count again (a later link is taken as usual). */
  endUnlink(): void {
    this.tell({ type: 'unlinkEnded' });
  }

  /** An access token handed to a caller or taken from an answer during the current link. */
  noteLive(token: string): void {
    this.tell({ type: 'handedOut', token });
  }

  /** May an answer's header token be used (see acceptsHeaderToken)? */
  acceptsHeaderFrom(sentWith: string | undefined, token = sentWith ?? ''): boolean {
    return acceptsHeaderToken(this.known, sentWith, token);
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
    this.tell({ type: 'settingsProblem', message });
  }

  onStateChange(listener: (state: LinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes a record as the truth: the access token follows it unless the service refused that one. */
  adopt(record: TokenRecord | undefined): void {
    this.tell({ type: 'adopted', record, unsaved: this.saver.unsaved });
  }

  setState(state: LinkState, message: string | undefined): void {
    this.tell({ type: 'linkState', link: state, message });
  }

  /** Once per loss of the link: the user needs one clear line, not one per failed call. */
  logReauthorization(reason: string): void {
    this.tell({ type: 'linkLost', reason });
  }

  /** Read through a method: the field changes across awaits, which narrowing does not see. */
  currentToken(): string | undefined {
    return this.known.current?.token;
  }

  rememberRejected(token: string): void {
    this.tell({ type: 'refused', token });
  }

  isRejected(token: string): boolean {
    return this.known.refused.has(token);
  }

  /** Is there a refresh token that has never been sent? */
  refreshUsable(): boolean {
    return this.known.record?.refreshToken !== undefined;
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
    const { link, current, record, aliveAt, message } = this.known;
    const status: TokenStatus = { state: link };
    if (current?.expiresAt !== undefined) status.accessTokenExpiresAt = current.expiresAt;
    if (record?.lastRefreshAt !== undefined) status.lastRefreshAt = record.lastRefreshAt;
    if (aliveAt !== undefined) status.lastKeepAliveAt = aliveAt;
    const unsaved = this.saver.unsaved;
    if (unsaved) {
      status.problem = 'notSaved';
      status.notSavedReason = unsaved.reason;
      status.notSavedCause = unsaved.cause;
      status.message = notSavedMessage(unsaved.reason);
    } else {
      if (record?.settingsProblem !== undefined && link !== 'unlinked') {
        status.problem = 'settings';
        status.setting = record.settingsProblem;
      }
      if (message !== undefined) status.message = message;
    }
    return status;
  }
}
