import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { WebhookRegistrar } from '../../src/cloud/registrations/registrations.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import { accountStorage } from '../../src/accounts/account-storage.js';
import { accountIdOf, resolveAccountById } from '../../src/settings-ui/account-choice.js';
import { CloudSession } from '../../src/settings-ui/cloud-session.js';
import { SettingsUiBackend } from '../../src/settings-ui/settings-ui-backend.js';
import { judgeTestEvent } from '../../src/settings-ui/test-event-verdict.js';
import { UiError } from '../../src/settings-ui/ui-error.js';
import { Storage } from '../../src/storage.js';
import { startSimulator, type Simulator } from '../sim/index.js';

const REDIRECT = 'https://home.example.net/linked';
const PUBLIC_URL = 'http://127.0.0.1:9/lock-access';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

describe('which account a settings-page request means (account-choice)', () => {
  const saved = {
    name: 'Home', apiKey: 'key-main', clientId: 'client-main', clientSecret: 'secret-main', baseUrl: 'https://api.example', authUrl: 'https://auth.example',
    refreshToken: 'rt-main', webhook: { publicUrl: 'https://hb.example/lock-access' },
    accounts: [{ id: 'cabin', name: 'Cabin', refreshToken: 'rt-cabin' }, { id: 'parents', apiKey: 'key-parents', clientId: 'client-parents', clientSecret: 'secret-parents' }],
  };

  it('no id is the main account; an id outside the pattern is refused', () => {
    expect(accountIdOf(undefined)).toBe('main');
    expect(accountIdOf('cabin')).toBe('cabin');
    for (const bad of ['Cabin', 'a/b', '', 7]) if (bad !== '') expect(() => accountIdOf(bad)).toThrow(UiError);
  });

  it('an entry takes the block\'s key and client where it has none of its own, and only its own seeds', () => {
    expect(resolveAccountById('main', {}, undefined, saved)).toMatchObject({ id: 'main', name: 'Home', apiKey: 'key-main', refreshToken: 'rt-main' });
    expect(resolveAccountById('cabin', {}, undefined, saved)).toMatchObject({ id: 'cabin', name: 'Cabin', apiKey: 'key-main', clientId: 'client-main', refreshToken: 'rt-cabin' });
    const parents = resolveAccountById('parents', {}, undefined, saved);
    expect(parents).toMatchObject({ id: 'parents', name: 'parents', apiKey: 'key-parents', clientId: 'client-parents', clientSecret: 'secret-parents', baseUrl: 'https://api.example' });
    expect(parents.refreshToken).toBeUndefined();
    // Unsaved edits: the entry's own win over the block's, the block's over the saved ones.
    expect(resolveAccountById('cabin', { apiKey: 'key-edited' }, { clientId: 'client-typed' }, saved)).toMatchObject({ apiKey: 'key-edited', clientId: 'client-typed' });
    expect(() => resolveAccountById('nobody', {}, undefined, saved)).toThrow(/no account "nobody"/);
  });

  it('an extra account keeps its files in accounts/<id>/, the main account in the plugin\'s folder', () => {
    const root = new Storage('/x/lock-access');
    expect(accountStorage(root, 'main')).toBe(root);
    expect(accountStorage(root, 'cabin').dir).toBe('/x/lock-access/accounts/cabin');
  });

  it('a test event of an extra account expects its callback on the account\'s path', () => {
    const status = { receiver: { lastCallbacks: {}, lastUnknownPath: { at: 2, path: '/lock-access/lock/L1' } } } as unknown as Parameters<typeof judgeTestEvent>[0];
    const verdict = judgeTestEvent(status, { lockId: 'L1', startedAt: 1, now: 3, publicUrl: PUBLIC_URL, accountId: 'cabin' });
    expect(verdict).toMatchObject({ state: 'otherPath', message: { params: { expected: '/lock-access/a/cabin/lock/L1' } } });
  });
});

