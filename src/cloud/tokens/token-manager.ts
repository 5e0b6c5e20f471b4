// Keeps the account linked for years: daily keep-alive instead of spending the refresh token,
// refresh grant only near expiry or after a 401, one grant at a time across processes, the new
// refresh token on disk before anything else happens, and a plain "link again" when nothing helps.
// This facade gives callers one object and does what the settings UI asks (link with a pasted
// token or an authorization code, test, unlink); each other job lives in its own file beside it:
//   token-machine   the pure rules of `step` (grant, check, write, header token, unlink), and how
//                   the file's record maps to its state
//   token-knowledge `know`, pure: what this process holds between those decisions
//   token-session   holds what is known and carries out its effects, the user's sentences
//   token-writes    what a link, an unlink or a seed writes, and writes that must not lose tokens
//   refresh-grant   the refresh grant, and the authorization code's
//   access-tokens   the token in use, checks, headers
//   keep-alive      the timer and when things are due, and the settings page's test
// The file and its lock are storage/token-file.ts; the token endpoint's calls cloud/http/oauth.ts.
import type { Storage } from '../../storage.js';
import { TokenStore } from '../../storage/token-file.js';
import type { FileLockOptions } from '../../util/file-lock.js';
import type { Logger } from '../../util/logger.js';
import type { UiMessage } from '../../util/ui-message.js';
import { RequestRejectedError } from '../http/errors.js';
import type { RetryToken } from '../http/refused-retry.js';
import { grantFetch, nodeFetch } from '../http/node-fetch.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { AccessTokens, HeaderTokens, TokenCheck } from './access-tokens.js';
import { KeepAlive, testConnection } from './keep-alive.js';
import { codeGrant, type GrantSettings, recoverInterrupted, RefreshGrant } from './refresh-grant.js';
import { initialState, machineFromRecord, step } from './token-machine.js';
import { type LinkState, TokenSession, type TokenStatus, UNLINKED_AT_START_MESSAGE } from './token-session.js';
import { newLinkRecord, seedLink, type Seeds, unlinkedRecord } from './token-writes.js';

export interface TokenManagerOptions {
  storage: Storage;
  authUrl: string;
  baseUrl: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  seeds?: Seeds;
  log: Logger;
  now?: () => number;
  fetch?: typeof fetch;
  /** Timeout of token endpoint and /users/me calls. Default 10 s. */
  timeoutMs?: number;
  lockOptions?: FileLockOptions;
}

// What callers of the manager also need, from the one module they import.
export { REAUTHORIZATION_ADVICE } from './token-session.js';
export type { LinkState, TokenProblem, TokenStatus } from './token-session.js';

export class TokenManager {
  private readonly session: TokenSession;
  private readonly headerTokens: HeaderTokens;
  private readonly check: TokenCheck;
  private readonly refresh: RefreshGrant;
  private readonly access: AccessTokens;
  private readonly keepAlive: KeepAlive;
  private readonly grant: GrantSettings;
  /** The start's reading of the token file: until it ends, nobody can tell linked from not linked. */
  private loading: Promise<void> | undefined;

  constructor(private readonly options: TokenManagerOptions) {
    const now = options.now ?? Date.now;
    const fetchFn = options.fetch ?? nodeFetch;
    const grantFn = options.fetch ?? grantFetch;
    const timeoutMs = options.timeoutMs ?? 10_000;
    const grant: GrantSettings = (this.grant = {
      authUrl: options.authUrl.replace(/\/+$/, ''),
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      timeoutMs,
      fetch: grantFn,
      now,
    });
    const onHeaderToken = (token: string, sentWith?: string): void => {
      this.noteResponseToken(token, sentWith);
    };
    this.session = new TokenSession(new TokenStore(options.storage, options.lockOptions), options.log, now);
    this.headerTokens = new HeaderTokens(this.session);
    this.check = new TokenCheck(this.session, {
      endpoint: { baseUrl: options.baseUrl.replace(/\/+$/, ''), apiKey: options.apiKey, fetch: fetchFn },
      timeoutMs,
      onHeaderToken,
    });
    this.refresh = new RefreshGrant(this.session, {
      grant,
      check: this.check,
      onRenewed: () => {
        this.keepAlive.clearBackoff();
      },
    });
    this.access = new AccessTokens(this.session, this.refresh);
    this.keepAlive = new KeepAlive(this.session, { check: this.check, refresh: this.refresh, access: this.access, onHeaderToken });
  }

