// Checks access tokens with GET {baseUrl}/users/me (the spec's suggested check): a grant's new
// token before the old one is discarded, and the current one for the daily keep-alive
// and the settings' connection test. The call goes out through the shared service request.
import { ACCESS_TOKEN_HEADER } from '../../settings.js';
import { describeNetworkError } from '../http/network-error.js';
import { sendServiceRequest, type ServiceEndpoint, serviceUrl } from '../http/service-request.js';
import { machineFromRecord, recordFromMachine, step } from './token-machine.js';
import { currentFromPending, type RefreshReason, type TokenSession } from './token-session.js';
import type { TokenRecord } from './token-store.js';

export type CheckResult =
  /** Accepted; the answer may carry a newer token in its header. */
  | { kind: 'ok'; headerToken?: string }
  /** 401: the authorization behind this token is gone. */
  | { kind: 'unauthorized' }
  /** No answer, or one that says nothing about the token (5xx, 429, ...). */
  | { kind: 'inconclusive'; detail: string };

/** GET /users/me with `token`. Never throws: every failure is an inconclusive result. */
export async function checkToken(endpoint: ServiceEndpoint, token: string, timeoutMs: number): Promise<CheckResult> {
  let response: Response;
  try {
    response = await sendServiceRequest(endpoint, { method: 'GET', url: serviceUrl(endpoint.baseUrl, '/users/me'), token, timeoutMs });
    await response.arrayBuffer().catch(() => undefined);
  } catch (error) {
    return { kind: 'inconclusive', detail: describeNetworkError(error) };
  }
  if (response.status === 401) return { kind: 'unauthorized' };
  if (!response.ok) return { kind: 'inconclusive', detail: `the service answered ${response.status}` };
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
