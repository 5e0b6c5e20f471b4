// Hands out access tokens to callers: the one in use, else one from the grant that is running or
// a new one; after a 401 exactly one refresh shared by every caller, and when nothing
// helps, "re-authorization needed" with a plain "link again".
import { AuthorizationLostError, NotLinkedError, RateLimitedError, TransientError } from '../http/errors.js';
import type { RefreshGrant } from './refresh-grant.js';
import { step, type MachineState } from './token-machine.js';
import { NOT_LINKED_MESSAGE, RELINK_MESSAGE } from './token-messages.js';
import type { TokenSession } from './token-session.js';
import type { TokenRecord } from './token-store.js';

export class AccessTokens {
  constructor(
    private readonly session: TokenSession,
    private readonly refresh: RefreshGrant,
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

  /** After a 401 with `rejectedToken`: one refresh (shared by all callers), else AuthorizationLostError. */
  async afterUnauthorized(rejectedToken: string): Promise<string> {
    const token = await this.renewAfter(rejectedToken);
    this.session.noteLive(token);
    return token;
  }

  private async renewAfter(rejectedToken: string): Promise<string> {
    const session = this.session;
    // The token machine decides: a newer token already in use answers at once; the refused one is
    // dropped. A 401 means the authorization behind this token is gone (spec), so the stored
    // token of the same grant is no better: only a token from a newer grant is worth trying.
    const view: MachineState = { link: session.state, granting: false, unlinks: 0 };
    if (session.current) view.access = { token: session.current.token };
    const decided = step(view, { type: 'unauthorized', token: rejectedToken });
    if (decided.state.access !== undefined) return decided.state.access.token;
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
    if (after !== undefined && after !== rejectedToken) return after;
    if (failure instanceof TransientError || failure instanceof RateLimitedError) throw failure;
    return this.declareLost();
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
        const message = fresh.refreshTokenLost === 'uncertain'
          ? 'The service no longer accepts the access token, and the last refresh token may have been used without the answer reaching the plugin.'
          : fresh.refreshToken === undefined
            ? 'The service no longer accepts the access token and there is no refresh token left.'
            : 'The service no longer accepts the access token and the renewal did not help.';
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
