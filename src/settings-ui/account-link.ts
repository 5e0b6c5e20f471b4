// Linking the account from the settings page and undoing it, through the token file the plugin
// shares: redeem an authorization code, spend a pasted refresh token once, test the link without
// spending anything, and unlink (webhook registrations first, then the tokens).
import { unlinkAccount } from '../cloud/account-unlink.js';
import { WebhookRegistrar, type RegistrationStatus } from '../cloud/registrations/registrations.js';
import { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import type { Account } from './account-input.js';
import { MAIN_ACCOUNT_ID } from '../config/fields.js';
import { accountPublicUrl } from './account-choice.js';
import { failureMessage } from './failure-message.js';
import { messageOfSentence } from '../cloud/link-messages.js';
import type { CloudSession } from './cloud-session.js';
import type { AuthorizationGrant } from './oauth-code-flow.js';
import type { TokenManager } from '../cloud/tokens/token-manager.js';
import { reasonMessage } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { serverMessage } from './server-messages.js';
import { UiError } from './ui-error.js';

export interface LinkAnswer {
  linked: true;
  message: UiMessage;
}

/** A registration unlink could not delete: the page words its kind and id, and why as a reason code. */
export interface LeftRegistration {
  kind: RegistrationStatus['kind'];
  id: string;
  reason: UiMessage;
}

export interface UnlinkAnswer {
  /** The outcome; `notes` add what was left behind, each its own message. */
  message: UiMessage;
  notes: UiMessage[];
  left: LeftRegistration[];
  /** False when the tombstone could not be written (the message says what to do). */
  saved: boolean;
}

export class AccountLink {
  constructor(private readonly session: CloudSession) {}

  /** Step 3 of the code flow: the code becomes the tokens of the shared token file. */
  async redeem(account: Account, grant: AuthorizationGrant): Promise<LinkAnswer> {
    await this.session.withTokens(account, async (tokens) => {
      try {
        await tokens.exchangeAuthorizationCode({ code: grant.code, redirectUri: grant.redirectUri });
      } catch (error) {
        throw new UiError(failureMessage(this.session.log, 'server.link.failed', error));
      }
      refuseUnsaved(tokens);
    });
    return { linked: true, message: serverMessage('server.link.linked') };
  }

  /** Links with a refresh token pasted into the page (spent once, through the shared token store). */
  async withRefreshToken(account: Account, token: string): Promise<LinkAnswer> {
    await this.session.withTokens(account, async (tokens) => {
      try {
        await tokens.linkWithRefreshToken(token);
      } catch (error) {
        throw new UiError(failureMessage(this.session.log, 'server.link.failed', error));
      }
      refuseUnsaved(tokens);
      if (tokens.state !== 'linked') {
        const why = tokens.status().message;
        // The token status's sentence as its code, so the page words it (any other sentence shows as it is).
        throw new UiError(why === undefined ? serverMessage('server.link.tokenRefused') : serverMessage('server.link.failed', { reason: messageOfSentence(why) }));
      }
    });
    return { linked: true, message: serverMessage('server.link.linkedWithToken') };
  }

  /** GET /users/me through the shared token store: never spends a refresh token the plugin then lacks. */
  test(account: Account): Promise<{ ok: boolean; message: UiMessage }> {
    return this.session.withTokens(account, (tokens) => tokens.testConnection());
  }

  /**
   * The plugin's own unlink (one implementation for both): every webhook registration deleted
   * whenever any token can still sign in, then the tokens forgotten behind a tombstone. Never
   * fails: the answer names each registration left behind (kept in the ledger for the next link)
   * and says so when the unlink could not be saved.
   */
  async unlink(account: Account): Promise<UnlinkAnswer> {
    const result = await this.session.withTokens(account, async (tokens) => {
      // Deleting registrations needs no token: a file that cannot be read is not read again here.
      const storage = this.session.storageOf(account);
      const secret = await WebhookSecret.load(storage);
      secret.stop();
      const registrar = new WebhookRegistrar({
        client: await this.session.client(account, tokens),
        storage,
        clientId: account.clientId,
        publicUrl: () => accountPublicUrl(account.publicUrl, account.id ?? MAIN_ACCOUNT_ID) ?? '',
        secret,
        log: this.session.log,
      });
      return unlinkAccount(tokens, registrar, this.session.log);
    });
    const left = result.left.map(leftRow);
    const notes: UiMessage[] = [];
    if (result.listError !== undefined) notes.push(serverMessage('server.unlink.listNotUpdated', { reason: result.listErrorCause ?? reasonMessage('reason.other') }));
    if (left.length > 0) {
      // Ids, words of no language (the account's own registration by its route, /user): the page
      // lists each registration below in its words, with its reason.
      notes.push(serverMessage('server.unlink.left', { count: left.length, registrations: left.map((row) => (row.kind === 'user' ? 'user' : row.id)).join(', ') }));
    }
    if (result.tokensNotSaved !== undefined) {
      return { message: serverMessage('server.unlink.notSaved', { reason: result.tokensNotSavedCause ?? reasonMessage('reason.other') }), notes, left, saved: false };
    }
    return { message: serverMessage('server.unlink.done'), notes, left, saved: true };
  }
}

/**
 * New tokens that could not be written are no link yet: the page must not say "Linked". The
 * session holds them and keeps retrying the write, also after the page is closed.
 */
function refuseUnsaved(tokens: TokenManager): void {
  const status = tokens.status();
  if (status.problem !== 'notSaved') return;
  throw new UiError(serverMessage('server.link.notSaved', { reason: status.notSavedCause ?? reasonMessage('reason.other') }));
}

function leftRow(row: RegistrationStatus): LeftRegistration {
  return { kind: row.kind, id: row.id, reason: row.lastReason ?? reasonMessage('reason.other') };
}