describe('README "Several homes or accounts": link, test and unlink an extra account from the settings page', () => {
  let sim: Simulator;
  let dir: string;
  let backend: SettingsUiBackend;
  const cabinTokens = () => join(dir, 'lock-access', 'accounts', 'cabin', 'tokens.json');
  const mainTokens = () => join(dir, 'lock-access', 'tokens.json');

  beforeEach(async () => {
    sim = await startSimulator({ accounts: [{ id: 'cabin', name: 'Cabin' }], locks: [{ id: 'L1' }, { id: 'CABIN-1', accounts: ['cabin'] }] });
    dir = await mkdtemp(join(tmpdir(), 'ui-accounts-'));
    const cabin = sim.accountOf('cabin');
    await writeFile(join(dir, 'config.json'), JSON.stringify({ platforms: [{
      platform: 'LockAccess', apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret,
      baseUrl: sim.baseUrl, authUrl: sim.authUrl, webhook: { publicUrl: PUBLIC_URL },
      accounts: [{ id: 'cabin', name: 'Cabin', apiKey: cabin.apiKey, clientId: cabin.clientId, clientSecret: cabin.clientSecret }],
    }] }));
    backend = new SettingsUiBackend({
      storagePath: dir, configPath: join(dir, 'config.json'), log: quiet,
      createClient: (account, tokens) => new CloudHttpClient({ baseUrl: account.baseUrl, apiKey: account.apiKey, tokens }),
    });
  });
  afterEach(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  const exists = (path: string) => stat(path).then(() => true, () => false);

  it('OAuth: the state carries the account id and a nonce; the code is exchanged with that account\'s client and the tokens go to accounts/<id>/tokens.json (0600) only', async () => {
    const { url } = await backend.startAuthorization({ accountId: 'cabin', redirectUri: REDIRECT });
    const signIn = new URL(url);
    expect(signIn.searchParams.get('client_id')).toBe(sim.accountOf('cabin').clientId);
    expect(signIn.searchParams.get('state')).toMatch(/^cabin\.[A-Za-z0-9_-]{40,}$/);
    const redirected = (await fetch(`${url}&auto=1`, { redirect: 'manual' })).headers.get('location') ?? '';
    // The page's row does not decide: the state does.
    expect(await backend.finishAuthorization({ redirectUrl: redirected })).toMatchObject({ linked: true });
    expect((await stat(cabinTokens())).mode & 0o777).toBe(0o600);
    expect(await exists(mainTokens())).toBe(false);
    expect(sim.stats.accounts).toMatchObject({ cabin: { codeGrants: 1 }, main: { codeGrants: 0, grants: 0 } });
    const asked = (): number => sim.stats.accounts.cabin?.byRoute['GET /api/users/me'] ?? 0;
    const before = asked();
    expect(await backend.testConnection({ accountId: 'cabin' })).toMatchObject({ ok: true });
    expect(asked()).toBe(before + 1);
    expect(sim.stats.accounts.main?.apiCalls).toBe(0);
  });

  it('a state whose account id was changed is refused, and nothing is linked', async () => {
    const { url } = await backend.startAuthorization({ accountId: 'cabin', redirectUri: REDIRECT });
    const redirected = new URL((await fetch(`${url}&auto=1`, { redirect: 'manual' })).headers.get('location') ?? '');
    redirected.searchParams.set('state', (redirected.searchParams.get('state') ?? '').replace(/^cabin\./, 'main.'));
    await expect(backend.finishAuthorization({ redirectUrl: redirected.toString() })).rejects.toThrow(/state does not match/);
    expect(await exists(cabinTokens())).toBe(false);
    expect(await exists(mainTokens())).toBe(false);
  });

  it('a pasted refresh token links the named account only; unlink of that account deletes its registrations and tokens, the main account\'s stay', async () => {
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    await backend.linkWithRefreshToken({ accountId: 'cabin', refreshToken: sim.issueRefreshToken('cabin') });
    const mainFile = await readFile(mainTokens(), 'utf8');
    expect(JSON.parse(await readFile(cabinTokens(), 'utf8'))).toMatchObject({ state: 'linked' });
    // Each account registers its lock, as the plugin would: the cabin's under /a/cabin with its own storage.
    const session = new CloudSession({ storage: Storage.under(dir), log: quiet, now: Date.now, createClient: (a, tokens) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens }) });
    for (const [id, lock, account] of [['main', 'L1', sim.account], ['cabin', 'CABIN-1', sim.accountOf('cabin')]] as const) {
      const settings = { id, apiKey: account.apiKey, clientId: account.clientId, clientSecret: account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl };
      await session.withTokens(settings, async (tokens) => {
        const storage = session.storageOf(settings);
        const registrar = new WebhookRegistrar({ client: await session.client(settings, tokens), storage, clientId: account.clientId, publicUrl: () => `${PUBLIC_URL}${id === 'main' ? '' : `/a/${id}`}`, secret: await WebhookSecret.load(storage), log: quiet });
        await registrar.reconcile({ locks: [lock], doorbells: [], user: false });
        registrar.stop();
      });
    }
    expect(sim.registrations().map((r) => [r.account, r.url])).toEqual([['main', `${PUBLIC_URL}/lock/L1`], ['cabin', `${PUBLIC_URL}/a/cabin/lock/CABIN-1`]]);
    const mainBefore = { grants: sim.stats.accounts.main?.grants, calls: sim.stats.accounts.main?.apiCalls };
    expect(await backend.unlink({ accountId: 'cabin' })).toMatchObject({ saved: true, left: [] });
    // Nothing of the main account's was asked for: no grant, no call with its token.
    expect({ grants: sim.stats.accounts.main?.grants, calls: sim.stats.accounts.main?.apiCalls }).toEqual(mainBefore);
    expect(sim.registrations().map((r) => r.account)).toEqual(['main']);
    expect(JSON.parse(await readFile(cabinTokens(), 'utf8'))).toMatchObject({ state: 'unlinked' });
    expect(await readFile(mainTokens(), 'utf8')).toBe(mainFile);
    expect(sim.stats.accounts.main?.byRoute['DELETE /api/webhook/:lockID/:clientID']).toBeUndefined();
  });

  it('unlink of a shared lock\'s owner: the next linked holder registers the lock first, then the owner deletes its registrations; the next owner\'s own registrations stay', async () => {
    sim.share('lock', 'L1', 'cabin');
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    await backend.linkWithRefreshToken({ accountId: 'cabin', refreshToken: sim.issueRefreshToken('cabin') });
    const session = new CloudSession({ storage: Storage.under(dir), log: quiet, now: Date.now, createClient: (a, tokens) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens }) });
    // As the running plugin left it: Cabin owns the shared L1 and its own CABIN-1; the main account has only its user registration.
    for (const [id, account, wanted] of [['main', sim.account, { locks: [], doorbells: [], user: true }], ['cabin', sim.accountOf('cabin'), { locks: ['L1', 'CABIN-1'], doorbells: [], user: false }]] as const) {
      const settings = { id, apiKey: account.apiKey, clientId: account.clientId, clientSecret: account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl };
      await session.withTokens(settings, async (tokens) => {
        const storage = session.storageOf(settings);
        const registrar = new WebhookRegistrar({ client: await session.client(settings, tokens), storage, clientId: account.clientId, publicUrl: () => `${PUBLIC_URL}${id === 'main' ? '' : `/a/${id}`}`, secret: await WebhookSecret.load(storage), log: quiet });
        await registrar.reconcile({ ...wanted, locks: [...wanted.locks], doorbells: [] });
        registrar.stop();
      });
    }
    await writeFile(join(dir, 'lock-access', 'device-accounts.json'), JSON.stringify({ version: 1, devices: { 'lock:L1': { owner: 'cabin', holders: ['main', 'cabin'] }, 'lock:CABIN-1': { owner: 'cabin', holders: ['cabin'] } } }));
    const before = sim.registrationChanges().length;
    const answer = await backend.unlink({ accountId: 'cabin' });
    expect(answer).toMatchObject({ saved: true, left: [] });
    expect(answer.notes[0]).toMatchObject({ code: 'server.unlink.handedOver', params: { device: 'L1', account: 'main' } });
    const changes = sim.registrationChanges().slice(before).map((c) => `${c.op} ${c.scope} ${c.account}`);
    expect(changes.indexOf('register L1 main')).toBeGreaterThanOrEqual(0);
    expect(changes.indexOf('register L1 main')).toBeLessThan(changes.indexOf('delete L1 cabin'));
    expect(changes).toContain('delete CABIN-1 cabin');
    // The main account's user registration was sent as its ledger has it, not deleted.
    expect(changes.filter((c) => c.endsWith(' main'))).toEqual(['register L1 main']);
    expect(sim.registrations().map((r) => [r.account, r.kind, r.scope]).sort()).toEqual([['main', 'lock', 'L1'], ['main', 'user', expect.anything()]].sort());
  });

  it('a handover the next holder cannot register: the note says why as a reason code the page words (the service\'s words go to the log)', async () => {
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    await backend.linkWithRefreshToken({ accountId: 'cabin', refreshToken: sim.issueRefreshToken('cabin') });
    const session = new CloudSession({ storage: Storage.under(dir), log: quiet, now: Date.now, createClient: (a, tokens) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens }) });
    const cabin = { id: 'cabin', apiKey: sim.accountOf('cabin').apiKey, clientId: sim.accountOf('cabin').clientId, clientSecret: sim.accountOf('cabin').clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl };
    await session.withTokens(cabin, async (tokens) => {
      const storage = session.storageOf(cabin);
      const registrar = new WebhookRegistrar({ client: await session.client(cabin, tokens), storage, clientId: cabin.clientId, publicUrl: () => `${PUBLIC_URL}/a/cabin`, secret: await WebhookSecret.load(storage), log: quiet });
      await registrar.reconcile({ locks: ['CABIN-1'], doorbells: [], user: false });
      registrar.stop();
    });
    // The holdings say the main account holds CABIN-1 too, which the service does not know: its registration is refused.
    await writeFile(join(dir, 'lock-access', 'device-accounts.json'), JSON.stringify({ version: 1, devices: { 'lock:CABIN-1': { owner: 'cabin', holders: ['main', 'cabin'] } } }));
    const answer = await backend.unlink({ accountId: 'cabin' });
    const note = answer.notes.find((message) => message.code === 'server.unlink.handoverFailed');
    expect(note).toMatchObject({ params: { device: 'CABIN-1', account: 'main', reason: { code: 'reason.httpStatus', params: { status: expect.any(Number) as number } } } });
  });

  it('an account that is not in the settings is named', async () => {
    await expect(backend.testConnection({ accountId: 'attic' })).rejects.toThrow(/no account "attic"/);
  });
});
