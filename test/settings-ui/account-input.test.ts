import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { nonEmpty, readSavedPlatform, resolveAccount } from '../../src/settings-ui/account-input.js';
import { UiError } from '../../src/settings-ui/ui-error.js';

const SAVED = {
  platform: 'LockAccess',
  apiKey: 'saved-key', clientId: 'saved-client', clientSecret: 'saved-secret',
  baseUrl: 'https://api.example.com/', authUrl: 'https://auth.example.com//',
  webhook: { publicUrl: 'https://home.example.net/lock-access' },
};

describe('README "Settings UI" > Account: which account a request of the page means', () => {
  it('the saved config alone is a complete account, addresses without trailing slashes', () => {
    expect(resolveAccount({}, SAVED)).toEqual({
      apiKey: 'saved-key', clientId: 'saved-client', clientSecret: 'saved-secret',
      baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com', publicUrl: 'https://home.example.net/lock-access',
    });
  });

  it('unsaved edits win; blank edits keep the saved value (saved secrets are never sent back to the page)', () => {
    const account = resolveAccount({ clientId: ' edited-client ', clientSecret: '', apiKey: '   ', publicUrl: 'https://other.example.net/x' }, SAVED);
    expect(account).toMatchObject({ clientId: 'edited-client', clientSecret: 'saved-secret', apiKey: 'saved-key', publicUrl: 'https://other.example.net/x' });
  });

  it('names the first missing field in plain words, a message code of its own per field', () => {
    const refusal = (input: unknown, saved: Record<string, unknown>) => {
      try {
        resolveAccount(input, saved);
      } catch (error) {
        return error instanceof UiError ? error.uiMessage : undefined;
      }
      return undefined;
    };
    expect(refusal({}, {})).toEqual({ code: 'server.account.missing.apiKey', params: {}, text: 'Enter the API key first.' });
    expect(refusal({ apiKey: 'k' }, { clientSecret: 's' })).toEqual({ code: 'server.account.missing.clientId', params: {}, text: 'Enter the client id first.' });
    expect(refusal({ apiKey: 'k' }, { clientId: 'c', clientSecret: 's', baseUrl: 'https://a' })).toEqual({ code: 'server.account.missing.authUrl', params: {}, text: 'Enter the authorization address (authUrl) first.' });
    expect(refusal({ baseUrl: 'api.example.com' }, SAVED)).toMatchObject({ code: 'server.account.notAddress.baseUrl', params: {} });
  });

  it('refuses addresses that are not http(s)', () => {
    expect(() => resolveAccount({ baseUrl: 'api.example.com' }, SAVED)).toThrow(/API address \(baseUrl\) must be a full address/);
    expect(() => resolveAccount({ authUrl: 'ftp://auth.example.com' }, SAVED)).toThrow(UiError);
  });

  it('token seeds come from the saved config only, never from the page', () => {
    const account = resolveAccount({ refreshToken: 'from-page', accessToken: 'from-page' }, { ...SAVED, refreshToken: 'seed-r', accessToken: ' seed-a ' });
    expect(account.refreshToken).toBe('seed-r');
    expect(account.accessToken).toBe('seed-a');
    expect(resolveAccount({ refreshToken: 'from-page' }, SAVED).refreshToken).toBeUndefined();
  });

  it('input of the wrong shape counts as no edits', () => {
    expect(resolveAccount({ apiKey: 42 }, SAVED).apiKey).toBe('saved-key');
    expect(resolveAccount('not an object', SAVED).apiKey).toBe('saved-key');
    expect(resolveAccount(null, SAVED).apiKey).toBe('saved-key');
  });

  it('nonEmpty trims strings and drops blanks and non-strings', () => {
    expect(nonEmpty(' a ')).toBe('a');
    expect([nonEmpty(''), nonEmpty('  '), nonEmpty(undefined), nonEmpty(3)]).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('the saved platform block of config.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'account-input-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the LockAccess block among other platforms', async () => {
    const path = join(dir, 'config.json');
    await writeFile(path, JSON.stringify({ platforms: [{ platform: 'Other', apiKey: 'no' }, { platform: 'LockAccess', apiKey: 'yes' }] }));
    expect(await readSavedPlatform(path)).toEqual({ platform: 'LockAccess', apiKey: 'yes' });
  });

  it('no path, no file, broken JSON, no platforms or no block: an empty object, never an error', async () => {
    const path = join(dir, 'config.json');
    expect(await readSavedPlatform(undefined)).toEqual({});
    expect(await readSavedPlatform(path)).toEqual({});
    await writeFile(path, '{broken');
    expect(await readSavedPlatform(path)).toEqual({});
    await writeFile(path, JSON.stringify({ bridge: {} }));
    expect(await readSavedPlatform(path)).toEqual({});
    await writeFile(path, JSON.stringify({ platforms: [null, 'x', { platform: 'Other' }] }));
    expect(await readSavedPlatform(path)).toEqual({});
  });
});