  get state(): LinkState {
    return this.session.state;
  }

  onStateChange(listener: (state: LinkState) => void): () => void {
    return this.session.onStateChange(listener);
  }

  /** Anything status() shows changed: the state, its message, or a problem (settings, unsaved tokens). */
  onStatusChange(listener: () => void): () => void {
    return this.session.onStatusChange(listener);
  }

  /** Loads the store, applies config seeds, schedules keep-alive and expiry refresh. Never throws for network problems. */
  async start(): Promise<LinkState> {
    this.keepAlive.start();
    this.loading = this.session.track(this.load()).catch((error: unknown) => {
      this.options.log.error(
        error instanceof Error && error.name === 'StorageError'
          ? `Lock Access could not read its token file (${error.message}). Move that file away, then link the account again in the plugin settings.`
          : `Lock Access could not load its tokens: ${safeErrorText(error)}`,
      );
    });
    await this.loading;
    this.keepAlive.schedule();
    return this.session.state;
  }

  stop(): void {
    this.keepAlive.stop();
  }

  /** Resolves once no keep-alive, refresh or token write started by this manager is running. */
  async settled(): Promise<void> {
    await this.session.settled();
    await this.session.saver.idle();
  }

  async getAccessToken(): Promise<string> {
    // The devices are served before the token file is read: a command from Apple Home or a Matter
    // controller in that moment waits for the stored link instead of failing as "not linked".
    await this.loading;
    return this.access.get();
  }

  /**
   * A response's `x-svc-access-token`: used at once, written to disk at most once per 24 h.
   * `sentWith` (the token the request carried) lets an answer that was in flight during an unlink
   * be ignored.
   */
  noteResponseToken(token: string, sentWith?: string): void {
    this.headerTokens.note(token, sentWith);
    if (this.keepAlive.running) this.keepAlive.schedule();
  }

  /** After a 401 with `rejectedToken`: a newer token in use or one refresh (shared by all callers), else AuthorizationLostError. */
  handleUnauthorized(rejectedToken: string): Promise<RetryToken> {
    return this.access.afterUnauthorized(rejectedToken);
  }

  /**
   * Takes over at once a link, re-link or unlink that another process (the settings UI server) wrote
   * to the store; the daily maintenance round does the same on its own. Never throws.
   */
  async syncWithStore(): Promise<LinkState> {
    const session = this.session;
    try {
      const onDisk = await session.store.read();
      if (onDisk === undefined || onDisk.rotations !== session.record?.rotations) {
        session.adopt(onDisk);
        if (onDisk && this.keepAlive.running) this.keepAlive.afterLink();
      }
    } catch (error) {
      session.log.warn(`Lock Access could not read its token file (${safeErrorText(error)}).`);
    }
    return session.state;
  }

  /** Runs the refresh grant now (or adopts tokens another process just rotated). */
  refreshNow(): Promise<void> {
    return this.refresh.run('explicit');
  }

  /** Links with a pasted refresh token: spends it once for a fresh access token. */
  async linkWithRefreshToken(token: string): Promise<void> {
    const session = this.session;
    const refreshToken = token.trim();
    if (refreshToken === '') throw new RequestRejectedError('The refresh token is empty: paste the whole token.');
    await this.refresh.settle();
    await session.track(
      session.store.locked(async () => {
        const fresh = await session.store.read();
        session.adopt(await session.store.write(newLinkRecord(fresh, { refreshToken }, this.options.seeds, session.now()), fresh));
        session.dropAccess();
      }),
    );
    session.log.info('Lock Access: linking with the pasted refresh token.');
    await this.refresh.run('link');
    this.keepAlive.afterLink();
  }

