// The refresh grant (design 4): one at a time within the process (a shared promise) and across
// processes (the store's lock), a marker on disk before the request, the single-use successor on
// disk before anything else, and for every outcome a plain answer to "was the refresh token spent?".
import { CloudError, NotLinkedError, RefreshRejectedError, TransientError } from '../http/errors.js';
import { grantError } from './grant-error.js';
import { decodeJwtTimes } from './jwt.js';
import { postTokenGrant, type GrantRequest } from './oauth.js';
import { safeErrorText } from './safe-error-text.js';
import type { TokenCheck } from './token-check.js';
import { NOT_LINKED_MESSAGE, UNCERTAIN_MESSAGE } from './token-messages.js';
import { expiryOf } from './token-schedule.js';
import type { RefreshReason, TokenSession } from './token-session.js';
import type { TokenRecord } from './token-store.js';

/** Points inside a refresh where the crash tests pause the process (see test/fixtures/token-child.ts). */
export type RefreshStep = 'markerWritten' | 'responseReceived' | 'responseRead' | 'tokensWritten';

/** Everything a token-endpoint call needs but its fields. */
export type GrantSettings = Omit<GrantRequest, 'fields' | 'onResponse'>;

export interface RefreshGrantOptions {
  grant: GrantSettings;
  check: TokenCheck;
  /** A grant succeeded: failure back-off and expiry warnings start over. */
  onRenewed: () => void;
  /** Test seam: awaited at each step of a refresh grant. */
  onStep?: (step: RefreshStep) => Promise<void> | void;
}

/**
 * A refresh marker found while holding the lock means its process died mid-grant: the refresh token
 * may have been spent, so it is dropped (never sent twice) and the user is told plainly.
 */
export async function recoverInterrupted(session: TokenSession, record: TokenRecord | undefined): Promise<TokenRecord | undefined> {
  if (!record?.refreshInFlight) return record;
  session.log.warn(`Lock Access: ${UNCERTAIN_MESSAGE} If Lock Access later says it needs you to link again, do so in the plugin settings.`);
  const next: TokenRecord = { ...record, refreshTokenLost: 'uncertain', message: UNCERTAIN_MESSAGE };
  delete next.refreshToken;
  delete next.refreshInFlight;
  return session.store.write(next, record);
}

export class RefreshGrant {
  private running: Promise<void> | undefined;

  constructor(
    private readonly session: TokenSession,
    private readonly options: RefreshGrantOptions,
  ) {}

