// The extra accounts of the config: each entry checked on its own before any network call.
import { describe, expect, it } from 'vitest';

import { checkConfig } from '../../src/config.js';
import { accountLabel, accountSettings } from '../../src/config/account-settings.js';

const block = {
  platform: 'LockAccess',
  apiKey: 'key',
  clientId: 'client',
  clientSecret: 'secret',
  refreshToken: 'main-seed',
  baseUrl: 'https://api.example.com',
  authUrl: 'https://auth.example.com',
  webhook: { publicUrl: 'https://home.example.net/lock-access' },
};

function check(accounts: unknown, extra: Record<string, unknown> = {}) {
  const result = checkConfig({ ...block, ...extra, accounts });
  if (!result.ok) throw new Error(`refused: ${result.problems.join('; ')}`);
  return result;
}

describe('config: extra accounts', () => {
  it('a config without accounts has none, and the main account is the top-level fields', () => {
    const result = check(undefined);
    expect(result.config.accounts).toEqual([]);
    expect(result.disabledAccounts).toEqual([]);
    const [main, ...rest] = accountSettings(result.config);
    expect(rest).toEqual([]);
    expect(main).toMatchObject({ id: 'main', main: true, apiKey: 'key', clientId: 'client', clientSecret: 'secret', refreshToken: 'main-seed' });
  });

  it('an entry takes the top-level credentials and switches it leaves out, and keeps its own', () => {
    const result = check([
      { id: 'cabin', name: 'Cabin', refreshToken: 'cabin-seed', locks: [{ id: 'L1', account: 'main' }] },
      { id: 'mum', clientId: 'mum-client', clientSecret: 'mum-secret', apiKey: 'mum-key', userWebhook: false, discoverDevices: false },
    ], { userWebhook: true, discoverDevices: true });
    const [, cabin, mum] = accountSettings(result.config);
    expect(cabin).toMatchObject({ id: 'cabin', name: 'Cabin', main: false, apiKey: 'key', clientId: 'client', clientSecret: 'secret', refreshToken: 'cabin-seed', userWebhook: true, discoverDevices: true });
    expect(cabin?.locks).toEqual([expect.objectContaining({ id: 'L1', account: 'main' })]);
    expect(mum).toMatchObject({ id: 'mum', name: 'mum', apiKey: 'mum-key', clientId: 'mum-client', clientSecret: 'mum-secret', userWebhook: false, discoverDevices: false });
    expect(cabin && accountLabel(cabin)).toBe('account Cabin (cabin)');
    expect(result.disabled).toEqual([]);
  });

  const refused: [string, unknown, RegExp][] = [
    ['an id outside the pattern', { id: 'Cabin House', name: 'Cabin' }, /Account 2 of accounts \(id "Cabin House", Cabin\) is disabled .*id must be 1 to 32 lowercase letters, digits or dashes/],
    ['an id longer than 32 characters', { id: 'a'.repeat(33) }, /Account 2 of accounts .*id must be 1 to 32/],
    ['the reserved id main', { id: 'main', name: 'Home' }, /Account 2 of accounts \(id "main", Home\) is disabled .*id "main" is reserved for the top-level account: choose another id/],
    ['no id', { name: 'Cabin' }, /Account 2 of accounts \(Cabin\) is disabled .*id is missing: each account needs an id/],
    ['an apiKey with spaces', { id: 'mum', apiKey: ' k ' }, /Account 2 of accounts \(id "mum"\) is disabled .*apiKey has spaces/],
    ['a switch in quotes', { id: 'mum', userWebhook: 'yes' }, /Account 2 of accounts \(id "mum"\) is disabled .*userWebhook must be true or false/],
  ];
  for (const [what, entry, message] of refused) {
    it(`${what} disables that entry alone, naming position, id, name, field and fix`, () => {
      const result = check([{ id: 'cabin', name: 'Cabin' }, entry, { id: 'beach' }]);
      expect(result.config.accounts.map((account) => account.id)).toEqual(['cabin', 'beach']);
      expect(result.disabled).toHaveLength(1);
      expect(result.disabled[0]).toMatch(message);
      expect(result.disabled[0]).toMatch(/The main account and the other accounts run\.$/);
      expect(result.disabledAccounts).toEqual([expect.objectContaining({ position: 2 })]);
      expect(result.config.apiKey).toBe('key');
    });
  }

  it('an id an earlier entry uses disables the later entry', () => {
    const result = check([{ id: 'cabin', name: 'Cabin' }, { id: 'cabin', name: 'Beach' }]);
    expect(result.config.accounts).toEqual([expect.objectContaining({ id: 'cabin', name: 'Cabin' })]);
    expect(result.disabled[0]).toMatch(/Account 2 of accounts \(id "cabin", Beach\) is disabled .*id "cabin" is already used by account 1 of accounts \(id "cabin", Cabin\): give this account an id of its own/);
    expect(result.disabledAccounts).toEqual([{
      position: 2, id: 'cabin', name: 'Beach', reason: expect.stringContaining('already used') as unknown,
      // The settings page words it: the earlier entry by its position and config values, no English.
      problems: [{ code: 'config.account.idTaken', params: { id: 'cabin', position: 1, entry: 'id "cabin", Cabin' }, text: expect.stringContaining('already used') as unknown }],
    }]);
  });

  it('a refresh token the main account or an earlier entry was seeded with disables the later entry (the same account entered twice)', () => {
    const result = check([{ id: 'cabin', refreshToken: 'main-seed' }, { id: 'beach', refreshToken: 'beach-seed' }, { id: 'mum', refreshToken: 'beach-seed' }]);
    expect(result.config.accounts.map((account) => account.id)).toEqual(['beach']);
    expect(result.disabled[0]).toMatch(/Account 1 of accounts \(id "cabin"\) is disabled .*refreshToken is the one the top-level account was linked with, so it is the same account entered twice/);
    expect(result.disabled[1]).toMatch(/Account 3 of accounts \(id "mum"\) is disabled .*refreshToken is the one account 2 of accounts \(id "beach"\) was linked with/);
    for (const line of result.disabled) expect(line).not.toContain('seed');
    expect(result.disabledAccounts.map((entry) => entry.problems.map(({ code, params }) => ({ code, params })))).toEqual([
      [{ code: 'config.account.sameTokenAsMain', params: {} }],
      [{ code: 'config.account.sameToken', params: { position: 2, entry: 'id "beach"' } }],
    ]);
  });

  it('a mistake inside an account\'s device entry leaves that device out and the account runs; a hidden one stays hidden', () => {
    const result = check([{ id: 'cabin', locks: [{ id: 'L1', autoLockSeconds: -1 }, { id: 'L2', hidden: 'yes' }, { id: 'L3' }] }]);
    expect(result.config.accounts).toHaveLength(1);
    expect(result.config.accounts[0]?.locks.map((lock) => [lock.id, lock.hidden])).toEqual([['L1', true], ['L2', true], ['L3', false]]);
    expect(result.disabled[0]).toMatch(/Lock 1 of accounts\[0\]\.locks \(id "L1"\) is left out .*autoLockSeconds/);
    expect(result.disabled[1]).toMatch(/Lock 2 of accounts\[0\]\.locks \(id "L2"\) stays hidden/);
  });

  it('an owner that is not an account id is refused on that device entry alone', () => {
    const result = check([], { locks: [{ id: 'L1', account: 'Cabin!' }, { id: 'L2', account: 'cabin' }] });
    expect(result.config.locks.map((lock) => [lock.id, lock.hidden])).toEqual([['L1', true], ['L2', false]]);
    expect(result.disabled[0]).toMatch(/Lock 1 of locks \(id "L1"\) is left out .*account must be the id of an account in this block/);
  });

  it('accounts that is not a list is ignored and the main account runs', () => {
    const result = check({ id: 'cabin' });
    expect(result.config.accounts).toEqual([]);
    expect(result.disabled).toEqual(['accounts must be a list of account entries; it is ignored until you fix it in the plugin settings. The main account runs.']);
  });

  it('a mistake in an account entry never idles the plugin, even with no other account', () => {
    const result = checkConfig({ ...block, accounts: [{ id: 'x', apiKey: 12 }] });
    expect(result.ok).toBe(true);
  });
});

