// The extra accounts in the status file: `accounts.<id>` with the account's name, its link and, once
// the delivery watch knows, whether its events arrive; a disabled entry says why. The main account
// keeps the file's own fields.
import { z } from 'zod/v3';

import type { LinkState } from '../cloud/tokens/token-manager.js';

export function accountsStatusSchema() {
  const accountStatusSchema = z.object({
    name: z.string(),
    link: z.object({
      state: z.enum(['notConfigured', 'unlinked', 'linked', 'reauthorizationNeeded', 'checkSettings', 'disabled']),
      message: z.string(),
      since: z.number().optional(),
    }),
    delivery: z.object({ state: z.enum(['unknown', 'arriving', 'notArriving']), since: z.number() }).optional(),
  });
  return z.record(accountStatusSchema);
}

export type AccountsStatus = z.infer<ReturnType<typeof accountsStatusSchema>>;
export type AccountStatus = AccountsStatus[string];

const LINK_WORDS: Record<LinkState, string> = {
  linked: 'Linked.',
  unlinked: 'Not linked: link this account in the plugin settings, or paste a refresh token into its entry.',
  reauthorizationNeeded: 'Re-authorization needed: the service no longer accepts this account\'s stored tokens. Link it again in the plugin settings (or paste a new refresh token into its entry).',
};

/** Where the section is kept: the status file's writer. */
export interface AccountsStatusSink {
  readonly status: { readonly accounts?: AccountsStatus | undefined };
  update(patch: { accounts: AccountsStatus }): void;
}

/** Writes one account's part of the section. */
export class AccountStatusReporter {
  constructor(
    private readonly sink: AccountsStatusSink,
    private readonly id: string,
    private readonly name: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The account's link; `message` overrides the plain words of the state (a setting to fix, tokens not saved). */
  link(state: LinkState, message?: string, problem?: 'settings'): void {
    const shown = problem === 'settings' ? 'checkSettings' : state;
    const previous = this.current()?.link;
    const since = previous?.state === shown && previous.since !== undefined ? previous.since : this.now();
    this.put({ link: { state: shown, message: message ?? LINK_WORDS[state], since } });
  }

  delivery(state: 'unknown' | 'arriving' | 'notArriving'): void {
    const previous = this.current()?.delivery;
    if (previous?.state === state) return;
    this.put({ delivery: { state, since: this.now() } });
  }

  /** An entry that does not run, and why. */
  disabled(reason: string): void {
    this.put({ link: { state: 'disabled', message: reason, since: this.now() } });
  }

  private current(): AccountStatus | undefined {
    return this.sink.status.accounts?.[this.id];
  }

  private put(patch: Partial<AccountStatus>): void {
    const before = this.current() ?? { name: this.name, link: { state: 'unlinked', message: LINK_WORDS.unlinked } };
    this.sink.update({ accounts: { ...this.sink.status.accounts, [this.id]: { ...before, ...patch, name: this.name } } });
  }
}