  /**
   * The settings UI's OAuth flow: exchanges an authorization code and stores the result as a fresh
   * link (see codeGrant).
   */
  async exchangeAuthorizationCode(input: { code: string; redirectUri: string }): Promise<void> {
    await this.refresh.settle();
    await codeGrant(this.session, { grant: this.grant, check: this.check, seeds: this.options.seeds }, input);
    this.keepAlive.afterLink();
  }

  /** GET /users/me with the current access token; spends the refresh token only if that token is rejected. */
  testConnection(): Promise<{ ok: boolean; message: UiMessage }> {
    return testConnection({ check: this.check, access: this.access, onHeaderToken: (token, sentWith) => { this.noteResponseToken(token, sentWith); } });
  }

  /**
   * Forgets the tokens: at once in memory (answers still in flight can no longer bring one back),
   * then on disk as a tombstone that remembers every seed, so the unlink survives restarts with
   * tokens still in config.json. Rejects when the tombstone cannot be written; this process stays
   * unlinked all the same.
   */
  async unlink(): Promise<void> {
    const session = this.session;
    session.markUnlinked();
    this.keepAlive.forget();
    session.setState('unlinked', undefined);
    try {
      // A grant that was running ends first; its tokens are never taken up (the session ignores
      // every link change until the unlink is over).
      await this.refresh.settle();
      session.markUnlinked();
      const tombstone = await session.track(
        session.store.locked(async () => {
          const fresh = await session.store.read().catch(() => undefined);
          const previous = fresh ?? session.record;
          // The token machine's unlink: no token of any kind, and one more unlink counted, which
          // is how another process tells an unlink from a renewal.
          const decided = step(previous ? machineFromRecord(previous, false) : initialState, { type: 'unlinked' });
          return session.store.write({ ...unlinkedRecord(previous, this.options.seeds, session.now()), unlinks: decided.state.unlinks }, fresh);
        }),
      );
      session.stored(tombstone);
    } finally {
      session.endUnlink();
    }
    session.setState('unlinked', undefined);
    session.log.info('Lock Access: account unlinked; the stored tokens were deleted, and tokens still in the plugin settings are not used again.');
  }

  /**
   * Could a call authenticate now? An access token in hand (after a refused refresh it usually
   * still works), or an unused refresh token of a link that was not undone.
   */
  canAuthenticate(): boolean {
    const session = this.session;
    return session.current !== undefined || (session.state !== 'unlinked' && session.refreshUsable());
  }

  status(): TokenStatus {
    return this.session.status();
  }

  /** Start-up: a grant cut short by a crash, then the config's seeds, then a waiting token's check. */
  private async load(): Promise<void> {
    const session = this.session;
    await session.store.locked(async () => {
      let record = await session.store.read();
      record = await recoverInterrupted(session, record);
      // A config seed this store has not seen links anew; otherwise the stored tokens win.
      const seeded = seedLink(this.options.seeds, record, session.now());
      if (seeded) {
        session.log.info(
          record
            ? 'Lock Access: the tokens in the plugin settings are new, so they replace the stored link.'
            : 'Lock Access: linking with the tokens from the plugin settings; from now on the plugin keeps them fresh on its own.',
        );
        record = await session.store.write(seeded, record);
        session.dropAccess();
      }
      session.adopt(record);
      session.aliveAt(record?.lastKeepAliveAt);
      if (record?.pendingAccessToken) await this.check.validatePending(record, 'noAccessToken');
    });
    if (session.state === 'reauthorizationNeeded') session.logReauthorization(session.message ?? 'the stored link no longer works');
    // A tombstone is silent otherwise: say why config tokens do nothing.
    else if (session.record?.state === 'unlinked') this.options.log.warn(UNLINKED_AT_START_MESSAGE);
    // A setting the service refused may be fixed now: the kept refresh token shows it at once.
    const settingsToRetry = session.record?.settingsProblem !== undefined;
    if (session.state !== 'unlinked' && (!session.current || settingsToRetry) && session.refreshUsable()) {
      try {
        await this.refresh.run('noAccessToken');
      } catch (error) {
        this.keepAlive.noteFailure(error, 'get a first access token');
      }
    }
  }
}
