// The access token in use: handed out to callers (the one in use, else one from the grant that is
// running or a new one; after a 401 exactly one refresh shared by every caller, and when nothing
// helps, "re-authorization needed" with a plain "link again"), taken from answers' headers, and
// checked with GET /users/me before a grant's new token replaces it.
import { ACCESS_TOKEN_HEADER } from '../../settings.js';
import { reasonMessage, reasonOf } from '../../util/reason-messages.js';
import type { UiMessage } from '../../util/ui-message.js';
import { AuthorizationLostError, NotLinkedError, RateLimitedError, TransientError } from '../http/errors.js';
import type { RetryToken } from '../http/refused-retry.js';
import { describeNetworkError } from '../http/network-error.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { LINK_MESSAGES } from '../link-messages.js';
import { sendServiceRequest, type ServiceEndpoint, serviceUrl } from '../http/service-request.js';
import { decodeJwtTimes } from '../http/oauth.js';
import { type MachineState, step } from './token-machine.js';
import { currentFromPending } from './token-knowledge.js';
import { machineFromRecord, recordFromMachine } from './token-machine.js';
import { type CurrentToken, NOT_LINKED_MESSAGE, type RefreshReason, RELINK_MESSAGE, type TokenSession } from './token-session.js';
import type { TokenRecord } from '../../storage/token-file.js';

/** What handing out tokens needs of the refresh grant (refresh-grant.ts). */
export interface Renewal {
  run(reason: RefreshReason): Promise<void>;
  settle(): Promise<void>;
}

export class AccessTokens {
  constructor(
    private readonly session: TokenSession,
    private readonly refresh: Renewal,
  ) {}

  /** The token for a request; remembered as one of this link's, so its answer's header counts. */
  async get(): Promise<string> {
    const token = await this.find();
    this.session.noteLive(token);
    return token;
  }

  private async find(): Promise<string> {
    const session = this.session;
    if (session.current) return session.current.token;
    await this.refresh.settle();
    const afterWait = session.currentToken();
    if (afterWait !== undefined) return afterWait;
    if (session.state !== 'unlinked' && session.refreshUsable()) {
      await this.refresh.run('noAccessToken');
      const afterRefresh = session.currentToken();
      if (afterRefresh !== undefined) return afterRefresh;
    }
    throw new NotLinkedError(session.state === 'reauthorizationNeeded' ? RELINK_MESSAGE : NOT_LINKED_MESSAGE);
  }

  /**
   * After a 401 with `rejectedToken`: a newer token already in use, or one refresh (shared by all
   * callers), else AuthorizationLostError.
   */
  async afterUnauthorized(rejectedToken: string): Promise<RetryToken> {
    const retry = await this.renewAfter(rejectedToken);
    this.session.noteLive(retry.token);
    return retry;
  }

  private async renewAfter(rejectedToken: string): Promise<RetryToken> {
    const session = this.session;
    // The token machine decides: a newer token already in use answers at once; the refused one is
    // dropped. A 401 means the authorization behind this token is gone (spec), so the stored
    // token of the same grant is no better: only a token from a newer grant is worth trying.
    const view: MachineState = { link: session.state, granting: false, unlinks: 0 };
    if (session.current) view.access = { token: session.current.token };
    const decided = step(view, { type: 'unauthorized', token: rejectedToken });
    if (decided.state.access !== undefined) return { token: decided.state.access.token, renewed: false };
    session.rememberRejected(rejectedToken);
    if (session.record?.accessToken !== undefined) session.rememberRejected(session.record.accessToken);
    session.dropAccess();
    let failure: unknown;
    try {
      await this.refresh.run('unauthorized');
    } catch (error) {
      failure = error;
    }
    const after = session.currentToken();
    if (after !== undefined && after !== rejectedToken) return { token: after, renewed: true };
    if (failure instanceof TransientError || failure instanceof RateLimitedError) throw failure;
    return { token: await this.declareLost(), renewed: true };
  }

