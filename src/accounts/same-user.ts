// Whether an extra account is another Lock Access user than every earlier linked account: the same
// user entered twice would take over the earlier account's registrations (the service keeps them
// per user), so the later entry is disabled before it registers anything. Asked before each run.
// While an answer it needs is missing (GET /users/me failing), the account waits: it sets up
// nothing, its status says so, and the comparison is made again a minute later, then less and
// less often.
import { AccountUser } from '../cloud/account-user.js';
import { accountStatusMessage } from '../status/account-status.js';
import { doublingDelay, type Doubling } from '../util/backoff.js';
import type { UiMessage } from '../util/ui-message.js';
import type { AccountUnit } from './account-unit.js';

/** How soon a comparison that could not tell is made again: a minute, doubling up to half an hour. */
export const ASK_AGAIN: Doubling = { firstMs: 60_000, maxMs: 30 * 60_000 };

type Verdict = 'run' | 'wait' | 'disabled';

/** Told why an account waits (each time it does), and `undefined` once it runs after waiting. */
export type WaitReport = (reason: UiMessage | undefined) => void;

export class DistinctUsers {
  private readonly users = new Map<string, AccountUser>();
  private readonly verdicts = new Map<string, boolean>();
  /** Comparisons in a row that could not tell, per account (the back-off). */
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * `all`: every account in config order; `linked`: whether one is linked now; `askAgain`: wants a
   * new run of an account that had to wait (its run asks again first).
   */
  constructor(
    private readonly all: readonly AccountUnit[],
    private readonly linked: (account: string) => boolean,
    private readonly askAgain: (unit: AccountUnit) => void = () => undefined,
  ) {}

  /**
   * Whether `unit` may run now. False once it is found to be an earlier account's user (`disable`
   * has then been told why), and while an answer the comparison needs is missing (it is asked again
   * later). An earlier account that is not linked registers nothing and is not compared with; once
   * it links, the comparison is made again. Only a verdict from every earlier account's answer is kept.
   */
  async check(unit: AccountUnit, disable: (reason: UiMessage) => void, wait: WaitReport = () => undefined): Promise<boolean> {
    const id = unit.account.id;
    const known = this.verdicts.get(id);
    if (known !== undefined) return known;
    const verdict = await this.compare(unit, disable);
    if (verdict === 'wait') this.waitAndAskAgain(unit, wait);
    else if (this.failures.has(id)) {
      this.failures.delete(id);
      unit.log.info('Its Lock Access user could be compared with the earlier accounts\' users now.');
      if (verdict === 'run') wait(undefined);
    }
    return verdict === 'run';
  }

  /** Whether `unit` has no kept verdict yet (a later run compares again). */
  undecided(unit: AccountUnit): boolean {
    return !this.verdicts.has(unit.account.id);
  }

  /** No comparison is asked for any more (shutdown). */
  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async compare(unit: AccountUnit, disable: (reason: UiMessage) => void): Promise<Verdict> {
    const id = unit.account.id;
    const own = await this.user(unit).id();
    if (own === undefined) return 'wait';
    let complete = true;
    let unknown = false;
    for (const earlier of this.all.slice(0, this.all.indexOf(unit))) {
      if (!this.linked(earlier.account.id)) {
        complete = false;
        continue;
      }
      const theirs = await this.user(earlier).id();
      if (theirs === undefined) unknown = true;
      if (theirs !== own) continue;
      // Two comparisons at once (a run's and a retry's): the first to find it tells.
      if (this.verdicts.get(id) === false) return 'disabled';
      disable(earlier.account.main ? accountStatusMessage('accounts.disabled.sameAsMain') : accountStatusMessage('accounts.disabled.sameAsAccount', { name: earlier.account.name, id: earlier.account.id }));
      this.verdicts.set(id, false);
      return 'disabled';
    }
    if (unknown) return 'wait';
    if (complete) this.verdicts.set(id, true);
    return 'run';
  }

  private waitAndAskAgain(unit: AccountUnit, wait: WaitReport): void {
    const id = unit.account.id;
    if (this.timers.has(id) || !this.linked(id)) return;
    const failures = (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, failures);
    const delay = doublingDelay(failures, ASK_AGAIN);
    const minutes = Math.round(delay / 60_000);
    if (failures === 1) {
      unit.log.warn(`Its Lock Access user could not be compared with the earlier accounts' users (GET /users/me did not answer): it sets up nothing until it can, so it never takes over another account's registrations. Trying again in ${String(minutes)} min.`);
    }
    wait(accountStatusMessage('accounts.link.waiting', { minutes }));
    const timer = setTimeout(() => {
      this.timers.delete(id);
      if (this.linked(id)) this.askAgain(unit);
    }, delay);
    timer.unref();
    this.timers.set(id, timer);
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
