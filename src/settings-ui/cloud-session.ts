// The settings server's short visits to the cloud: a token manager on the token file the plugin
// shares, used for one request and stopped again, so the UI server keeps no timers and never
// renews on its own (the plugin owns keep-alive and renewal).
import type { ApiClient } from '../cloud/http/api.js';
import { TokenManager } from '../cloud/tokens/token-manager.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import type { Account } from './account-input.js';

/** Builds the API client (src/cloud/http-client.ts in production) on a token manager. */
export type ClientFactory = (account: { baseUrl: string; apiKey: string }, tokens: TokenManager, log: Logger) => ApiClient | Promise<ApiClient>;

export interface CloudSessionOptions {
  storage: Storage;
  createClient: ClientFactory;
  log: Logger;
  now: () => number;
  fetch?: typeof fetch;
}

export class CloudSession {
  constructor(private readonly options: CloudSessionOptions) {}

  get storage(): Storage {
    return this.options.storage;
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
    }
  }

  private tokenManager(account: Account): TokenManager {
    const seeds: { refreshToken?: string; accessToken?: string } = {};
    if (account.refreshToken) seeds.refreshToken = account.refreshToken;
    if (account.accessToken) seeds.accessToken = account.accessToken;
    const options: ConstructorParameters<typeof TokenManager>[0] = {
      storage: this.options.storage,
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
