// What the settings UI's server (homebridge-ui/server.js) does, typed and testable without the
// Homebridge UI: link the account (OAuth authorization code or a pasted refresh token), test the
// connection, unlink, and read the status and event log the plugin writes. Every answer is safe to
// show in a browser: no API key, client secret, token or callback token ever leaves this module.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { kill } from 'node:process';

import { z } from 'zod';

import type { ApiClient } from '../cloud/api.js';
import { discoverDevices } from '../cloud/discovery.js';
import { CloudError } from '../cloud/errors.js';
import { WebhookRegistrar } from '../cloud/registrations.js';
import { TokenManager, type LinkState } from '../cloud/token-manager.js';
import { TokenStore } from '../cloud/token-store.js';
import { lookupVideo } from '../cloud/video.js';
import { WebhookSecret } from '../cloud/webhook-secret.js';
import { readEventLog, type EventLogEntry } from './event-log.js';
import { PLATFORM_NAME } from '../settings.js';
import { readStatus, type Status } from './status.js';
import { Storage } from '../storage.js';

/** A message meant for the user of the settings page. */
export class UiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UiError';
  }
}

export interface UiLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

/** The account fields a request may carry (unsaved edits); blanks fall back to the saved config. */
export const accountInputSchema = z
  .object({
    apiKey: z.string(),
    clientId: z.string(),
    clientSecret: z.string(),
    baseUrl: z.string(),
    authUrl: z.string(),
    publicUrl: z.string(),
    refreshToken: z.string(),
    accessToken: z.string(),
  })
  .partial();
export type AccountInput = z.infer<typeof accountInputSchema>;

interface Account {
  apiKey: string;
  clientId: string;
  clientSecret: string;
  baseUrl: string;
  authUrl: string;
  publicUrl?: string;
  refreshToken?: string;
  accessToken?: string;
}

const REQUIRED: readonly (keyof Account)[] = ['apiKey', 'clientId', 'clientSecret', 'baseUrl', 'authUrl'];
const FIELD_WORDS: Record<string, string> = {
  apiKey: 'API key',
  clientId: 'client id',
  clientSecret: 'client secret',
  baseUrl: 'API address (baseUrl)',
  authUrl: 'authorization address (authUrl)',
};

/** How long a started authorization may take before its `state` is forgotten. */
export const AUTHORIZATION_TTL_MS = 15 * 60 * 1000;
/** The plugin rewrites status.json at least this often while it runs; older means "not running". */
export const STATUS_STALE_MS = 10 * 60 * 1000;

export interface UiLinkStatus {
  state: LinkState;
  message: string;
}

export interface UiStatus {
  link: UiLinkStatus;
  /** The plugin's own snapshot; undefined until the plugin has run once. */
  plugin: Status | undefined;
  /** Whether the process that wrote the snapshot still runs. */
  pluginRunning: boolean;
}

/** Builds the API client (src/cloud/http-client.ts in production) on a token manager. */
export type ClientFactory = (account: { baseUrl: string; apiKey: string }, tokens: TokenManager, log: UiLog) => ApiClient | Promise<ApiClient>;

export interface BackendOptions {
  storagePath: string;
  createClient: ClientFactory;
  /** Homebridge's config.json: the saved account settings. */
  configPath: string | undefined;
  log: UiLog;
  now?: () => number;
  fetch?: typeof fetch;
}

