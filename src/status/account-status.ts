// The extra accounts in the status file: `accounts.<id>` with the account's name, its link and, once
// its delivery watch knows, whether its events arrive (the same entry as the main account's
// `delivery`); a disabled entry says why, and so does one that waits to be compared with the earlier
// accounts' users (linked, with nothing set up yet). Messages are codes, like the rest of the file.
// The main account keeps the file's own fields.
import { z } from 'zod/v3';

import { linkStatusMessage, messageOfSentence } from '../cloud/link-messages.js';
import type { LinkState, TokenProblem } from '../cloud/tokens/token-manager.js';
import { messageCatalog, uiMessageSchema, type UiMessage } from '../util/ui-message.js';
import { deliveryStatusSchema, type DeliveryEntry } from './delivery-shape.js';

export function accountsStatusSchema() {
  const accountStatusSchema = z.object({
    name: z.string(),
    link: z.object({
      state: z.enum(['notConfigured', 'unlinked', 'linked', 'reauthorizationNeeded', 'checkSettings', 'disabled', 'waiting']),
      message: uiMessageSchema(),
      since: z.number().optional(),
    }),
    delivery: deliveryStatusSchema().optional(),
  });
  return z.record(accountStatusSchema);
}

export type AccountsStatus = z.infer<ReturnType<typeof accountsStatusSchema>>;
export type AccountStatus = AccountsStatus[string];

export const ACCOUNT_STATUS_MESSAGES = {
  'accounts.link.linked': 'Linked.',
  'accounts.link.unlinked': 'Not linked: link this account in the plugin settings, or paste a refresh token into its entry.',
  'accounts.link.reauthorizationNeeded': 'Re-authorization needed: the service no longer accepts this account\'s stored tokens. Link it again in the plugin settings (or paste a new refresh token into its entry).',
  'accounts.link.waiting': 'Linked, but nothing is set up yet: its Lock Access user could not be compared with the earlier accounts\' users (GET /users/me did not answer), and an entry of the same user would take over their registrations. The comparison is made again in {minutes} min.',
  'accounts.disabled.sameAsMain': 'It is the same Lock Access user as the main account (GET /users/me answers the same user), so it is disabled and registers nothing: registering it would take over the registrations of the main account. Remove this entry, or link it to another Lock Access account.',
  'accounts.disabled.sameAsAccount': 'It is the same Lock Access user as account {name} ({id}) (GET /users/me answers the same user), so it is disabled and registers nothing: registering it would take over the registrations of account {name}. Remove this entry, or link it to another Lock Access account.',
} as const;

export const accountStatusMessage = messageCatalog(ACCOUNT_STATUS_MESSAGES);

/** An account's link sentence as an earlier version wrote it, as its message (see status-upgrade.ts). */
export function accountLinkOfSentence(sentence: string): UiMessage {
  for (const [code, text] of Object.entries(ACCOUNT_STATUS_MESSAGES)) {
    if (text === sentence) return accountStatusMessage(code as keyof typeof ACCOUNT_STATUS_MESSAGES);
  }
  return messageOfSentence(sentence);
}

/** Where the section is kept: the status file's writer. */
export interface AccountsStatusSink {
  readonly status: { readonly accounts?: AccountsStatus | undefined };
  update(patch: { accounts: AccountsStatus }): void;
}

/** Writes one account's part of the section. */
export class AccountStatusReporter {
  /** Why the account waits for its user comparison, while it does. */
  private waitReason: UiMessage | undefined;
  /** Disabled in this run: its tokens may still change, but its entry keeps saying why it does not run. */
  private isDisabled = false;

  constructor(
    private readonly sink: AccountsStatusSink,
    private readonly id: string,
    private readonly name: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The account's link; a problem (a setting to fix, tokens not saved) or the token manager's own
   * sentence overrides the words of the state. Linked with no problem while it waits for its user
   * comparison, it shows that it waits.
   */
  link(state: LinkState, sentence?: string, problem?: TokenProblem, setting?: string): void {
    if (this.isDisabled) return;
    if (state === 'linked' && problem === undefined && this.waitReason !== undefined) {
      this.put({ link: { state: 'waiting', message: this.waitReason, since: this.since('waiting') } });
      return;
    }
    const shown = problem === 'settings' ? 'checkSettings' : state;
    const message = linkStatusMessage(problem, sentence, setting) ?? accountStatusMessage(`accounts.link.${state}`);
    this.put({ link: { state: shown, message, since: this.since(shown) } });
  }

  /** Why the account now waits for its user comparison (shown at the next link), or undefined once it runs. */
  waitFor(reason: UiMessage | undefined): void {
    this.waitReason = reason;
  }

  /** What the account's delivery watch publishes, as the main account's `delivery` entry. */
  delivery(entry: DeliveryEntry): void {
    this.put({ delivery: entry });
  }

  /** An entry that does not run, and why. */
  disabled(reason: UiMessage): void {
    this.isDisabled = true;
    this.waitReason = undefined;
    this.put({ link: { state: 'disabled', message: reason, since: this.now() } });
  }

  /** When the link came to `state`: kept while it stays there. */
  private since(state: AccountStatus['link']['state']): number {
    const previous = this.current()?.link;
    return previous?.state === state && previous.since !== undefined ? previous.since : this.now();
  }

  private current(): AccountStatus | undefined {
    return this.sink.status.accounts?.[this.id];
  }

  private put(patch: Partial<AccountStatus>): void {
    const before = this.current() ?? { name: this.name, link: { state: 'unlinked', message: accountStatusMessage('accounts.link.unlinked') } };
    this.sink.update({ accounts: { ...this.sink.status.accounts, [this.id]: { ...before, ...patch, name: this.name } } });
  }
}