  /** After every way to get a working token failed: re-read the store, then ask the user to link again. */
  private async declareLost(): Promise<string> {
    const session = this.session;
    let adopted: string | undefined;
    await session.track(
      session.store.locked(async () => {
        const fresh = await session.store.read();
        if (fresh?.accessToken !== undefined && !session.isRejected(fresh.accessToken)) {
          session.adopt(fresh);
          adopted = fresh.accessToken;
          return;
        }
        if (!fresh) {
          session.adopt(undefined);
          return;
        }
        const message = LINK_MESSAGES[fresh.refreshTokenLost === 'uncertain'
          ? 'link.accessLost.uncertain'
          : fresh.refreshToken === undefined
            ? 'link.accessLost.noRefreshToken'
            : 'link.accessLost.renewalFailed'];
        const next: TokenRecord = { ...fresh, state: 'reauthorizationNeeded', message };
        delete next.accessToken;
        delete next.accessTokenExpiresAt;
        delete next.accessTokenIssuedAt;
        session.adopt(await session.store.write(next, fresh));
        session.dropAccess();
      }),
    );
    // Another process stored a token we have not seen rejected: worth one more try.
    if (adopted !== undefined) return adopted;
    if (session.state === 'unlinked') throw new NotLinkedError(NOT_LINKED_MESSAGE);
    session.logReauthorization(session.message ?? 'the link no longer works');
    throw new AuthorizationLostError(RELINK_MESSAGE, 401);
  }
}

// Tokens from the `x-svc-access-token` header of API answers: used in memory at once,
// written to tokens.json at most once per 24 h, never one the service already refused.
/** Header tokens are written to disk at most this often (spec: once per 24 h suffices). */
export const HEADER_SAVE_INTERVAL_MS = 24 * 60 * 60 * 1000;

export class HeaderTokens {
  private saving = false;

  constructor(private readonly session: TokenSession) {}

  /**
   * An answer carried `token`: the service accepted the call, so the current token is alive.
   * `sentWith` is the token the request went out with: an answer to a request of a link that was
   * undone meanwhile must not bring a token back.
   */
  note(token: string, sentWith?: string): void {
    const session = this.session;
    const now = session.now();
    if (token === '' || session.isRejected(token) || !session.acceptsHeaderFrom(sentWith, token)) return;
    session.noteLive(token);
    session.aliveAt(now);
    if (session.current?.token !== token) {
      // Header tokens extend the expiry; the issue time stays the grant's, so "10% of the lifetime"
      // keeps meaning the lifetime the service granted.
      const times = decodeJwtTimes(token);
      const next: CurrentToken = { token };
      const expiresAt = times.expiresAt ?? session.current?.expiresAt;
      const issuedAt = session.current?.issuedAt ?? times.issuedAt;
      if (expiresAt !== undefined) next.expiresAt = expiresAt;
      if (issuedAt !== undefined) next.issuedAt = issuedAt;
      session.useAccess(next);
    }
    const record = session.record;
    if (record && !this.saving && record.accessToken !== token) {
      const savedAt = record.headerTokenSavedAt ?? record.lastRefreshAt ?? record.linkedAt;
      if (now - savedAt >= HEADER_SAVE_INTERVAL_MS) {
        this.saving = true;
        void session
          .track(this.save())
          .catch((error: unknown) => {
            session.log.warn(`Lock Access could not save the updated access token (it keeps using it): ${safeErrorText(error)}`);
          })
          .finally(() => {
            this.saving = false;
          });
      }
    }
  }

  /** Writes the token in use, unless another process linked or renewed meanwhile (then its record wins). */
  private async save(): Promise<void> {
    const session = this.session;
    await session.store.locked(async () => {
      const fresh = await session.store.read();
      if (!fresh || fresh.rotations !== session.record?.rotations) {
        session.adopt(fresh);
        return;
      }
      const current = session.current;
      if (!current || fresh.accessToken === current.token) return;
      const next: TokenRecord = { ...fresh, accessToken: current.token, headerTokenSavedAt: session.now() };
      if (current.expiresAt !== undefined) next.accessTokenExpiresAt = current.expiresAt;
      if (current.issuedAt !== undefined) next.accessTokenIssuedAt = current.issuedAt;
      if (session.lastAliveAt !== undefined) next.lastKeepAliveAt = session.lastAliveAt;
      session.stored(await session.store.write(next, fresh));
      session.log.debug('Lock Access: saved the updated access token.');
    });
  }
}

