// The one unlink, for the plugin (the account-deleted callback) and the settings page alike:
// delete every webhook registration whenever any token can still sign in (after a refused refresh
// the access token usually still works), then forget the tokens behind a tombstone, and name
// whatever could not be deleted or saved. It never rejects: its callers are a callback nobody
// awaits and a page that must show an answer.
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { reasonMessage, reasonOf } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import type { RegistrationStatus, UnlinkOutcome } from './registrations/registration-report.js';

export interface UnlinkTokens {
  /** Could a call authenticate now (an access token, or an unused refresh token)? */
  canAuthenticate(): boolean;
  /** Forgets the tokens in memory at once and writes the tombstone; rejects when the file cannot be written. */
  unlink(): Promise<void>;
}

export interface UnlinkRegistrar {
  unlinkAll(): Promise<UnlinkOutcome>;
  knownRegistrations(): Promise<RegistrationStatus[]>;
  stop(): void;
}

export interface AccountUnlinkResult {
  /** Registrations still held by the service, each with why (they stay in the ledger for the next link). */
  left: RegistrationStatus[];
  /** The ledger could not be read or written: `left` may be incomplete. */
  listError?: string;
  /** Why, as a reason code the settings page words. */
  listErrorCause?: UiMessage;
  /** The tombstone could not be written: after a restart the stored tokens would be used again. */
  tokensNotSaved?: string;
  /** Why, as a reason code the settings page words. */
  tokensNotSavedCause?: UiMessage;
}

/** Why registrations are left when no token can sign in any more. */
export const NO_TOKEN_LEFT = 'no stored token can sign in to the service any more';

export async function unlinkAccount(tokens: UnlinkTokens, registrar: UnlinkRegistrar | undefined, log: Logger): Promise<AccountUnlinkResult> {
  const result: AccountUnlinkResult = { left: [] };
  if (registrar) {
    try {
      if (tokens.canAuthenticate()) {
        const outcome = await registrar.unlinkAll();
        result.left = outcome.left;
        if (outcome.error !== undefined) {
          result.listError = outcome.error;
          result.listErrorCause = outcome.reason ?? reasonMessage('reason.other');
        }
      } else {
        result.left = (await registrar.knownRegistrations()).map((row) => ({ ...row, lastError: NO_TOKEN_LEFT, lastReason: reasonMessage('reason.notLinked') }));
      }
    } catch (error) {
      // unlinkAll and knownRegistrations do not reject; a fake or future one might.
      result.listError = errorText(error);
      result.listErrorCause = reasonOf(error);
      log.warn(`Some webhook registrations could not be deleted (${result.listError}).`);
    }
    registrar.stop();
  }
  try {
    await tokens.unlink();
  } catch (error) {
    result.tokensNotSaved = errorText(error);
    result.tokensNotSavedCause = reasonOf(error);
    log.error(`Lock Access is unlinked for now, but could not save the unlink (${result.tokensNotSaved}): after a restart it would use the stored tokens again. Unlink again in the plugin settings once the disk is writable.`);
  }
  return result;
}
