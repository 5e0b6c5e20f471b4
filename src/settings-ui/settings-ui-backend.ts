// What the settings UI's server (homebridge-ui/server.js) does, typed and testable without the
// Homebridge UI: one method per request of the page. It checks the page's input and hands each job
// to its own file: account-input and account-choice (which account; `accountId` names an entry of
// `accounts`, the main account when absent), oauth-code-flow and account-link (link, test,
// unlink), settings-views (status, events, recordings, devices). Every answer is safe to show in a
// browser: no API key, client secret, token or callback token ever leaves these modules.
import type { VideoEvent } from '../cloud/video.js';
import { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import type { UiMessage } from '../util/ui-message.js';
import { nonEmpty, readSavedPlatform } from './account-input.js';
import { accountIdOf, resolveAccountById, type ChosenAccount } from './account-choice.js';
import { AccountLink, type LinkAnswer, type UnlinkAnswer } from './account-link.js';
import { CloudSession, type ClientFactory } from './cloud-session.js';
import { handOverBeforeUnlink } from './unlink-handover.js';
import type { EventLogEntry } from '../status/event-entry.js';
import { keypadCodes, type KeypadCode } from '../status/keypad-codes.js';
import { AuthorizationCodeFlow } from './oauth-code-flow.js';
import { collectDiagnostics } from './diagnostics-file.js';
import { SettingsViews, type FoundDevices, type UiStatus } from './settings-views.js';
import { TestEvents, type TestEventStart } from './test-event.js';
import type { TestEventVerdict } from './test-event-verdict.js';
import { serverMessage } from './server-messages.js';
import { UiError } from './ui-error.js';

export interface BackendOptions {
  storagePath: string;
  createClient: ClientFactory;
  /** Homebridge's config.json: the saved account settings. */
  configPath: string | undefined;
  log: Logger;
  now?: () => number;
  fetch?: typeof fetch;
}

/**
 * Which account a request is about: `accountId` (an entry of `accounts`, or `main` when absent),
 * `account` the block's unsaved fields, `entry` the entry's own unsaved fields (key, client, name).
 */
export interface AccountRequest {
  account?: unknown;
  accountId?: unknown;
  entry?: unknown;
}

export class SettingsUiBackend {
  private readonly flow: AuthorizationCodeFlow;
  private readonly link: AccountLink;
  private readonly views: SettingsViews;
  private readonly tests: TestEvents;
  private readonly session: CloudSession;
  private readonly now: () => number;

  constructor(private readonly options: BackendOptions) {
    const now = options.now ?? Date.now;
    const session = new CloudSession({ storage: Storage.under(options.storagePath), createClient: options.createClient, log: options.log, now, ...(options.fetch ? { fetch: options.fetch } : {}) });
    this.flow = new AuthorizationCodeFlow(now);
    this.link = new AccountLink(session);
    this.views = new SettingsViews(session, now);
    this.tests = new TestEvents(session, now);
    this.session = session;
    this.now = now;
  }

  /** "Send a test event", step 1: the service is asked for the lock's status. */
  async startTestEvent(input: AccountRequest & { lockId?: unknown }): Promise<TestEventStart> {
    const lockId = nonEmpty(input.lockId);
    if (!lockId) throw new UiError(serverMessage('server.testEvent.chooseLock'));
    const account = await this.account(input);
    return this.tests.start(account, lockId);
  }

  /** Step 2, asked until it is final: what came of it, in one sentence. */
  async testEventResult(input: AccountRequest & { lockId?: unknown; startedAt?: unknown }): Promise<TestEventVerdict> {
    const lockId = nonEmpty(input.lockId);
    const startedAt = typeof input.startedAt === 'number' ? input.startedAt : Number.NaN;
    if (!lockId || !Number.isFinite(startedAt)) throw new UiError(serverMessage('server.testEvent.sendFirst'));
    const account = await this.account(input);
    return this.tests.verdict(account, { lockId, startedAt });
  }

  /** The diagnostics file for a bug report: no key, secret, token, keypad code, e-mail or phone number. */
  async diagnostics(): Promise<Record<string, unknown>> {
    const saved = await readSavedPlatform(this.options.configPath);
    return collectDiagnostics(this.session.storage, Object.keys(saved).length > 0 ? saved : undefined, this.now());
  }

  /** Step 1 of the OAuth authorization-code flow: the address the user opens. */
  async startAuthorization(input: AccountRequest & { redirectUri?: unknown }): Promise<{ url: string }> {
    const account = await this.account(input);
    return this.flow.start(account, input.redirectUri);
  }

  /**
   * Step 2: the user pasted the address the service sent the browser to; its code is exchanged with
   * the client of the account its `state` names, and the tokens go to that account's storage only.
   */
  async finishAuthorization(input: AccountRequest & { redirectUrl?: unknown }): Promise<LinkAnswer> {
    // The account fields first: a missing one is named while the sign-in's one-time state is still
    // unspent, so the same pasted address links once the field is filled in.
    const account = await this.account({ ...input, accountId: this.flow.accountOf(input.redirectUrl) ?? input.accountId });
    const grant = this.flow.redeem(input.redirectUrl);
    if (grant.accountId !== account.id) throw new UiError(serverMessage('server.oauth.otherAccount'));
    return this.link.redeem(account, grant);
  }

  /** Links with a refresh token pasted into the page (spent once, through the shared token store). */
  async linkWithRefreshToken(input: AccountRequest & { refreshToken?: unknown }): Promise<LinkAnswer> {
    const token = nonEmpty(input.refreshToken);
    if (!token) throw new UiError(serverMessage('server.link.pasteToken'));
    const account = await this.account(input);
    return this.link.withRefreshToken(account, token);
  }

  /** GET /users/me through the shared token store: never spends a refresh token the plugin then lacks. */
  async testConnection(input: AccountRequest): Promise<{ ok: boolean; message: UiMessage }> {
    const account = await this.account(input);
    return this.link.test(account);
  }

  /**
   * Hands over the account's shared devices (the next owner registers each first), then deletes
   * every webhook registration of the account, then its tokens.
   */
  async unlink(input: AccountRequest): Promise<UnlinkAnswer> {
    const account = await this.account(input);
    const saved = await readSavedPlatform(this.options.configPath);
    const handed = Array.isArray(saved.accounts) && saved.accounts.length > 0 ? await handOverBeforeUnlink(account.id, this.session.storage, saved, this.session) : [];
    const answer = await this.link.unlink(account);
    const notes = handed.map(({ device, to, error }) => {
      const params = { device: device.slice(device.indexOf(':') + 1), account: to };
      if (error === undefined) return serverMessage('server.unlink.handedOver', params);
      this.session.log.warn(serverMessage('server.unlink.handoverFailed', { ...params, reason: error.text }).text);
      return serverMessage('server.unlink.handoverFailed', { ...params, reason: error.reason });
    });
    return { ...answer, notes: [...notes, ...answer.notes] };
  }

  /** Link state from the token files (no network) of the main account and of the extra accounts the page names, and the plugin's snapshot. */
  status(input: { accountIds?: unknown } = {}): Promise<UiStatus> {
    return this.views.status(input.accountIds);
  }

  events(): Promise<EventLogEntry[]> {
    return this.views.events();
  }

  /** Each lock's keypad codes known from the PIN-managed callbacks: whose, state, schedule (never a code). */
  async keypadCodes(): Promise<KeypadCode[]> {
    return keypadCodes(await this.views.events());
  }

  /** The recording's playlist address for the page's player. */
  async video(input: AccountRequest & { doorbellId?: unknown; dvrId?: unknown }): Promise<VideoEvent> {
    const doorbellId = nonEmpty(input.doorbellId);
    const dvrId = nonEmpty(input.dvrId);
    if (!doorbellId || !dvrId) throw new UiError(serverMessage('server.video.noRecording'));
    const account = await this.account(input);
    return this.views.video(account, doorbellId, dvrId);
  }

  /** Asks the service for the account's locks and doorbells. */
  async discover(input: AccountRequest): Promise<FoundDevices> {
    const account = await this.account(input);
    return this.views.discover(account);
  }

  /**
   * When the Homebridge UI ends this process: resolves at once, unless a link's new tokens are not
   * saved yet. They exist only in this process, so it stays and keeps retrying the write until
   * they are saved (or a newer link or an unlink replaced them on disk), then resolves.
   */
  async safeToExit(): Promise<void> {
    if (!this.session.holdsUnsavedTokens()) return;
    this.options.log.warn('Lock Access: the settings page was closed while the tokens of a new link are not saved yet; this process keeps running and retrying the save, and ends once they are saved.');
    // The save retries run on timers that do not hold the process open on their own.
    const keepOpen = setInterval(() => undefined, 60_000);
    try {
      await this.session.tokensSaved();
    } finally {
      clearInterval(keepOpen);
    }
  }

  /** The account the request names; unsaved edits from the page win over the saved config; what is still missing is named. */
  private async account(input: AccountRequest): Promise<ChosenAccount> {
    return resolveAccountById(accountIdOf(input.accountId), input.account, input.entry, await readSavedPlatform(this.options.configPath));
  }
}
