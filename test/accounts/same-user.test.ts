// An extra account that is the same Lock Access user as an earlier one is disabled; while a user
// the comparison needs is unknown (its /users/me has not answered), the account waits and the
// comparison is made again later. Each account's client is a stand-in answering /users/me (the
// service's part).
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { AccountUnit } from '../../src/accounts/account-unit.js';
import { ASK_AGAIN, DistinctUsers } from '../../src/accounts/same-user.js';
import { TransientError } from '../../src/cloud/http/errors.js';
import type { UiMessage } from '../../src/util/ui-message.js';

/** An account whose /users/me answers `answers` in turn (an Error: that call fails), the last one from then on. */
function account(id: string, answers: (string | Error)[]): { unit: AccountUnit; calls: () => number; lines: string[] } {
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(`info ${line}`), warn: (line: string) => lines.push(`warn ${line}`), error: (line: string) => lines.push(`error ${line}`), debug: () => undefined };
  let calls = 0;
  const client = {
    request: (method: string, path: string) => {
      if (method !== 'GET' || path !== '/users/me') throw new Error(`unexpected ${method} ${path}`);
      const answer = answers[Math.min(calls, answers.length - 1)];
      calls += 1;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve({ UserID: answer });
    },
  };
  const unit = { account: { id, name: id === 'main' ? 'Lock Access' : `${id.charAt(0).toUpperCase()}${id.slice(1)}`, main: id === 'main' }, client, log } as unknown as AccountUnit;
  return { unit, calls: () => calls, lines };
}

const outage = () => new TransientError('The Lock Access service did not answer (timeout).');

afterEach(() => {
  vi.useRealTimers();
});

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

  it('its own user unknown at first: it waits (sets up nothing), says so once, and is compared again a minute later: disabled', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const again = account('again', [outage(), 'U1']);
    const asked: string[] = [];
    const told: UiMessage[] = [];
    const users = new DistinctUsers([main.unit, again.unit], () => true, (unit) => asked.push(unit.account.id));
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(again.lines).toEqual([expect.stringMatching(/^warn Its Lock Access user could not be compared .*GET \/users\/me did not answer.* Trying again in 1 min\.$/)]);
    await vi.advanceTimersByTimeAsync(ASK_AGAIN.firstMs - 1);
    expect(asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toEqual(['again']);
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told.map((reason) => reason.code)).toEqual(['accounts.disabled.sameAsMain']);
  });

  it('the earlier account\'s user unknown at first: not taken for "another user"; it waits, and the next check, with both answers, disables it', async () => {
    vi.useFakeTimers();
    const main = account('main', [outage(), 'U1']);
    const again = account('again', ['U1']);
    const users = new DistinctUsers([main.unit, again.unit], () => true);
    const told: UiMessage[] = [];
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told).toEqual([]);
    expect(await users.check(again.unit, (reason) => told.push(reason))).toBe(false);
    expect(told.map((reason) => reason.code)).toEqual(['accounts.disabled.sameAsMain']);
  });

  it('another user found after waiting: it runs, and a line says the comparison could be made', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const cabin = account('cabin', [outage(), 'U2']);
    const users = new DistinctUsers([main.unit, cabin.unit], () => true);
    expect(await users.check(cabin.unit, () => undefined)).toBe(false);
    expect(await users.check(cabin.unit, () => undefined)).toBe(true);
    expect(cabin.lines.at(-1)).toMatch(/^info Its Lock Access user could be compared/);
  });

  it('its status says why it waits and when the comparison is made again, each time; once it runs, the wait is over', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const cabin = account('cabin', [outage(), outage(), 'U2']);
    const users = new DistinctUsers([main.unit, cabin.unit], () => true);
    const reports: (UiMessage | undefined)[] = [];
    const report = (reason: UiMessage | undefined) => reports.push(reason);
    expect(await users.check(cabin.unit, () => undefined, report)).toBe(false);
    await vi.advanceTimersByTimeAsync(ASK_AGAIN.firstMs);
    expect(await users.check(cabin.unit, () => undefined, report)).toBe(false);
    await vi.advanceTimersByTimeAsync(2 * ASK_AGAIN.firstMs);
    expect(await users.check(cabin.unit, () => undefined, report)).toBe(true);
    expect(reports.map((reason) => reason && { code: reason.code, params: reason.params })).toEqual([
      { code: 'accounts.link.waiting', params: { minutes: 1 } },
      { code: 'accounts.link.waiting', params: { minutes: 2 } },
      undefined,
    ]);
    expect(reports[0]?.text).toMatch(/^Linked, but nothing is set up yet: .*GET \/users\/me did not answer.* again in 1 min\.$/);
  });

  it('found to be an earlier account\'s user after waiting: disabled, and the wait is not reported over', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const again = account('again', [outage(), 'U1']);
    const users = new DistinctUsers([main.unit, again.unit], () => true);
    const reports: (UiMessage | undefined)[] = [];
    const told: UiMessage[] = [];
    expect(await users.check(again.unit, (reason) => told.push(reason), (reason) => reports.push(reason))).toBe(false);
    await vi.advanceTimersByTimeAsync(ASK_AGAIN.firstMs);
    expect(await users.check(again.unit, (reason) => told.push(reason), (reason) => reports.push(reason))).toBe(false);
    expect(told.map((reason) => reason.code)).toEqual(['accounts.disabled.sameAsMain']);
    expect(reports.map((reason) => reason?.code)).toEqual(['accounts.link.waiting']);
  });

  it('asked again after 1, 2, 4, 8, 16, 30, 30 min while the answer stays missing; one warning for the whole spell', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const cabin = account('cabin', [outage()]);
    const asked: number[] = [];
    const start = Date.now();
    const users: DistinctUsers = new DistinctUsers([main.unit, cabin.unit], () => true, (unit) => {
      asked.push(Math.round((Date.now() - start) / 60_000));
      void users.check(unit, () => undefined);
    });
    expect(await users.check(cabin.unit, () => undefined)).toBe(false);
    await vi.advanceTimersByTimeAsync(92 * 60_000);
    expect(asked).toEqual([1, 3, 7, 15, 31, 61, 91]);
    expect(cabin.lines.filter((line) => line.startsWith('warn'))).toHaveLength(1);
    users.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(asked).toHaveLength(7);
  });

  it('an account unlinked while it waited is not asked again', async () => {
    vi.useFakeTimers();
    const main = account('main', ['U1']);
    const cabin = account('cabin', [outage()]);
    let cabinLinked = true;
    const asked: string[] = [];
    const users = new DistinctUsers([main.unit, cabin.unit], (id) => id !== 'cabin' || cabinLinked, (unit) => asked.push(unit.account.id));
    expect(await users.check(cabin.unit, () => undefined)).toBe(false);
    cabinLinked = false;
    await vi.advanceTimersByTimeAsync(ASK_AGAIN.maxMs);
    expect(asked).toEqual([]);
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
