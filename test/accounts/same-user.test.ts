// An extra account that is the same Lock Access user as an earlier one is disabled; while a user
// the comparison needs is unknown (its /users/me has not answered), the account may run and the
// next run asks again. Each account's client is a stand-in answering /users/me (the service's part).
import { describe, expect, it } from 'vitest';

import type { AccountUnit } from '../../src/accounts/account-unit.js';
import { DistinctUsers } from '../../src/accounts/same-user.js';
import { TransientError } from '../../src/cloud/http/errors.js';
import type { UiMessage } from '../../src/util/ui-message.js';

/** An account whose /users/me answers `answers` in turn (an Error: that call fails), the last one from then on. */
function account(id: string, answers: (string | Error)[]): { unit: AccountUnit; calls: () => number } {
  let calls = 0;
  const client = {
    request: (method: string, path: string) => {
      if (method !== 'GET' || path !== '/users/me') throw new Error(`unexpected ${method} ${path}`);
      const answer = answers[Math.min(calls, answers.length - 1)];
      calls += 1;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve({ UserID: answer });
    },
  };
  const unit = { account: { id, name: id === 'main' ? 'Lock Access' : `${id.charAt(0).toUpperCase()}${id.slice(1)}`, main: id === 'main' }, client } as unknown as AccountUnit;
  return { unit, calls: () => calls };
}

const outage = () => new TransientError('The Lock Access service did not answer (timeout).');

describe('the same /users/me user as an earlier account', () => {
  it('is disabled, naming the earlier account; the verdict is kept (no call again)', async () => {
    const main = account('main', ['U1']);
    const again = account('again', ['U1']);
    const users = new DistinctUsers([main.unit, again.unit], () => true);
    const told: UiMessage[] = [];
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told.map((reason) => reason.code)).toEqual(['accounts.disabled.sameAsMain']);
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(again.calls() + main.calls()).toBe(2);
  });

  it('another user runs, and that verdict is kept too', async () => {
    const main = account('main', ['U1']);
    const cabin = account('cabin', ['U2']);
    const users = new DistinctUsers([main.unit, cabin.unit], () => true);
    expect(await users.check(cabin.unit, () => undefined)).toBe(true);
    expect(await users.check(cabin.unit, () => undefined)).toBe(true);
    expect(cabin.calls() + main.calls()).toBe(2);
  });

  it('its own user unknown at first: it may run, and the next check, with the answer, disables it', async () => {
    const main = account('main', ['U1']);
    const again = account('again', [outage(), 'U1']);
    const users = new DistinctUsers([main.unit, again.unit], () => true);
    const told: UiMessage[] = [];
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(true);
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told).toHaveLength(1);
  });

  it('the earlier account\'s user unknown at first: not taken for "another user" for good; the next check, with both answers, disables it', async () => {
    const main = account('main', [outage(), 'U1']);
    const again = account('again', ['U1']);
    const users = new DistinctUsers([main.unit, again.unit], () => true);
    const told: UiMessage[] = [];
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(true);
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told.map((reason) => reason.code)).toEqual(['accounts.disabled.sameAsMain']);
  });

  it('an earlier account that is not linked is not compared with (its user is not asked); once it is linked, the next check compares', async () => {
    const main = account('main', ['U1']);
    const again = account('again', ['U1']);
    let mainLinked = false;
    const users = new DistinctUsers([main.unit, again.unit], (id) => id !== 'main' || mainLinked);
    expect(await users.check(again.unit, () => undefined)).toBe(true);
    expect(main.calls()).toBe(0);
    mainLinked = true;
    expect(await users.check(again.unit, () => undefined)).toBe(false);
  });
});
