// Linking the account from the settings page and undoing it, through the token file the plugin
// shares: redeem an authorization code, spend a pasted refresh token once, test the link without
// spending anything, and unlink (webhook registrations first, then the tokens).
import { WebhookRegistrar } from '../cloud/registrations.js';
import { WebhookSecret } from '../cloud/webhook-secret.js';
import { errorText } from '../util/error-text.js';
import type { Account } from './account-input.js';
import type { CloudSession } from './cloud-session.js';
import type { AuthorizationGrant } from './oauth-code-flow.js';
import { UiError } from './ui-error.js';

export interface LinkAnswer {
  linked: true;
  message: string;
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

  /** Deletes every webhook registration, then the tokens. */
  async unlink(account: Account): Promise<{ message: string }> {
    let registrationsNote = '';
    await this.session.withTokens(account, async (tokens) => {
      if (tokens.state === 'linked' && account.publicUrl) {
        const registrar = new WebhookRegistrar({
          client: await this.session.client(account, tokens),
          storage: this.session.storage,
          clientId: account.clientId,
          publicUrl: account.publicUrl,
          secret: await WebhookSecret.load(this.session.storage),
          log: this.session.log,
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
}
