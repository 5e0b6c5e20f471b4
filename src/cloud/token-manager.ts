// Keeps the account linked for years: daily keep-alive instead of spending the refresh token,
// refresh grant only near expiry or after a 401, one grant at a time across processes, the new
// refresh token on disk before anything else happens, and a plain "link again" when nothing helps.
import type { Storage } from '../storage.js';
import { ACCESS_TOKEN_HEADER, API_KEY_HEADER } from '../settings.js';
import { AuthorizationLostError, CloudError, NotLinkedError, RateLimitedError, RefreshRejectedError, RequestRejectedError, TransientError } from './errors.js';
import type { FileLockOptions } from './file-lock.js';
import { decodeJwtTimes } from './jwt.js';
import { nodeFetch } from './node-fetch.js';
import { describeNetworkError, postTokenGrant, type GrantOutcome } from './oauth.js';
import {
  HEADER_SAVE_INTERVAL_MS,
  KEEP_ALIVE_INTERVAL_MS,
  expiryOf,
  refreshDueAt,
  retryDelayMs,
  timerDelay,
} from './token-schedule.js';
import { TokenStore, hashSeed, type TokenRecord } from './token-store.js';

export type LinkState = 'unlinked' | 'linked' | 'reauthorizationNeeded';

/** Points inside a refresh where the crash tests pause the process (see test/fixtures/token-child.ts). */
export type RefreshStep = 'markerWritten' | 'responseReceived' | 'responseRead' | 'tokensWritten';

export interface TokenManagerLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

export interface TokenManagerOptions {
  storage: Storage;
  authUrl: string;
  baseUrl: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  seeds?: { refreshToken?: string; accessToken?: string };
  log: TokenManagerLog;
  now?: () => number;
  fetch?: typeof fetch;
  /** Timeout of token endpoint and /users/me calls. Default 10 s. */
  timeoutMs?: number;
  lockOptions?: FileLockOptions;
  /** Test seam: awaited at each step of a refresh grant. */
  onStep?: (step: RefreshStep) => Promise<void> | void;
}

export interface TokenStatus {
  state: LinkState;
  accessTokenExpiresAt?: number;
  lastRefreshAt?: number;
  lastKeepAliveAt?: number;
  message?: string;
}

/** The fixed part of the log line when the user must link again (documented in the README). */
export const REAUTHORIZATION_ADVICE =
  'Open the plugin settings in the Homebridge UI and link your Lock Access account again (or paste a new refresh token there). Until then HomeKit shows the last known state.';

const NOT_LINKED_MESSAGE = 'Lock Access is not linked to an account: open the plugin settings in the Homebridge UI and link your account (or enter a refresh token).';

const UNCERTAIN_MESSAGE =
  'A token renewal got no usable answer (or Homebridge stopped while it ran). The service may have replaced the refresh token without the plugin receiving the new one, so the old one will never be sent again. The plugin keeps using the current access token, which stays valid, and keeps it alive every day.';

type Reason = 'expiry' | 'unauthorized' | 'link' | 'noAccessToken' | 'explicit';

interface Current {
  token: string;
  expiresAt?: number;
  issuedAt?: number;
}

type MeResult = { kind: 'ok'; headerToken?: string } | { kind: 'unauthorized' } | { kind: 'inconclusive'; detail: string };

const FIRST_CHECK_DELAY_MS = 10_000;
const SEED_HASH_MEMORY = 20;

function dedupeTail(values: string[], limit: number): string[] {
  return [...new Set(values)].slice(-limit);
}

function formatDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

export class TokenManager {
  private readonly store: TokenStore;
  private readonly log: TokenManagerLog;
  private readonly now: () => number;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly authUrl: string;
  private readonly baseUrl: string;

  private record: TokenRecord | undefined;
  private current: Current | undefined;
  private lastAliveAt: number | undefined;
  private linkState: LinkState = 'unlinked';
  private message: string | undefined;
  private readonly listeners = new Set<(state: LinkState) => void>();
  private readonly rejectedTokens = new Set<string>();
  private refreshing: Promise<void> | undefined;
  private savingHeaderToken = false;
  private timer: NodeJS.Timeout | undefined;
  private retryAt: number | undefined;
  private failures = 0;
  private stopped = true;
  private expiryWarned = false;
  private reauthorizationLogged = false;
  private readonly busy = new Set<Promise<unknown>>();

