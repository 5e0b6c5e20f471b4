// What the settings UI does with the tokens: link with a pasted refresh token, link through the
// OAuth authorization code, test the connection, unlink. Each waits for a refresh in flight, and
// changes tokens.json only while holding its lock.
import { RequestRejectedError } from '../http/errors.js';
import { safeErrorText } from '../http/safe-error-text.js';
import type { AccessTokens, TokenCheck } from './access-tokens.js';
import type { KeepAlive } from './keep-alive.js';
import { decodeJwtTimes, grantError, postTokenGrant } from './oauth.js';
import type { GrantSettings, RefreshGrant } from './refresh-grant.js';
import { expiryOf, initialState, machineFromRecord, step } from './token-machine.js';
import type { TokenSession } from './token-session.js';
import { newLinkRecord, REAUTHORIZATION_ADVICE, type Seeds, unlinkedRecord } from './token-store.js';

export interface LinkActionsOptions {
  /** The config's seeds: a new link remembers them, so they never replace it later. */
  seeds: Seeds | undefined;
  grant: GrantSettings;
  check: TokenCheck;
  refresh: RefreshGrant;
  access: AccessTokens;
  keepAlive: KeepAlive;
  /** A newer token from an answer's header (the manager's noteResponseToken). */
  onHeaderToken: (token: string, sentWith?: string) => void;
}

export class LinkActions {
  constructor(
    private readonly session: TokenSession,
    private readonly options: LinkActionsOptions,
  ) {}

  /** Links with a pasted refresh token: spends it once for a fresh access token. */
  async linkWithRefreshToken(token: string): Promise<void> {
    const { session, options } = this;
    const refreshToken = token.trim();
    if (refreshToken === '') throw new RequestRejectedError('The refresh token is empty: paste the whole token.');
    await options.refresh.settle();
    await session.track(
      session.store.locked(async () => {
        const fresh = await session.store.read();
        session.adopt(await session.store.write(newLinkRecord(fresh, { refreshToken }, options.seeds, session.now()), fresh));
        session.dropAccess();
      }),
    );
    session.log.info('Lock Access: linking with the pasted refresh token.');
    await options.refresh.run('link');
    options.keepAlive.afterLink();
  }

  /**
   * The settings UI's OAuth flow: exchanges an authorization code and stores the result as a fresh
   * link. The code is exchanged only while holding the token file's lock, after the file was read:
   * a folder that cannot be written fails here, before the code is spent.
   */
  async exchangeAuthorizationCode(input: { code: string; redirectUri: string }): Promise<void> {
    const { session, options } = this;
    await options.refresh.settle();
    await session.track(
      session.store.locked(async () => {
        const fresh = await session.store.read();
        const outcome = await postTokenGrant({
          ...options.grant,
          fields: { grant_type: 'authorization_code', code: input.code, redirect_uri: input.redirectUri },
        });
        if (outcome.kind !== 'tokens') throw grantError(outcome, 'The service did not accept the authorization code');
        const { tokens, receivedAt } = outcome;
        const link = newLinkRecord(fresh, { refreshToken: tokens.refresh_token }, options.seeds, session.now());
        const times = decodeJwtTimes(tokens.access_token);
        const expiresAt = expiryOf(times.expiresAt, tokens.expires_in, receivedAt);
        link.pendingAccessToken = { token: tokens.access_token, issuedAt: times.issuedAt ?? receivedAt };
        if (expiresAt !== undefined) link.pendingAccessToken.expiresAt = expiresAt;
        link.lastRefreshAt = receivedAt;
        // The code is spent: these tokens exist nowhere else, so a storage fault must not lose them.
        const written = await session.saver.persist(link, fresh);
        session.adopt(written);
        session.dropAccess();
        await options.check.validatePending(written, 'link');
      }),
    );
    session.log.info(session.saver.unsaved ? 'Lock Access: account linked through the settings, but the new tokens are not saved yet.' : 'Lock Access: account linked through the settings.');
    options.keepAlive.afterLink();
  }

  /** GET /users/me with the current access token; spends the refresh token only if that token is rejected. */
  async testConnection(): Promise<{ ok: boolean; message: string }> {
    const { check, access } = this.options;
    let token: string;
    try {
      token = await access.get();
    } catch (error) {
      return { ok: false, message: safeErrorText(error) };
    }
    let result = await check.check(token);
    if (result.kind === 'unauthorized') {
      try {
        token = await access.afterUnauthorized(token);
      } catch (error) {
        return { ok: false, message: safeErrorText(error) };
      }
      result = await check.check(token);
    }
    if (result.kind === 'ok') {
      this.options.onHeaderToken(result.headerToken ?? token, token);
      return { ok: true, message: 'Connected: the Lock Access service accepted the access token.' };
    }
    if (result.kind === 'unauthorized') return { ok: false, message: `The service refused the access token. ${REAUTHORIZATION_ADVICE}` };
    return { ok: false, message: `Could not reach the Lock Access service (${result.detail}). Try again later.` };
  }

  /**
   * Forgets the tokens: at once in memory (answers still in flight can no longer bring one back),
   * then on disk as a tombstone that remembers every seed, so the unlink survives restarts with
   * tokens still in config.json. Rejects when the tombstone cannot be written; this process stays
   * unlinked all the same.
   */
  async unlink(): Promise<void> {
    const { session, options } = this;
    session.markUnlinked();
    options.keepAlive.forget();
    session.setState('unlinked', undefined);
    try {
      // A grant that was running ends first; its tokens are never taken up (the session ignores
      // every link change until the unlink is over).
      await options.refresh.settle();
      session.markUnlinked();
      const tombstone = await session.track(
        session.store.locked(async () => {
          const fresh = await session.store.read().catch(() => undefined);
          const previous = fresh ?? session.record;
          // The token machine's unlink: no token of any kind, and one more unlink counted, which
          // is how another process tells an unlink from a renewal.
          const decided = step(previous ? machineFromRecord(previous, false) : initialState, { type: 'unlinked' });
          return session.store.write({ ...unlinkedRecord(previous, options.seeds, session.now()), unlinks: decided.state.unlinks }, fresh);
        }),
      );
      session.stored(tombstone);
    } finally {
      session.endUnlink();
    }
    session.setState('unlinked', undefined);
    session.log.info('Lock Access: account unlinked; the stored tokens were deleted, and tokens still in the plugin settings are not used again.');
  }
}