describe('config: the top-level account fields broken', () => {
  const own = { apiKey: 'cabin-key', clientId: 'cabin-client', clientSecret: 'cabin-secret' };

  it('disables the main account and every entry that takes the broken field; an entry with its own runs', () => {
    const result = checkConfig({ ...block, apiKey: '', accounts: [{ id: 'cabin', refreshToken: 'r-cabin', ...own }, { id: 'flat', refreshToken: 'r-flat' }] });
    if (!result.ok) throw new Error(`expected the extra account to run: ${result.problems.join('; ')}`);
    // The log's words say what to fix; the settings page gets the broken fields' names, words of no language.
    expect(result.mainDisabled?.text).toMatch(/apiKey/);
    expect(result.mainDisabled?.fields).toEqual(['apiKey']);
    expect(result.config.accounts.map((entry) => entry.id)).toEqual(['cabin']);
    expect(result.disabled.join('\n')).toMatch(/"flat".*apiKey is taken from the top-level account fields, where it has a mistake/);
  });

  it('with no entry that can run, everything idles as before', () => {
    const result = checkConfig({ ...block, apiKey: '', accounts: [{ id: 'flat', refreshToken: 'r-flat' }] });
    expect(result.ok).toBe(false);
    expect(checkConfig({ ...block, apiKey: '' }).ok).toBe(false);
  });

  it('a mistake in the webhook settings idles everything, whatever the entries hold', () => {
    const result = checkConfig({ ...block, apiKey: '', webhook: { publicUrl: 'not a url' }, accounts: [{ id: 'cabin', refreshToken: 'r-cabin', ...own }] });
    expect(result.ok).toBe(false);
  });
});