  constructor(private readonly options: TokenManagerOptions) {
    this.store = new TokenStore(options.storage, options.lockOptions);
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.fetchFn = options.fetch ?? nodeFetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.authUrl = options.authUrl.replace(/\/+$/, '');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  // ---------------------------------------------------------------- public surface

  get state(): LinkState {
    return this.linkState;
  }

  onStateChange(listener: (state: LinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Loads the store, applies config seeds, schedules keep-alive and expiry refresh. Never throws for network problems. */
  async start(): Promise<LinkState> {
    this.stopped = false;
    try {
      await this.track(this.load());
    } catch (error) {
      this.log.error(
        error instanceof Error && error.name === 'StorageError'
          ? `Lock Access could not read its token file (${error.message}). Move that file away, then link the account again in the plugin settings.`
          : `Lock Access could not load its tokens: ${this.describe(error)}`,
      );
    }
    this.schedule();
    return this.linkState;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves once no keep-alive, refresh or token write started by this manager is running. */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  async getAccessToken(): Promise<string> {
    if (this.current) return this.current.token;
    if (this.refreshing) await this.refreshing.catch(() => undefined);
    const afterWait = this.currentToken();
    if (afterWait !== undefined) return afterWait;
    if (this.linkState !== 'unlinked' && this.refreshUsable()) {
      await this.refresh('noAccessToken');
      const afterRefresh = this.currentToken();
      if (afterRefresh !== undefined) return afterRefresh;
    }
    throw new NotLinkedError(this.linkState === 'reauthorizationNeeded' ? `Lock Access needs you to link your account again. ${REAUTHORIZATION_ADVICE}` : NOT_LINKED_MESSAGE);
  }

  /** A response's `x-svc-access-token`: used at once, written to disk at most once per 24 h. */
  noteResponseToken(token: string): void {
    const now = this.now();
    if (token === '' || this.rejectedTokens.has(token)) return;
    this.lastAliveAt = now;
    if (this.current?.token !== token) {
      // Header tokens extend the expiry; the issue time stays the grant's, so "10% of the lifetime"
      // keeps meaning the lifetime the service granted.
      const times = decodeJwtTimes(token);
      const next: Current = { token };
      const expiresAt = times.expiresAt ?? this.current?.expiresAt;
      const issuedAt = this.current?.issuedAt ?? times.issuedAt;
      if (expiresAt !== undefined) next.expiresAt = expiresAt;
      if (issuedAt !== undefined) next.issuedAt = issuedAt;
      this.current = next;
    }
    const record = this.record;
    if (record && !this.savingHeaderToken && record.accessToken !== token) {
      const savedAt = record.headerTokenSavedAt ?? record.lastRefreshAt ?? record.linkedAt;
      if (now - savedAt >= HEADER_SAVE_INTERVAL_MS) {
        this.savingHeaderToken = true;
        void this.track(this.saveHeaderToken())
          .catch((error: unknown) => {
            this.log.warn(`Lock Access could not save the updated access token (it keeps using it): ${this.describe(error)}`);
          })
          .finally(() => {
            this.savingHeaderToken = false;
          });
      }
    }
    if (!this.stopped) this.schedule();
  }

  /** After a 401 with `rejectedToken`: one refresh (shared by all callers), else AuthorizationLostError. */
  async handleUnauthorized(rejectedToken: string): Promise<string> {
    if (this.current && this.current.token !== rejectedToken) return this.current.token;
    // A 401 means the authorization behind this token is gone (spec), so the stored token of the
    // same grant is no better: only a token from a newer grant is worth trying.
    this.rememberRejected(rejectedToken);
    if (this.record?.accessToken !== undefined) this.rememberRejected(this.record.accessToken);
    if (this.current?.token === rejectedToken) this.current = undefined;
    let failure: unknown;
    try {
      await this.refresh('unauthorized');
    } catch (error) {
      failure = error;
    }
    const after = this.currentToken();
    if (after !== undefined && after !== rejectedToken) return after;
    if (failure instanceof TransientError || failure instanceof RateLimitedError) throw failure;
    return this.declareLost();
  }

  /**
   * Takes over at once a link, re-link or unlink that another process (the settings UI server) wrote
   * to the store; the daily maintenance round does the same on its own. Never throws.
   */
  async syncWithStore(): Promise<LinkState> {
    try {
      const onDisk = await this.readStore();
      if (onDisk === undefined || onDisk.rotations !== this.record?.rotations) {
        this.adopt(onDisk);
        if (onDisk && !this.stopped) this.afterLink();
      }
    } catch (error) {
      this.log.warn(`Lock Access could not read its token file (${this.describe(error)}).`);
    }
    return this.linkState;
  }

  /** Runs the refresh grant now (or adopts tokens another process just rotated). */
  refreshNow(): Promise<void> {
    return this.refresh('explicit');
  }

  /** GET /users/me with the current access token; spends the refresh token only if that token is rejected. */
  async testConnection(): Promise<{ ok: boolean; message: string }> {
    let token: string;
    try {
      token = await this.getAccessToken();
    } catch (error) {
      return { ok: false, message: this.describe(error) };
    }
    let result = await this.callUsersMe(token);
    if (result.kind === 'unauthorized') {
      try {
        token = await this.handleUnauthorized(token);
      } catch (error) {
        return { ok: false, message: this.describe(error) };
      }
      result = await this.callUsersMe(token);
    }
    if (result.kind === 'ok') {
      this.noteResponseToken(result.headerToken ?? token);
      return { ok: true, message: 'Connected: the Lock Access service accepted the access token.' };
    }
    if (result.kind === 'unauthorized') return { ok: false, message: `The service refused the access token. ${REAUTHORIZATION_ADVICE}` };
    return { ok: false, message: `Could not reach the Lock Access service (${result.detail}). Try again later.` };
  }

  /** Links with a pasted refresh token: spends it once for a fresh access token. */
  async linkWithRefreshToken(token: string): Promise<void> {
    const refreshToken = token.trim();
    if (refreshToken === '') throw new RequestRejectedError('The refresh token is empty: paste the whole token.');
    await this.waitForRefresh();
    await this.track(
      this.store.locked(async () => {
        const fresh = await this.readStore();
        this.adopt(await this.store.write(this.newLink(fresh, { refreshToken }), fresh));
        this.current = undefined;
      }),
    );
    this.log.info('Lock Access: linking with the pasted refresh token.');
    await this.refresh('link');
    this.afterLink();
  }

  /** The settings UI's OAuth flow: exchanges an authorization code and stores the result as a fresh link. */
  async exchangeAuthorizationCode(input: { code: string; redirectUri: string }): Promise<void> {
    await this.waitForRefresh();
    const outcome = await postTokenGrant({
      ...this.grantBase(),
      fields: { grant_type: 'authorization_code', code: input.code, redirect_uri: input.redirectUri },
    });
    if (outcome.kind !== 'tokens') throw this.grantError(outcome, 'The service did not accept the authorization code');
    const { tokens, receivedAt } = outcome;
    await this.track(
      this.store.locked(async () => {
        const fresh = await this.readStore();
        const link = this.newLink(fresh, { refreshToken: tokens.refresh_token });
        const times = decodeJwtTimes(tokens.access_token);
        const expiresAt = expiryOf(times.expiresAt, tokens.expires_in, receivedAt);
        link.pendingAccessToken = { token: tokens.access_token, issuedAt: times.issuedAt ?? receivedAt };
        if (expiresAt !== undefined) link.pendingAccessToken.expiresAt = expiresAt;
        link.lastRefreshAt = receivedAt;
        const written = await this.store.write(link, fresh);
        this.adopt(written);
        this.current = undefined;
        await this.validatePending(written, 'link');
      }),
    );
    this.log.info('Lock Access: account linked through the settings.');
    this.afterLink();
  }

  /** Forgets the tokens (deletes tokens.json). */
  async unlink(): Promise<void> {
    await this.waitForRefresh();
    await this.track(
      this.store.locked(async () => {
        await this.store.remove();
      }),
    );
    this.record = undefined;
    this.current = undefined;
    this.lastAliveAt = undefined;
    this.retryAt = undefined;
    this.failures = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.setState('unlinked', undefined);
    this.log.info('Lock Access: account unlinked; the stored tokens were deleted.');
  }

  status(): TokenStatus {
    const status: TokenStatus = { state: this.linkState };
    const expiresAt = this.current?.expiresAt;
    if (expiresAt !== undefined) status.accessTokenExpiresAt = expiresAt;
    if (this.record?.lastRefreshAt !== undefined) status.lastRefreshAt = this.record.lastRefreshAt;
    if (this.lastAliveAt !== undefined) status.lastKeepAliveAt = this.lastAliveAt;
    if (this.message !== undefined) status.message = this.message;
    return status;
  }

  // ---------------------------------------------------------------- loading and seeds

  private async load(): Promise<void> {
    await this.store.locked(async () => {
      let record = await this.readStore();
      record = await this.recoverInterrupted(record);
      record = await this.applySeeds(record);
      this.adopt(record);
      this.lastAliveAt = record?.lastKeepAliveAt;
      if (record?.pendingAccessToken) await this.validatePending(record, 'noAccessToken');
    });
    if (this.linkState === 'reauthorizationNeeded') this.logReauthorization(this.message ?? 'the stored link no longer works');
    if (this.linkState !== 'unlinked' && !this.current && this.refreshUsable()) {
      try {
        await this.refresh('noAccessToken');
      } catch (error) {
        this.noteFailure(error, 'get a first access token');
      }
    }
  }

  /** A corrupt tokens.json is reported, not silently replaced. */
  private async readStore(): Promise<TokenRecord | undefined> {
    return this.store.read();
  }

  /** A refresh marker found while we hold the lock means its process died mid-grant. */
  private async recoverInterrupted(record: TokenRecord | undefined): Promise<TokenRecord | undefined> {
    if (!record?.refreshInFlight) return record;
    this.log.warn(`Lock Access: ${UNCERTAIN_MESSAGE} If Lock Access later says it needs you to link again, do so in the plugin settings.`);
    const next: TokenRecord = { ...record, refreshTokenLost: 'uncertain', message: UNCERTAIN_MESSAGE };
    delete next.refreshToken;
    delete next.refreshInFlight;
    return this.store.write(next, record);
  }

  private async applySeeds(record: TokenRecord | undefined): Promise<TokenRecord | undefined> {
    const refreshToken = this.options.seeds?.refreshToken?.trim() ?? '';
    const accessToken = this.options.seeds?.accessToken?.trim() ?? '';
    const seed = refreshToken !== '' ? refreshToken : accessToken;
    if (seed === '') return record;
    const seedHash = hashSeed(seed);
    if (record && (record.seedHash === seedHash || record.knownSeedHashes.includes(seedHash))) return record;
    const link = this.newLink(record, refreshToken !== '' ? { refreshToken } : {});
    link.seedHash = seedHash;
    link.knownSeedHashes = dedupeTail([...link.knownSeedHashes, seedHash], SEED_HASH_MEMORY);
    if (accessToken !== '') {
      const times = decodeJwtTimes(accessToken);
      link.accessToken = accessToken;
      if (times.expiresAt !== undefined) link.accessTokenExpiresAt = times.expiresAt;
      if (times.issuedAt !== undefined) link.accessTokenIssuedAt = times.issuedAt;
    }
    this.log.info(
      record
        ? 'Lock Access: the tokens in the plugin settings are new, so they replace the stored link.'
        : 'Lock Access: linking with the tokens from the plugin settings; from now on the plugin keeps them fresh on its own.',
    );
    const written = await this.store.write(link, record);
    this.current = undefined;
    return written;
  }

  /** A fresh link record that remembers every seed already seen, so a stale seed never re-links. */
  private newLink(previous: TokenRecord | undefined, tokens: { refreshToken?: string }): Omit<TokenRecord, 'generation'> {
    const known = [...(previous?.knownSeedHashes ?? [])];
    if (previous?.seedHash !== undefined) known.push(previous.seedHash);
    const configSeed = this.options.seeds?.refreshToken?.trim() || this.options.seeds?.accessToken?.trim();
    if (configSeed) known.push(hashSeed(configSeed));
    if (tokens.refreshToken !== undefined) known.push(hashSeed(tokens.refreshToken));
    const link: Omit<TokenRecord, 'generation'> = {
      version: 1,
      rotations: (previous?.rotations ?? 0) + 1,
      state: 'linked',
      linkedAt: this.now(),
      knownSeedHashes: dedupeTail(known, SEED_HASH_MEMORY),
    };
    if (tokens.refreshToken !== undefined) link.refreshToken = tokens.refreshToken;
    else link.refreshTokenLost = 'none';
    return link;
  }

  private afterLink(): void {
    this.expiryWarned = false;
    this.failures = 0;
    this.retryAt = undefined;
    if (!this.stopped) this.schedule();
  }

  // ---------------------------------------------------------------- refresh grant

  private refreshUsable(): boolean {
    return this.record?.refreshToken !== undefined;
  }

  private refresh(reason: Reason): Promise<void> {
    if (this.refreshing) return this.refreshing;
    const basis = this.record?.rotations;
    const run = this.track(
      this.store.locked(() => this.refreshLocked(reason, basis)).catch((error: unknown) => {
        // Callers decide by class: a busy lock or an unwritable disk is "try again later".
        throw error instanceof CloudError ? error : new TransientError(`The token renewal could not run: ${this.describe(error)}`, undefined, { cause: error });
      }),
    );
    this.refreshing = run.finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async waitForRefresh(): Promise<void> {
    if (this.refreshing) await this.refreshing.catch(() => undefined);
  }

  private async refreshLocked(reason: Reason, basis: number | undefined): Promise<void> {
    let fresh = await this.readStore();
    fresh = await this.recoverInterrupted(fresh);
    if (!fresh) {
      this.adopt(undefined);
      throw new NotLinkedError(NOT_LINKED_MESSAGE);
    }
    if (basis !== undefined && fresh.rotations !== basis) {
      // Another process (the settings UI server or the plugin) rotated while we waited: use its tokens.
      this.log.debug('Lock Access: another process renewed the tokens; using them.');
      this.adopt(fresh);
      return;
    }
    if (reason === 'unauthorized' && fresh.accessToken !== undefined && !this.rejectedTokens.has(fresh.accessToken)) {
      this.adopt(fresh);
      if (this.current && !this.rejectedTokens.has(this.current.token)) return;
    }
    const refreshToken = fresh.refreshToken;
    if (refreshToken === undefined) {
      this.adopt(fresh);
      throw new RefreshRejectedError(
        fresh.refreshTokenLost === 'uncertain'
          ? 'There is no unused refresh token: the last renewal may have been used by the service without the answer reaching the plugin.'
          : 'There is no unused refresh token.',
      );
    }

    // Write-ahead: the marker (with the old token still in place) is on disk before the grant is sent.
    const marked = await this.store.write({ ...fresh, refreshInFlight: { pid: process.pid, nonce: `${this.now()}-${Math.random()}`, startedAt: this.now() } }, fresh);
    this.record = marked;
    this.log.debug(`Lock Access: renewing the access token (${reason}).`);
    if (this.options.onStep) await this.options.onStep('markerWritten');
    const outcome = await postTokenGrant({
      ...this.grantBase(),
      fields: { grant_type: 'refresh_token', refresh_token: refreshToken },
      onResponse: this.options.onStep ? async () => this.options.onStep?.('responseReceived') : undefined,
    });

    if (outcome.kind === 'tokens') {
      const { tokens, receivedAt } = outcome;
      if (this.options.onStep) await this.options.onStep('responseRead');
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
      // First thing after the body: the single-use successor is on disk before anything else.
      const written = await this.store.write(next, marked);
      this.record = written;
      if (this.options.onStep) await this.options.onStep('tokensWritten');
      this.log.info('Lock Access: access token renewed; the new refresh token is saved.');
      this.failures = 0;
      this.retryAt = undefined;
      this.expiryWarned = false;
      await this.validatePending(written, reason);
      if (this.linkState !== 'linked') this.setState('linked', undefined);
      return;
    }

    const cleared: TokenRecord = { ...marked };
    delete cleared.refreshInFlight;
    switch (outcome.kind) {
      case 'rejected': {
        // Re-read before declaring the link lost: a racing process may have rotated after all.
        const again = await this.readStore();
        if (again && again.rotations !== marked.rotations) {
          this.adopt(again);
          return;
        }
        const message = 'The Lock Access service refused the stored refresh token (it is used, expired or revoked).';
        const next: TokenRecord = { ...cleared, refreshTokenLost: 'rejected', state: 'reauthorizationNeeded', message };
        delete next.refreshToken;
        this.adopt(await this.store.write(next, marked));
        this.logReauthorization(message);
        throw new RefreshRejectedError(message, outcome.oauthError);
      }
      case 'lost': {
        const next: TokenRecord = { ...cleared, refreshTokenLost: 'uncertain', message: UNCERTAIN_MESSAGE };
        delete next.refreshToken;
        this.adopt(await this.store.write(next, marked));
        this.log.warn(`Lock Access: ${UNCERTAIN_MESSAGE} (${outcome.detail}). If Lock Access later says it needs you to link again, do so in the plugin settings.`);
        throw new TransientError(`The token renewal got no usable answer (${outcome.detail}).`);
      }
      default: {
        // Nothing was consumed: keep the refresh token for a later attempt.
        this.record = await this.store.write(cleared, marked);
        const error = this.grantError(outcome, 'The token renewal failed');
        if (outcome.kind === 'clientRejected') {
          this.message = error.message;
          this.log.error(`Lock Access: ${error.message}`);
        }
        throw error;
      }
    }
  }

  private grantBase() {
    return {
      authUrl: this.authUrl,
      clientId: this.options.clientId,
      clientSecret: this.options.clientSecret,
      timeoutMs: this.timeoutMs,
      fetch: this.fetchFn,
      now: this.now,
    };
  }

  private grantError(outcome: Exclude<GrantOutcome, { kind: 'tokens' }>, what: string): CloudError {
    switch (outcome.kind) {
      case 'rejected':
        return new RefreshRejectedError(`${what}: the service refused it${outcome.oauthError ? ` (${outcome.oauthError})` : ''}.`, outcome.oauthError);
      case 'clientRejected':
        return new RequestRejectedError(`${what}: the service refused the client id or client secret (${outcome.status}); check both in the plugin settings.`, outcome.status);
      case 'rateLimited':
        return new RateLimitedError(`${what}: the service asked to slow down.`, outcome.retryAfterMs);
      case 'unavailable':
        return new TransientError(`${what}: the service is unavailable for now (503); the refresh token is kept for the next attempt.`);
      case 'notSent':
      case 'lost':
        return new TransientError(`${what}: ${outcome.detail}.`);
    }
  }

  /**
   * Checks a grant's new access token with GET /users/me before the old one is discarded.
   * Call while holding the store lock, with the record just read or written.
   */
  private async validatePending(record: TokenRecord, reason: Reason): Promise<void> {
    const pending = record.pendingAccessToken;
    if (!pending) return;
    const result = await this.callUsersMe(pending.token);
    if (result.kind === 'ok') {
      const next: TokenRecord = { ...record, accessToken: pending.token, accessTokenIssuedAt: pending.issuedAt, headerTokenSavedAt: this.now() };
      if (pending.expiresAt !== undefined) next.accessTokenExpiresAt = pending.expiresAt;
      else delete next.accessTokenExpiresAt;
      delete next.pendingAccessToken;
      const written = await this.store.write(next, record);
      this.adopt(written);
      this.current = { token: pending.token, issuedAt: pending.issuedAt, ...(pending.expiresAt !== undefined ? { expiresAt: pending.expiresAt } : {}) };
      if (result.headerToken !== undefined) this.noteResponseToken(result.headerToken);
      else this.lastAliveAt = this.now();
      this.log.debug('Lock Access: the new access token works.');
      return;
    }
    if (result.kind === 'unauthorized') {
      this.rememberRejected(pending.token);
      const next: TokenRecord = { ...record };
      delete next.pendingAccessToken;
      this.adopt(await this.store.write(next, record));
      this.log.warn('Lock Access: the service refused the access token it had just issued; the previous access token stays in use.');
      return;
    }
    // No answer: keep both; use the new one only when there is nothing better.
    const oldUsable = this.current !== undefined && !this.rejectedTokens.has(this.current.token) && reason !== 'link';
    if (!oldUsable) this.current = { token: pending.token, issuedAt: pending.issuedAt, ...(pending.expiresAt !== undefined ? { expiresAt: pending.expiresAt } : {}) };
    this.log.debug(`Lock Access: could not check the new access token yet (${result.detail}); checking again later.`);
  }

  /** After every way to get a working token failed: re-read the store, then ask the user to link again. */
  private async declareLost(): Promise<string> {
    let adopted: string | undefined;
    await this.track(
      this.store.locked(async () => {
        const fresh = await this.readStore();
        if (fresh?.accessToken !== undefined && !this.rejectedTokens.has(fresh.accessToken)) {
          this.adopt(fresh);
          adopted = fresh.accessToken;
          return;
        }
        if (!fresh) {
          this.adopt(undefined);
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
        this.adopt(await this.store.write(next, fresh));
        this.current = undefined;
      }),
    );
    // Another process stored a token we have not seen rejected: worth one more try.
    if (adopted !== undefined) return adopted;
    if (this.linkState === 'unlinked') throw new NotLinkedError(NOT_LINKED_MESSAGE);
    this.logReauthorization(this.message ?? 'the link no longer works');
    throw new AuthorizationLostError(`Lock Access needs you to link your account again. ${REAUTHORIZATION_ADVICE}`, 401);
  }

  // ---------------------------------------------------------------- keep-alive and schedule

  private async callUsersMe(token: string): Promise<MeResult> {
    let response: Response;
    try {
      response = await this.fetchFn(`${this.baseUrl}/users/me`, {
        method: 'GET',
        headers: { [API_KEY_HEADER]: this.options.apiKey, [ACCESS_TOKEN_HEADER]: token, accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
    } catch (error) {
      return { kind: 'inconclusive', detail: describeNetworkError(error) };
    }
    if (response.status === 401) return { kind: 'unauthorized' };
    if (!response.ok) return { kind: 'inconclusive', detail: `the service answered ${response.status}` };
    const header = response.headers.get(ACCESS_TOKEN_HEADER);
    return header !== null && header !== '' ? { kind: 'ok', headerToken: header } : { kind: 'ok' };
  }

  private async saveHeaderToken(): Promise<void> {
    await this.store.locked(async () => {
      const fresh = await this.readStore();
      if (!fresh || fresh.rotations !== this.record?.rotations) {
        this.adopt(fresh);
        return;
      }
      const current = this.current;
      if (!current || fresh.accessToken === current.token) return;
      const next: TokenRecord = { ...fresh, accessToken: current.token, headerTokenSavedAt: this.now() };
      if (current.expiresAt !== undefined) next.accessTokenExpiresAt = current.expiresAt;
      if (current.issuedAt !== undefined) next.accessTokenIssuedAt = current.issuedAt;
      if (this.lastAliveAt !== undefined) next.lastKeepAliveAt = this.lastAliveAt;
      this.record = await this.store.write(next, fresh);
      this.log.debug('Lock Access: saved the updated access token.');
    });
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || !this.record) return;
    const now = this.now();
    const due: number[] = [];
    if (this.current) {
      due.push(this.lastAliveAt !== undefined ? this.lastAliveAt + KEEP_ALIVE_INTERVAL_MS : now + FIRST_CHECK_DELAY_MS);
      const refreshAt = refreshDueAt(this.current.expiresAt, this.current.issuedAt);
      if (refreshAt !== undefined && this.refreshUsable()) due.push(refreshAt);
    } else if (this.refreshUsable() && this.linkState !== 'unlinked') {
      due.push(now);
    }
    if (this.record.pendingAccessToken) due.push(now + FIRST_CHECK_DELAY_MS);
    if (due.length === 0) return;
    let next = Math.min(...due);
    if (this.retryAt !== undefined) next = Math.max(next, this.retryAt);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.track(this.tick()).finally(() => {
        this.schedule();
      });
    }, timerDelay(next, now));
    this.timer.unref();
  }

  /** One maintenance round. Never throws: it runs from a timer. */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.maintain();
    } catch (error) {
      this.noteFailure(error, 'keep the tokens fresh');
    }
  }

  private async maintain(): Promise<void> {
    const now = this.now();
    // The settings UI server may have linked, re-linked or unlinked in the meantime.
    const onDisk = await this.readStore();
    if (onDisk === undefined || onDisk.rotations !== this.record?.rotations) this.adopt(onDisk);
    if (!this.record) return;
    if (this.record.pendingAccessToken) {
      await this.store.locked(async () => {
        const fresh = await this.readStore();
        if (!fresh) {
          this.adopt(undefined);
          return;
        }
        if (fresh.rotations !== this.record?.rotations) this.adopt(fresh);
        await this.validatePending(fresh, 'expiry');
      });
    }
    if (!this.current) {
      if (this.refreshUsable() && this.linkState !== 'unlinked') await this.refresh('noAccessToken');
      return;
    }
    if (this.lastAliveAt === undefined || now >= this.lastAliveAt + KEEP_ALIVE_INTERVAL_MS) {
      const token = this.current.token;
      const result = await this.callUsersMe(token);
      if (result.kind === 'ok') {
        this.noteResponseToken(result.headerToken ?? token);
        this.lastAliveAt = now;
        this.log.debug('Lock Access: daily keep-alive call succeeded.');
      } else if (result.kind === 'unauthorized') {
        await this.handleUnauthorized(token);
        return;
      } else {
        throw new TransientError(`the daily keep-alive call failed (${result.detail})`);
      }
    }
    const current = this.current;
    const refreshAt = refreshDueAt(current.expiresAt, current.issuedAt);
    if (refreshAt === undefined || now < refreshAt) {
      this.failures = 0;
      this.retryAt = undefined;
      return;
    }
    if (this.refreshUsable()) {
      await this.refresh('expiry');
      this.failures = 0;
      this.retryAt = undefined;
    } else if (!this.expiryWarned && current.expiresAt !== undefined) {
      this.expiryWarned = true;
      this.log.warn(`Lock Access: the access token expires on ${formatDate(current.expiresAt)} and there is no unused refresh token to renew it. ${REAUTHORIZATION_ADVICE.replace('Until then', 'Before then, to avoid an interruption; after that')}`);
    }
  }

  private noteFailure(error: unknown, what: string): void {
    if (error instanceof AuthorizationLostError || error instanceof RefreshRejectedError) return; // already logged once
    this.failures += 1;
    const delay = error instanceof RateLimitedError && error.retryAfterMs !== undefined ? Math.max(error.retryAfterMs, retryDelayMs(this.failures)) : retryDelayMs(this.failures);
    this.retryAt = this.now() + delay;
    const text = `Lock Access could not ${what}: ${this.describe(error)} Trying again in ${Math.round(delay / 60_000)} min.`;
    if (this.failures >= 3) this.log.warn(text);
    else this.log.debug(text);
  }

  // ---------------------------------------------------------------- state

  private adopt(record: TokenRecord | undefined): void {
    const previous = this.record;
    this.record = record;
    if (!record) {
      this.current = undefined;
      this.setState('unlinked', undefined);
      return;
    }
    const changed = previous?.accessToken !== record.accessToken || previous?.rotations !== record.rotations;
    if (changed || this.current === undefined) {
      if (record.accessToken !== undefined && !this.rejectedTokens.has(record.accessToken)) {
        const current: Current = { token: record.accessToken };
        if (record.accessTokenExpiresAt !== undefined) current.expiresAt = record.accessTokenExpiresAt;
        if (record.accessTokenIssuedAt !== undefined) current.issuedAt = record.accessTokenIssuedAt;
        this.current = current;
      } else if (changed) {
        this.current = undefined;
      }
    }
    this.setState(record.state, record.message);
  }

  private setState(state: LinkState, message: string | undefined): void {
    this.message = message;
    if (state === this.linkState) return;
    if (state !== 'reauthorizationNeeded') this.reauthorizationLogged = false;
    this.linkState = state;
    for (const listener of this.listeners) {
      try {
        listener(state);
      } catch (error) {
        this.log.debug(`Lock Access: a link-state listener failed: ${this.describe(error)}`);
      }
    }
  }

  private logReauthorization(reason: string): void {
    if (this.reauthorizationLogged) return;
    this.reauthorizationLogged = true;
    this.log.error(`Lock Access needs you to link your account again: ${reason} ${REAUTHORIZATION_ADVICE}`);
  }

  /** Read through a method: the field changes across awaits, which narrowing does not see. */
  private currentToken(): string | undefined {
    return this.current?.token;
  }

  private rememberRejected(token: string): void {
    if (this.rejectedTokens.size >= 16) this.rejectedTokens.clear();
    this.rejectedTokens.add(token);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.busy.add(promise);
    void promise.then(
      () => this.busy.delete(promise),
      () => this.busy.delete(promise),
    );
    return promise;
  }

  /** Error text for logs and the UI: our messages never contain secrets; foreign ones are reduced to their kind. */
  private describe(error: unknown): string {
    if (error instanceof CloudError) return error.message;
    if (error instanceof Error && error.name === 'StorageError') return error.message;
    if (error instanceof Error && error.name === 'FileLockTimeoutError') return error.message;
    return describeNetworkError(error);
  }
}