// Checks access tokens with GET {baseUrl}/users/me (the spec's suggested check): a grant's new
// token before the old one is discarded, and the current one for the daily keep-alive
// and the settings' connection test. The call goes out through the shared service request.
export type CheckResult =
  /** Accepted; the answer may carry a newer token in its header. */
  | { kind: 'ok'; headerToken?: string }
  /** 401: the authorization behind this token is gone. */
  | { kind: 'unauthorized' }
  /** No answer, or one that says nothing about the token (5xx, 429, ...). */
  | { kind: 'inconclusive'; detail: string; reason: UiMessage };

/** GET /users/me with `token`. Never throws: every failure is an inconclusive result. */
export async function checkToken(endpoint: ServiceEndpoint, token: string, timeoutMs: number): Promise<CheckResult> {
  let response: Response;
  try {
    response = await sendServiceRequest(endpoint, { method: 'GET', url: serviceUrl(endpoint.baseUrl, '/users/me'), token, timeoutMs });
    await response.arrayBuffer().catch(() => undefined);
  } catch (error) {
    return { kind: 'inconclusive', detail: describeNetworkError(error), reason: reasonOf(error) };
  }
  if (response.status === 401) return { kind: 'unauthorized' };
  if (!response.ok) return { kind: 'inconclusive', detail: `the service answered ${response.status}`, reason: reasonMessage('reason.httpStatus', { status: response.status }) };
  const header = response.headers.get(ACCESS_TOKEN_HEADER);
  return header !== null && header !== '' ? { kind: 'ok', headerToken: header } : { kind: 'ok' };
}

export interface TokenCheckOptions {
  endpoint: ServiceEndpoint;
  timeoutMs: number;
  /** A newer token from an answer's header (the manager's noteResponseToken). */
  onHeaderToken: (token: string, sentWith?: string) => void;
}

export class TokenCheck {
  constructor(
    private readonly session: TokenSession,
    private readonly options: TokenCheckOptions,
  ) {}

  check(token: string): Promise<CheckResult> {
    return checkToken(this.options.endpoint, token, this.options.timeoutMs);
  }

  /**
   * Checks a grant's new access token before the old one is discarded ("keep both until
   * validated"). Call while holding the store lock, with the record just read or written.
   */
  async validatePending(record: TokenRecord, reason: RefreshReason): Promise<void> {
    const session = this.session;
    const pending = record.pendingAccessToken;
    if (!pending) return;
    const result = await this.check(pending.token);
    // The token machine decides; its view holds the access token in use (not the one on disk),
    // and none for a new link, whose token must win over anything left from before.
    const view = machineFromRecord(record, false);
    delete view.access;
    const inUse = session.current;
    if (inUse && !session.isRejected(inUse.token) && reason !== 'link') view.access = { token: inUse.token };
    const decided = step(view, { type: 'checked', token: pending.token, result: result.kind });
    const persist = decided.effects.some((effect) => effect.type === 'persist');
    if (result.kind === 'ok') {
      const next: TokenRecord = { ...recordFromMachine(record, decided.state), accessToken: pending.token, accessTokenIssuedAt: pending.issuedAt, headerTokenSavedAt: session.now() };
      if (pending.expiresAt !== undefined) next.accessTokenExpiresAt = pending.expiresAt;
      else delete next.accessTokenExpiresAt;
      const written = persist ? await session.saver.persist(next, record) : record;
      session.adopt(written);
      session.useAccess(currentFromPending(pending));
      if (result.headerToken !== undefined) this.options.onHeaderToken(result.headerToken, pending.token);
      else session.aliveAt(session.now());
      session.log.debug('Lock Access: the new access token works.');
      return;
    }
    if (result.kind === 'unauthorized') {
      session.rememberRejected(pending.token);
      if (persist) session.adopt(await session.saver.persist(recordFromMachine(record, decided.state), record));
      session.log.warn('Lock Access: the service refused the access token it had just issued; the previous access token stays in use.');
      return;
    }
    // No answer: keep both; the new one is used only when there is nothing better.
    if (decided.state.access?.token === pending.token) session.useAccess(currentFromPending(pending));
    session.log.debug(`Lock Access: could not check the new access token yet (${result.detail}); checking again later.`);
  }

}
