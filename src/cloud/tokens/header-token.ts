// Tokens from the `x-svc-access-token` header of API answers: used in memory at once,
// written to tokens.json at most once per 24 h, never one the service already refused.
import { safeErrorText } from '../http/safe-error-text.js';
import { decodeJwtTimes } from './oauth.js';
import { HEADER_SAVE_INTERVAL_MS } from './token-machine.js';
import type { CurrentToken, TokenSession } from './token-session.js';
import type { TokenRecord } from './token-store.js';

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
