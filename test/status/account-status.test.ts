// An extra account's entry in the status file: its one writer shows the link, and while the account
// waits for its user comparison a linked link shows that it waits (with why, since its first wait),
// unless its settings or tokens have a problem to fix; once it runs, linked again; once disabled,
// disabled for the rest of the run.
import { describe, expect, it } from 'vitest';

import { AccountStatusReporter, accountStatusMessage, type AccountsStatus } from '../../src/status/account-status.js';

function entry(): { reporter: AccountStatusReporter; shown: () => AccountsStatus[string] | undefined; clock: { now: number } } {
  const sink: { status: { accounts?: AccountsStatus } } & { update(patch: { accounts: AccountsStatus }): void } = {
    status: {},
    update(patch) {
      this.status = { ...this.status, ...patch };
    },
  };
  const clock = { now: 1_000 };
  const reporter = new AccountStatusReporter(sink, 'cabin', 'Cabin', () => clock.now);
  return { reporter, shown: () => sink.status.accounts?.cabin, clock };
}

const WAIT = accountStatusMessage('accounts.link.waiting', { minutes: 1 });

describe('an extra account\'s status entry', () => {
  it('linked while it waits: waiting with why, since the first wait; linked again once it runs', () => {
    const { reporter, shown, clock } = entry();
    reporter.link('linked');
    expect(shown()?.link).toMatchObject({ state: 'linked', since: 1_000 });
    clock.now = 2_000;
    reporter.waitFor(WAIT);
    reporter.link('linked');
    expect(shown()).toMatchObject({ name: 'Cabin', link: { state: 'waiting', message: WAIT, since: 2_000 } });
    clock.now = 3_000;
    reporter.link('linked');
    expect(shown()?.link.since).toBe(2_000);
    reporter.waitFor(undefined);
    reporter.link('linked');
    expect(shown()?.link).toMatchObject({ state: 'linked', message: accountStatusMessage('accounts.link.linked'), since: 3_000 });
  });

  it('disabled: its link stays disabled with why, whatever its tokens do later in the run', () => {
    const { reporter, shown } = entry();
    reporter.waitFor(WAIT);
    reporter.link('linked');
    const why = accountStatusMessage('accounts.disabled.sameAsMain');
    reporter.disabled(why);
    reporter.link('linked');
    reporter.link('reauthorizationNeeded');
    expect(shown()?.link).toMatchObject({ state: 'disabled', message: why });
  });

  it('a setting to fix or tokens not saved show over the wait; a state other than linked too', () => {
    const { reporter, shown } = entry();
    reporter.waitFor(WAIT);
    reporter.link('linked', undefined, 'settings', 'clientSecret');
    expect(shown()?.link.state).toBe('checkSettings');
    reporter.link('linked', undefined, 'notSaved');
    expect(shown()?.link.state).toBe('linked');
    expect(shown()?.link.message.code).toBe('link.tokensNotSaved');
    reporter.link('reauthorizationNeeded');
    expect(shown()?.link.state).toBe('reauthorizationNeeded');
  });
});
