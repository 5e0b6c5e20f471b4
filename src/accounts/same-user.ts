// Whether an extra account is another Lock Access user than every earlier linked account: the same
// user entered twice would take over the earlier account's registrations (the service keeps them
// per user), so the later entry is disabled before it registers anything. Asked once it is linked.
import { AccountUser } from '../cloud/account-user.js';
import { accountStatusMessage } from '../status/account-status.js';
import type { UiMessage } from '../util/ui-message.js';
import type { AccountUnit } from './account-unit.js';

export class DistinctUsers {
  private readonly users = new Map<string, AccountUser>();
  private readonly verdicts = new Map<string, boolean>();

  /** `all`: every account in config order; `linked`: whether one is linked now. */
  constructor(private readonly all: readonly AccountUnit[], private readonly linked: (account: string) => boolean) {}

  /**
   * False once `unit` is found to be an earlier account's user (`disable` has then been told why).
   * While a user it needs is unknown (no answer yet, or an earlier account not linked) the run may go
   * on, and the next run asks again: only a verdict from every earlier account's answer is kept.
   */
  async check(unit: AccountUnit, disable: (reason: UiMessage) => void): Promise<boolean> {
    const known = this.verdicts.get(unit.account.id);
    if (known !== undefined) return known;
    const own = await this.user(unit).id();
    if (own === undefined) return true;
    let complete = true;
    for (const earlier of this.all.slice(0, this.all.indexOf(unit))) {
      // Not linked now: nothing to compare with, and once it links, the next run compares.
      if (!this.linked(earlier.account.id)) {
        complete = false;
        continue;
      }
      const theirs = await this.user(earlier).id();
      if (theirs === undefined) complete = false;
      if (theirs !== own) continue;
      disable(earlier.account.main ? accountStatusMessage('accounts.disabled.sameAsMain') : accountStatusMessage('accounts.disabled.sameAsAccount', { name: earlier.account.name, id: earlier.account.id }));
      this.verdicts.set(unit.account.id, false);
      return false;
    }
    if (complete) this.verdicts.set(unit.account.id, true);
    return true;
  }

  /** Whether `unit` has no kept verdict yet (a later run compares again). */
  undecided(unit: AccountUnit): boolean {
    return !this.verdicts.has(unit.account.id);
  }

  private user(unit: AccountUnit): AccountUser {
    let user = this.users.get(unit.account.id);
    if (user === undefined) {
      user = new AccountUser(unit.client);
      this.users.set(unit.account.id, user);
    }
    return user;
  }
}
