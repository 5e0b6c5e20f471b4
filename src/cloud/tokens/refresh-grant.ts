// The refresh grant: one at a time within the process (a shared promise) and across
// processes (the store's lock), a marker on disk before the request, the single-use successor on
// disk before anything else, and for every outcome a plain answer to "was the refresh token spent?".
// Beside it the other grant, the authorization code's, which the settings UI's link flow makes.
import { CloudError, NotLinkedError, RefreshRejectedError, RequestRejectedError, TransientError } from '../http/errors.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { LINK_MESSAGES } from '../link-messages.js';
import type { TokenCheck } from './access-tokens.js';
import { decodeJwtTimes, expiryOf, grantError, type GrantOutcome, type GrantRequest, postTokenGrant } from '../http/oauth.js';
import { type GrantFailure, step } from './token-machine.js';
import { machineFromRecord, recordFromMachine } from './token-machine.js';
import { newLinkRecord, type Seeds } from './token-writes.js';
import { NOT_LINKED_MESSAGE, type RefreshReason, type TokenSession, UNCERTAIN_MESSAGE } from './token-session.js';
import type { TokenRecord } from '../../storage/token-file.js';

const REFUSED_MESSAGE = LINK_MESSAGES['link.refused'];

/** The advice part of a client-error message (the log line adds its own lead). */
function settingsText(error: Error): string {
  return error.message.replace(/^The token renewal failed: /, '');
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

/** Everything a token-endpoint call needs but its fields. */
export type GrantSettings = Omit<GrantRequest, 'fields'>;

export interface RefreshGrantOptions {
  grant: GrantSettings;
  check: TokenCheck;
  /** A grant succeeded: failure back-off and expiry warnings start over. */
  onRenewed: () => void;
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

/**
 * The settings UI's OAuth flow: exchanges an authorization code and stores the result as a fresh
 * link. The code is exchanged only while holding the token file's lock, after the file was read:
 * a folder that cannot be written fails here, before the code is spent.
 */
export async function codeGrant(session: TokenSession, settings: { grant: GrantSettings; check: TokenCheck; seeds: Seeds | undefined }, input: { code: string; redirectUri: string }): Promise<void> {
  await session.track(
    session.store.locked(async () => {
      const fresh = await session.store.read();
      const outcome = await postTokenGrant({
        ...settings.grant,
        fields: { grant_type: 'authorization_code', code: input.code, redirect_uri: input.redirectUri },
      });
      if (outcome.kind !== 'tokens') throw grantError(outcome, 'The service did not accept the authorization code');
      const { tokens, receivedAt } = outcome;
      const link = newLinkRecord(fresh, { refreshToken: tokens.refresh_token }, settings.seeds, session.now());
      const times = decodeJwtTimes(tokens.access_token);
      const expiresAt = expiryOf(times.expiresAt, tokens.expires_in, receivedAt);
      link.pendingAccessToken = { token: tokens.access_token, issuedAt: times.issuedAt ?? receivedAt };
      if (expiresAt !== undefined) link.pendingAccessToken.expiresAt = expiresAt;
      link.lastRefreshAt = receivedAt;
      // The code is spent: these tokens exist nowhere else, so a storage fault must not lose them.
      const written = await session.saver.persist(link, fresh);
      session.adopt(written);
      session.dropAccess();
      await settings.check.validatePending(written, 'link');
    }),
  );
  session.log.info(session.saver.unsaved ? 'Lock Access: account linked through the settings, but the new tokens are not saved yet.' : 'Lock Access: account linked through the settings.');
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
    session.stored(marked);
    session.log.debug(`Lock Access: renewing the access token (${reason}).`);
    const outcome = await postTokenGrant({ ...this.options.grant, fields: { grant_type: 'refresh_token', refresh_token: refreshToken } });

    if (outcome.kind === 'tokens') {
      const { tokens, receivedAt } = outcome;
      const times = decodeJwtTimes(tokens.access_token);
      const expiresAt = expiryOf(times.expiresAt, tokens.expires_in, receivedAt);
      const access = { token: tokens.access_token, issuedAt: times.issuedAt ?? receivedAt, ...(expiresAt !== undefined ? { expiresAt } : {}) };
      const decided = step(machineFromRecord(marked, true), { type: 'grantSucceeded', refreshToken: tokens.refresh_token, access });
      const next: TokenRecord = { ...recordFromMachine(marked, decided.state), rotations: marked.rotations + 1, lastRefreshAt: receivedAt };
      delete next.message;
      // First thing after the body (the machine's first effect): the single-use successor is on
      // disk before anything else. A storage fault keeps it in memory and retries (the saver): it
      // is the only copy there is.
      const written = await session.saver.persist(next, marked);
      session.stored(written);
      session.log.info('Lock Access: access token renewed; the new refresh token is saved.');
      this.options.onRenewed();
      // The machine's second effect: check the new access token before the old one is dropped.
      if (decided.effects.some((effect) => effect.type === 'checkToken')) await this.options.check.validatePending(written, reason);
      if (session.state !== 'linked') session.setState('linked', undefined);
      return;
    }

    if (outcome.kind === 'rejected') {
      // Re-read before declaring the link lost: a racing process may have rotated after all.
      const again = await session.store.read();
      if (again && again.rotations !== marked.rotations) {
        session.adopt(again);
        return;
      }
    }
    const decided = step(machineFromRecord(marked, true), { type: 'grantFailed', failure: grantFailureOf(outcome) });
    const next = recordFromMachine(marked, decided.state);
    const error = grantError(outcome, 'The token renewal failed');
    for (const effect of decided.effects) {
      if (effect.type === 'persist') {
        await this.persistFailure(outcome, next, marked, error);
      } else if (effect.type === 'warn') {
        this.warn(effect.about, outcome, error);
      }
      // scheduleRetry: the error thrown below is the caller's cue to retry with back-off.
    }
    if (outcome.kind === 'rejected') throw new RefreshRejectedError(REFUSED_MESSAGE, outcome.oauthError);
    if (outcome.kind === 'lost') throw new TransientError(`The token renewal got no usable answer (${outcome.detail}).`);
    if (outcome.kind === 'clientRejected') {
      // Callers log their failures on every attempt; the instruction itself is in the one warning.
      throw new RequestRejectedError(`The token renewal failed: the service refused the plugin's ${outcome.setting} (${outcome.oauthError ?? outcome.status}); the refresh token is kept, see the warning that says what to fix.`, outcome.status);
    }
    throw error;
  }

  /** Writes what the machine decided after a failed grant, with the words for the user. */
  private async persistFailure(outcome: Exclude<GrantOutcome, { kind: 'tokens' }>, next: TokenRecord, marked: TokenRecord, error: Error): Promise<void> {
    const session = this.session;
    switch (outcome.kind) {
      case 'rejected':
        session.adopt(await session.store.write({ ...next, message: REFUSED_MESSAGE }, marked));
        return;
      case 'lost':
        session.adopt(await session.store.write({ ...next, message: UNCERTAIN_MESSAGE }, marked));
        return;
      case 'clientRejected':
        // Our own settings are wrong (RFC 6749 5.2 client errors): the refresh token was never
        // looked at, so it stays; the file and the status say which setting to fix.
        // Shown on every failure, logged once per start (the machine warns once per record).
        session.stored(await session.saver.persist({ ...next, message: settingsText(error) }, marked));
        session.noteSettingsProblem(settingsText(error));
        return;
      default:
        // Nothing was consumed. Through the saver: a marker left on disk would later read as an
        // interrupted grant and drop this unspent refresh token.
        session.stored(await session.saver.persist(next, marked));
    }
  }

  private warn(about: 'settings' | 'notSaved' | 'reauthorization' | 'uncertain', outcome: Exclude<GrantOutcome, { kind: 'tokens' }>, error: Error): void {
    const session = this.session;
    if (about === 'reauthorization') session.logReauthorization(REFUSED_MESSAGE);
    else if (about === 'settings') session.noteSettingsProblem(settingsText(error));
    else if (about === 'uncertain' && outcome.kind === 'lost') {
      session.log.warn(`Lock Access: ${UNCERTAIN_MESSAGE} (${outcome.detail}). If Lock Access later says it needs you to link again, do so in the plugin settings.`);
    }
  }
}