function describe(error: unknown): string {
  if (error instanceof UiError || error instanceof CloudError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Reads the code (or the refusal) out of what the user pasted: the whole address, or just its query. */
export function parseRedirect(pasted: string): { code?: string; state?: string; error?: string; errorDescription?: string; base?: string } {
  const text = pasted.trim();
  let params: URLSearchParams;
  let base: string | undefined;
  try {
    const url = new URL(text);
    params = url.searchParams;
    base = `${url.origin}${url.pathname}`;
  } catch {
    params = new URLSearchParams(text.startsWith('?') ? text.slice(1) : text);
  }
  const pick = (name: string) => nonEmpty(params.get(name));
  const result: { code?: string; state?: string; error?: string; errorDescription?: string; base?: string } = {};
  const code = pick('code');
  const state = pick('state');
  const error = pick('error');
  const errorDescription = pick('error_description');
  if (code) result.code = code;
  if (state) result.state = state;
  if (error) result.error = error;
  if (errorDescription) result.errorDescription = errorDescription;
  if (base) result.base = base;
  return result;
}

function sameRedirectBase(a: string, b: string): boolean {
  try {
    const left = new URL(a);
    const right = new URL(b);
    return left.origin === right.origin && left.pathname.replace(/\/+$/, '') === right.pathname.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

export class SettingsUiBackend {
  private readonly storage: Storage;
  private readonly now: () => number;
  /** state -> redirect URI and start time; kept only in this process, used once. */
  private readonly pendingAuthorizations = new Map<string, { redirectUri: string; startedAt: number }>();

  constructor(private readonly options: BackendOptions) {
    this.storage = Storage.under(options.storagePath);
    this.now = options.now ?? Date.now;
  }

  // ------------------------------------------------------------------ account

  /** The saved platform block of config.json (or an empty object). */
  async savedConfig(): Promise<Record<string, unknown>> {
    if (!this.options.configPath) return {};
    try {
      const raw = JSON.parse(await readFile(this.options.configPath, 'utf8')) as { platforms?: unknown };
      const platforms = Array.isArray(raw.platforms) ? (raw.platforms as unknown[]) : [];
      const block = platforms.find((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && (p as { platform?: unknown }).platform === PLATFORM_NAME);
      return block ?? {};
    } catch {
      return {};
    }
  }

  /** Unsaved edits from the page win over the saved config; what is still missing is named. */
  async account(input: unknown): Promise<Account> {
    const parsed = accountInputSchema.safeParse(input ?? {});
    const edits: AccountInput = parsed.success ? parsed.data : {};
    const saved = await this.savedConfig();
    const savedWebhook = (typeof saved.webhook === 'object' && saved.webhook !== null ? saved.webhook : {}) as Record<string, unknown>;
    const pick = (key: keyof AccountInput): string | undefined =>
      nonEmpty(edits[key]) ?? nonEmpty(key === 'publicUrl' ? savedWebhook.publicUrl : saved[key]);
    const missing = REQUIRED.filter((key) => pick(key) === undefined);
    if (missing.length > 0) {
      throw new UiError(`Enter the ${missing.map((key) => FIELD_WORDS[key] ?? key).join(', ')} first.`);
    }
    for (const key of ['baseUrl', 'authUrl'] as const) {
      const value = pick(key) ?? '';
      if (!/^https?:\/\//i.test(value)) throw new UiError(`The ${FIELD_WORDS[key] ?? key} must be a full address starting with https://`);
    }
    const account: Account = {
      apiKey: pick('apiKey') ?? '',
      clientId: pick('clientId') ?? '',
      clientSecret: pick('clientSecret') ?? '',
      baseUrl: (pick('baseUrl') ?? '').replace(/\/+$/, ''),
      authUrl: (pick('authUrl') ?? '').replace(/\/+$/, ''),
    };
    const publicUrl = pick('publicUrl');
    if (publicUrl) account.publicUrl = publicUrl;
    // Seeds come from the saved config only: the plugin sees the same ones, so neither process re-links with a used seed.
    const refreshToken = nonEmpty(saved.refreshToken);
    const accessToken = nonEmpty(saved.accessToken);
    if (refreshToken) account.refreshToken = refreshToken;
    if (accessToken) account.accessToken = accessToken;
    return account;
  }

  private tokenManager(account: Account): TokenManager {
    const seeds: { refreshToken?: string; accessToken?: string } = {};
    if (account.refreshToken) seeds.refreshToken = account.refreshToken;
    if (account.accessToken) seeds.accessToken = account.accessToken;
    const options: ConstructorParameters<typeof TokenManager>[0] = {
      storage: this.storage,
      authUrl: account.authUrl,
      baseUrl: account.baseUrl,
      apiKey: account.apiKey,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      seeds,
      log: this.options.log,
      now: this.now,
    };
    if (this.options.fetch) options.fetch = this.options.fetch;
    return new TokenManager(options);
  }

  private client(account: Account, tokens: TokenManager): Promise<ApiClient> {
    return Promise.resolve(this.options.createClient({ baseUrl: account.baseUrl, apiKey: account.apiKey }, tokens, this.options.log));
  }

  /**
   * Runs `fn` with a token manager that has read the shared token file. It is stopped afterwards,
   * so the UI server keeps no timers: the plugin owns keep-alive and renewal.
   */
  private async withTokens<T>(account: Account, fn: (tokens: TokenManager) => Promise<T>): Promise<T> {
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

  /** Step 1 of the OAuth authorization-code flow (RFC 6749 4.1.1): the address the user opens. */
  async startAuthorization(input: { account?: unknown; redirectUri?: unknown }): Promise<{ url: string }> {
    const account = await this.account(input.account);
    const redirectUri = nonEmpty(input.redirectUri);
    if (!redirectUri || !/^https?:\/\/[^/]/i.test(redirectUri)) {
      throw new UiError('Enter the redirect address registered for your client id (a full https:// address).');
    }
    this.forgetExpired();
    const state = randomBytes(32).toString('base64url');
    this.pendingAuthorizations.set(state, { redirectUri, startedAt: this.now() });
    const url = new URL(`${account.authUrl}/authorization`);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', account.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('state', state);
    return { url: url.toString() };
  }

  /** Step 2: the user pasted the address the service sent the browser to; exchange its code. */
  async finishAuthorization(input: { account?: unknown; redirectUrl?: unknown }): Promise<{ linked: true; message: string }> {
    const pasted = nonEmpty(input.redirectUrl);
    if (!pasted) throw new UiError('Paste the whole address your browser showed after you allowed access.');
    const answer = parseRedirect(pasted);
    this.forgetExpired();
    const pending = answer.state === undefined ? undefined : this.pendingAuthorizations.get(answer.state);
    if (!answer.state || !pending) {
      throw new UiError('That address does not answer the sign-in started here (its state does not match, or it is older than 15 minutes). Click "Sign in to Lock Access" again and paste the new address.');
    }
    // One use only, whatever happens next.
    this.pendingAuthorizations.delete(answer.state);
    if (answer.error) {
      throw new UiError(
        answer.error === 'access_denied'
          ? 'Access was not allowed on the Lock Access page. Start again and choose Allow.'
          : `The Lock Access sign-in answered "${answer.error}"${answer.errorDescription ? ` (${answer.errorDescription})` : ''}. Start again.`,
      );
    }
    if (!answer.code) throw new UiError('The pasted address has no code in it: copy the whole address from the browser\'s address bar.');
    if (answer.base && !sameRedirectBase(answer.base, pending.redirectUri)) {
      throw new UiError('The pasted address is not the redirect address this sign-in used. Copy it from the tab that opened after you allowed access.');
    }
    const account = await this.account(input.account);
    const code = answer.code;
    await this.withTokens(account, async (tokens) => {
      try {
        await tokens.exchangeAuthorizationCode({ code, redirectUri: pending.redirectUri });
      } catch (error) {
        throw new UiError(`Linking failed: ${describe(error)}`);
      }
    });
    return { linked: true, message: 'Linked. The plugin uses this link from now on; restart Homebridge if it was waiting for one.' };
  }

  /** Links with a refresh token pasted into the page (spent once, through the shared token store). */
  async linkWithRefreshToken(input: { account?: unknown; refreshToken?: unknown }): Promise<{ linked: true; message: string }> {
    const token = nonEmpty(input.refreshToken);
    if (!token) throw new UiError('Paste a refresh token first.');
    const account = await this.account(input.account);
    await this.withTokens(account, async (tokens) => {
      try {
        await tokens.linkWithRefreshToken(token);
      } catch (error) {
        throw new UiError(`Linking failed: ${describe(error)}`);
      }
      if (tokens.state !== 'linked') throw new UiError(`Linking failed: ${tokens.status().message ?? 'the service did not accept the refresh token'}`);
    });
    return { linked: true, message: 'Linked with the refresh token. Do not keep a copy of it: it has been used and replaced.' };
  }

  /** GET /users/me through the shared token store: never spends a refresh token the plugin then lacks. */
  async testConnection(input: { account?: unknown }): Promise<{ ok: boolean; message: string }> {
    const account = await this.account(input.account);
    return this.withTokens(account, (tokens) => tokens.testConnection());
  }

  /** Deletes every webhook registration, then the tokens. */
  async unlink(input: { account?: unknown }): Promise<{ message: string }> {
    const account = await this.account(input.account);
    let registrationsNote = '';
    await this.withTokens(account, async (tokens) => {
      if (tokens.state === 'linked' && account.publicUrl) {
        const registrar = new WebhookRegistrar({
          client: await this.client(account, tokens),
          storage: this.storage,
          clientId: account.clientId,
          publicUrl: account.publicUrl,
          secret: await WebhookSecret.load(this.storage),
          log: this.options.log,
        });
        await registrar.unlinkAll();
        const left = registrar.status();
        if (left.length > 0) registrationsNote = ` ${left.length} webhook registration(s) could not be deleted now; they are deleted on the next link.`;
      } else if (tokens.state !== 'linked') {
        registrationsNote = ' The webhooks could not be deleted because the account link no longer works; the service stops them when the account is removed there.';
      }
      await tokens.unlink();
    });
    return { message: `Unlinked: the stored tokens were deleted.${registrationsNote}` };
  }

  // ------------------------------------------------------------------ status, events, media

  /** Link state from the token file (no network), and the plugin's snapshot. */
  async status(): Promise<UiStatus> {
    let link: UiLinkStatus;
    try {
      const record = await new TokenStore(this.storage).read();
      link = record
        ? { state: record.state, message: record.message ?? (record.state === 'linked' ? 'Linked.' : 'Link the account again.') }
        : { state: 'unlinked', message: 'Not linked yet: link your Lock Access account below.' };
    } catch (error) {
      link = { state: 'reauthorizationNeeded', message: `The stored tokens cannot be read (${describe(error)}). Link the account again.` };
    }
    const plugin = await readStatus(this.storage);
    return { link, plugin, pluginRunning: plugin !== undefined && this.isRunning(plugin) };
  }

  events(): Promise<EventLogEntry[]> {
    return readEventLog(this.storage);
  }

  /** The recording's playlist address for the page's player. */
  async video(input: { account?: unknown; doorbellId?: unknown; dvrId?: unknown }): Promise<{ url: string }> {
    const doorbellId = nonEmpty(input.doorbellId);
    const dvrId = nonEmpty(input.dvrId);
    if (!doorbellId || !dvrId) throw new UiError('This event has no recording.');
    const account = await this.account(input.account);
    return this.withTokens(account, async (tokens) => {
      try {
        return await lookupVideo(await this.client(account, tokens), doorbellId, dvrId);
      } catch (error) {
        throw new UiError(`The recording could not be found: ${describe(error)}`);
      }
    });
  }

  /** Asks the service for the account's locks and doorbells. */
  async discover(input: { account?: unknown }): Promise<{ locks: { id: string; name?: string }[]; doorbells: { id: string; name?: string }[] }> {
    const account = await this.account(input.account);
    return this.withTokens(account, async (tokens) => {
      try {
        const found = await discoverDevices(await this.client(account, tokens));
        const plain = (list: { id: string; name: string | undefined }[]) => list.map((d) => (d.name === undefined ? { id: d.id } : { id: d.id, name: d.name }));
        return { locks: plain(found.locks), doorbells: plain(found.doorbells) };
      } catch (error) {
        throw new UiError(`Could not list your devices: ${describe(error)}`);
      }
    });
  }

  private isRunning(status: Status): boolean {
    if (this.now() - status.updatedAt > STATUS_STALE_MS && status.pid === undefined) return false;
    if (status.pid === undefined) return true;
    try {
      kill(status.pid, 0);
      return true;
    } catch (error) {
      // EPERM: it exists but belongs to someone else.
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [state, pending] of this.pendingAuthorizations) {
      if (now - pending.startedAt > AUTHORIZATION_TTL_MS) this.pendingAuthorizations.delete(state);
    }
  }
}