  /** Runs the grant, or joins the one already running. Rejects with a CloudError. */
  run(reason: RefreshReason): Promise<void> {
    if (this.running) return this.running;
    const session = this.session;
    const basis = session.record?.rotations;
    const run = session.track(
      session.store.locked(() => this.runLocked(reason, basis)).catch((error: unknown) => {
        // Callers decide by class: a busy lock or an unwritable disk is "try again later".
        throw error instanceof CloudError ? error : new TransientError(`The token renewal could not run: ${safeErrorText(error)}`, undefined, { cause: error });
      }),
    );
    this.running = run.finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Resolves when no grant is running, however it ended. */
  async settle(): Promise<void> {
    if (this.running) await this.running.catch(() => undefined);
  }

  private async runLocked(reason: RefreshReason, basis: number | undefined): Promise<void> {
    const session = this.session;
    // Renewed tokens still only in memory: save them first. Their marker is still on disk, and
    // reading it as an interrupted grant would drop the refresh token they replaced.
    if (session.saver.unsaved && !(await session.saver.flushLocked())) {
      throw new TransientError('The renewed tokens are not saved yet, so no new renewal starts; the current access token stays in use.');
    }
    let fresh = await session.store.read();
    fresh = await recoverInterrupted(session, fresh);
    if (!fresh || fresh.state === 'unlinked') {
      session.adopt(fresh);
      throw new NotLinkedError(NOT_LINKED_MESSAGE);
    }
    if (basis !== undefined && fresh.rotations !== basis) {
      // Another process (the settings UI server or the plugin) rotated while we waited: use its tokens.
      session.log.debug('Lock Access: another process renewed the tokens; using them.');
      session.adopt(fresh);
      return;
    }
    if (reason === 'unauthorized' && fresh.accessToken !== undefined && !session.isRejected(fresh.accessToken)) {
      session.adopt(fresh);
      if (session.current && !session.isRejected(session.current.token)) return;
    }
    const refreshToken = fresh.refreshToken;
    if (refreshToken === undefined) {
      session.adopt(fresh);
      throw new RefreshRejectedError(
        fresh.refreshTokenLost === 'uncertain'
          ? 'There is no unused refresh token: the last renewal may have been used by the service without the answer reaching the plugin.'
          : 'There is no unused refresh token.',
      );
    }

    // Write-ahead: the marker (with the old token still in place) is on disk before the grant is sent.
    const marked = await session.store.write({ ...fresh, refreshInFlight: { pid: process.pid, nonce: `${session.now()}-${Math.random()}`, startedAt: session.now() } }, fresh);
    session.record = marked;
    session.log.debug(`Lock Access: renewing the access token (${reason}).`);
    const onStep = this.options.onStep;
    if (onStep) await onStep('markerWritten');
    const outcome = await postTokenGrant({
      ...this.options.grant,
      fields: { grant_type: 'refresh_token', refresh_token: refreshToken },
      onResponse: onStep ? async () => onStep('responseReceived') : undefined,
    });

    if (outcome.kind === 'tokens') {
      const { tokens, receivedAt } = outcome;
      if (onStep) await onStep('responseRead');
      const times = decodeJwtTimes(tokens.access_token);
      const expiresAt = expiryOf(times.expiresAt, tokens.expires_in, receivedAt);
      const next: TokenRecord = {
        ...marked,
        refreshToken: tokens.refresh_token,
        rotations: marked.rotations + 1,
        state: 'linked',
        lastRefreshAt: receivedAt,
        pendingAccessToken: { token: tokens.access_token, issuedAt: times.issuedAt ?? receivedAt, ...(expiresAt !== undefined ? { expiresAt } : {}) },
      };
      delete next.refreshInFlight;
      delete next.refreshTokenLost;
      delete next.message;
      delete next.settingsProblem;
      // First thing after the body: the single-use successor is on disk before anything else. A
      // storage fault keeps it in memory and retries (the saver): it is the only copy there is.
      const written = await session.saver.persist(next, marked);
      session.record = written;
      if (onStep) await onStep('tokensWritten');
      session.log.info('Lock Access: access token renewed; the new refresh token is saved.');
      this.options.onRenewed();
      await this.options.check.validatePending(written, reason);
      if (session.state !== 'linked') session.setState('linked', undefined);
      return;
    }

    const cleared: TokenRecord = { ...marked };
    delete cleared.refreshInFlight;
    switch (outcome.kind) {
      case 'rejected': {
        // Re-read before declaring the link lost: a racing process may have rotated after all.
        const again = await session.store.read();
        if (again && again.rotations !== marked.rotations) {
          session.adopt(again);
          return;
        }
        const message = 'The Lock Access service refused the stored refresh token (it is used, expired or revoked).';
        const next: TokenRecord = { ...cleared, refreshTokenLost: 'rejected', state: 'reauthorizationNeeded', message };
        delete next.refreshToken;
        session.adopt(await session.store.write(next, marked));
        session.logReauthorization(message);
        throw new RefreshRejectedError(message, outcome.oauthError);
      }
      case 'lost': {
        const next: TokenRecord = { ...cleared, refreshTokenLost: 'uncertain', message: UNCERTAIN_MESSAGE };
        delete next.refreshToken;
        session.adopt(await session.store.write(next, marked));
        session.log.warn(`Lock Access: ${UNCERTAIN_MESSAGE} (${outcome.detail}). If Lock Access later says it needs you to link again, do so in the plugin settings.`);
        throw new TransientError(`The token renewal got no usable answer (${outcome.detail}).`);
      }
      default: {
        // Nothing was consumed: keep the refresh token for a later attempt.
        const error = grantError(outcome, 'The token renewal failed');
        if (outcome.kind === 'clientRejected') {
          // Our own settings are wrong (RFC 6749 5.2 client errors): the refresh token was never
          // looked at, so it stays; the file and the status say which setting to fix.
          const advice = error.message.replace(/^The token renewal failed: /, '');
          session.record = await session.saver.persist({ ...cleared, settingsProblem: outcome.setting, message: advice }, marked);
          session.noteSettingsProblem(advice);
        } else {
          // Through the saver: a marker left on disk would later read as an interrupted grant and
          // drop this unspent refresh token.
          session.record = await session.saver.persist(cleared, marked);
        }
        throw error;
      }
    }
  }
}
