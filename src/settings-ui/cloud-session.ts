// The settings server's short visits to the cloud: a token manager on the token file the plugin
// shares, used for one request and stopped again, so the UI server keeps no timers and never
// renews on its own (the plugin owns keep-alive and renewal). One exception: a link whose new
// tokens could not be written. Those tokens exist nowhere else, so their manager is held here and
// keeps retrying the write; the server must not exit before they are saved (see tokensSaved()).
import type { ApiClient } from '../cloud/http/api.js';
import { TokenManager } from '../cloud/tokens/token-manager.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import type { Account } from './account-input.js';
import { accountStorage } from '../accounts/account-storage.js';
import { MAIN_ACCOUNT_ID } from '../config/fields.js';

/** Builds the API client (src/cloud/http/http-client.ts in production) on a token manager. */
export type ClientFactory = (account: { baseUrl: string; apiKey: string }, tokens: TokenManager, log: Logger) => ApiClient | Promise<ApiClient>;

export interface CloudSessionOptions {
  storage: Storage;
  createClient: ClientFactory;
  log: Logger;
  now: () => number;
  fetch?: typeof fetch;
}

export class CloudSession {
  /** Managers whose newly granted tokens are not on disk yet, each with the end of its wait. */
  private readonly holding = new Map<TokenManager, Promise<void>>();

  constructor(private readonly options: CloudSessionOptions) {}

  /** Does this process hold granted tokens that are not saved yet? */
  holdsUnsavedTokens(): boolean {
    return this.holding.size > 0;
  }

  /** Resolves once every held token is saved (or replaced by a newer link or an unlink on disk). */
  async tokensSaved(): Promise<void> {
    while (this.holding.size > 0) await Promise.all([...this.holding.values()]);
  }

  get storage(): Storage {
    return this.options.storage;
  }

  /** Where `account` keeps its tokens, webhook token and ledger: `accounts/<id>/` for an extra account. */
  storageOf(account: Account): Storage {
    return accountStorage(this.options.storage, account.id ?? MAIN_ACCOUNT_ID);
  }

  get log(): Logger {
    return this.options.log;
  }

  /** The API client for `account`, authorised by `tokens`. */
  client(account: Account, tokens: TokenManager): Promise<ApiClient> {
    return Promise.resolve(this.options.createClient({ baseUrl: account.baseUrl, apiKey: account.apiKey }, tokens, this.options.log));
  }

  /** Runs `fn` with a token manager that has read the shared token file, and stops it afterwards. */
  async withTokens<T>(account: Account, fn: (tokens: TokenManager) => Promise<T>): Promise<T> {
    const tokens = this.tokenManager(account);
    try {
      await tokens.start();
      tokens.stop();
      return await fn(tokens);
    } finally {
      tokens.stop();
      await tokens.settled();
      this.holdIfUnsaved(tokens);
    }
  }

  /** Keeps a manager whose saver still retries: its tokens live only in this process until then. */
  private holdIfUnsaved(tokens: TokenManager): void {
    if (tokens.status().problem !== 'notSaved' || this.holding.has(tokens)) return;
    const saved = new Promise<void>((resolve) => {
      const stop = tokens.onStatusChange(() => {
        if (tokens.status().problem === 'notSaved') return;
        stop();
        this.holding.delete(tokens);
        this.options.log.info('Lock Access: the tokens of the new link are saved now; the plugin takes them over from the token file.');
        resolve();
      });
    });
    this.holding.set(tokens, saved);
  }

  private tokenManager(account: Account): TokenManager {
    const seeds: { refreshToken?: string; accessToken?: string } = {};
    if (account.refreshToken) seeds.refreshToken = account.refreshToken;
    if (account.accessToken) seeds.accessToken = account.accessToken;
    const options: ConstructorParameters<typeof TokenManager>[0] = {
      storage: this.storageOf(account),
      authUrl: account.authUrl,
      baseUrl: account.baseUrl,
      apiKey: account.apiKey,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      seeds,
      log: this.options.log,
      now: this.options.now,
    };
    if (this.options.fetch) options.fetch = this.options.fetch;
    return new TokenManager(options);
  }
}
