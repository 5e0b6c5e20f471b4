// Linking the account from the settings page and undoing it, through the token file the plugin
// shares: redeem an authorization code, spend a pasted refresh token once, test the link without
// spending anything, and unlink (webhook registrations first, then the tokens).
import { WebhookRegistrar, type RegistrationStatus } from '../cloud/registrations/registrations.js';
import { describeScope } from '../cloud/registrations/registration-requests.js';
import { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import { errorText } from '../util/error-text.js';
import type { Account } from './account-input.js';
import type { CloudSession } from './cloud-session.js';
import type { AuthorizationGrant } from './oauth-code-flow.js';
import { UiError } from './ui-error.js';

export interface LinkAnswer {
  linked: true;
  message: string;
}

/** A registration unlink could not delete, in words the page shows. */
export interface LeftRegistration {
  kind: RegistrationStatus['kind'];
  id: string;
  /** e.g. "lock LOCK-1", "the user registration". */
  scope: string;
  error: string;
}

export interface UnlinkAnswer {
  message: string;
  left: LeftRegistration[];
}

export class AccountLink {
  constructor(private readonly session: CloudSession) {}

  /** Step 3 of the code flow: the code becomes the tokens of the shared token file. */
  async redeem(account: Account, grant: AuthorizationGrant): Promise<LinkAnswer> {
    await this.session.withTokens(account, async (tokens) => {
      try {
        await tokens.exchangeAuthorizationCode({ code: grant.code, redirectUri: grant.redirectUri });
      } catch (error) {
        throw new UiError(`Linking failed: ${errorText(error)}`);
      }
    });
    return { linked: true, message: 'Linked. The plugin uses this link from now on; restart Homebridge if it was waiting for one.' };
  }

  /** Links with a refresh token pasted into the page (spent once, through the shared token store). */
  async withRefreshToken(account: Account, token: string): Promise<LinkAnswer> {
    await this.session.withTokens(account, async (tokens) => {
      try {
        await tokens.linkWithRefreshToken(token);
      } catch (error) {
        throw new UiError(`Linking failed: ${errorText(error)}`);
      }
      if (tokens.state !== 'linked') throw new UiError(`Linking failed: ${tokens.status().message ?? 'the service did not accept the refresh token'}`);
    });
    return { linked: true, message: 'Linked with the refresh token. Do not keep a copy of it: it has been used and replaced.' };
  }

  /** GET /users/me through the shared token store: never spends a refresh token the plugin then lacks. */
  test(account: Account): Promise<{ ok: boolean; message: string }> {
    return this.session.withTokens(account, (tokens) => tokens.testConnection());
  }

  /**
   * Deletes every webhook registration whenever any token can still authenticate (design 5; after
   * a refused refresh the access token usually still works), then forgets the tokens. The answer
   * names each registration left behind, which stays in the ledger for the next link.
   */
  async unlink(account: Account): Promise<UnlinkAnswer> {
    let left: LeftRegistration[] = [];
    let note = '';
    await this.session.withTokens(account, async (tokens) => {
      const registrar = new WebhookRegistrar({
        client: await this.session.client(account, tokens),
        storage: this.session.storage,
        clientId: account.clientId,
        publicUrl: account.publicUrl ?? '',
        secret: await WebhookSecret.load(this.session.storage),
        log: this.session.log,
      });
      if (tokens.canAuthenticate()) {
        const outcome = await registrar.unlinkAll();
        left = outcome.left.map(leftRow);
        if (outcome.error !== undefined) note = ` The list of webhooks could not be updated (${outcome.error}).`;
      } else {
        left = (await registrar.knownRegistrations()).map((row) => ({ ...leftRow(row), error: 'no stored token can sign in to the service any more' }));
      }
      registrar.stop();
      try {
        await tokens.unlink();
      } catch (error) {
        throw new UiError(`Unlinking failed: the token file could not be written (${errorText(error)}). Nothing was forgotten; try again.`);
      }
    });
    if (left.length > 0) {
      note += ` ${left.length} webhook registration(s) could not be deleted: ${left.map((row) => `${row.scope} (${row.error})`).join('; ')}. They are deleted after the next link; until then the service may keep sending to them.`;
    }
    return { message: `Unlinked: the stored tokens were deleted.${note}`, left };
  }
}

function leftRow(row: RegistrationStatus): LeftRegistration {
  return { kind: row.kind, id: row.id, scope: describeScope(row.kind, row.id), error: row.lastError ?? 'not deleted' };
}
