import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, signPayload, startSimulator, type Simulator } from './index.js';
import { simAccountEntry } from './plugin-config.js';
import { api, grant, registration, tokenRequest } from './test-helpers.js';
import { testReceiverForFile, type ReceivedCallback } from './test-receiver.js';

const receiver = testReceiverForFile();
let sim: Simulator;
let clock: ManualClock;

const allLock = ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'];
const userTypes = ['lockmembership', 'lifecycle'];

afterEach(async () => {
  await sim.close();
});

/** A token of the account, from its own refresh token and client. */
async function tokenOf(accountId: string): Promise<string> {
  const account = sim.accountOf(accountId);
  return (await grant(sim, sim.issueRefreshToken(accountId), account)).accessToken;
}

function signedWith(callback: ReceivedCallback, key: string): boolean {
  const header = String(callback.headers['x-svc-signature']);
  const t = /t=(\d+)/.exec(header)?.[1] ?? '';
  return header === signPayload(callback.rawBody, key, Number(t) * 1000);
}

describe('README The service simulator: several accounts, each with its own key and client', () => {
  beforeEach(async () => {
    clock = new ManualClock();
    sim = await startSimulator({
      clock,
      accounts: [{ id: 'cabin', name: 'Cabin' }],
      locks: [{ id: 'L1', name: 'Front Door' }, { id: 'L2', name: 'Cabin Door', accounts: ['cabin'] }, { id: 'SHARED', accounts: ['main', 'cabin'] }],
      doorbells: [{ id: 'D1' }, { id: 'D2', accounts: ['cabin'] }],
    });
  });

  it('each account is a user of its own with its own key, client and refresh token; the main one stays sim.account', async () => {
    const [main, cabin] = sim.accounts();
    expect(main).toBe(sim.account);
    expect(main?.id).toBe('main');
    expect(cabin).toMatchObject({ id: 'cabin', name: 'Cabin' });
    expect(cabin?.apiKey).not.toBe(main?.apiKey);
    expect(cabin?.clientId).not.toBe(main?.clientId);
    expect(cabin?.userId).not.toBe(main?.userId);
    // A refresh token works with its own account's client only.
    const refused = await tokenRequest(sim, { grant_type: 'refresh_token', client_id: sim.account.clientId, client_secret: sim.account.clientSecret, refresh_token: cabin?.refreshToken ?? '' });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const cabinToken = (await grant(sim, cabin?.refreshToken, sim.accountOf('cabin'))).accessToken;
    expect((await api(sim, cabinToken, 'GET', '/users/me', undefined, cabin?.apiKey)).body).toMatchObject({ UserID: cabin?.userId, FirstName: 'Casey' });
    const mainToken = await tokenOf('main');
    expect((await api(sim, mainToken, 'GET', '/users/me')).body).toMatchObject({ UserID: sim.account.userId, FirstName: 'Alex' });
    expect(sim.stats.accounts).toMatchObject({ main: { grants: 1 }, cabin: { grants: 1 } });
  });

  it('an account sees only the devices it holds; a shared lock is in both lists', async () => {
    const cabinKey = sim.accountOf('cabin').apiKey;
    const cabin = await tokenOf('cabin');
    const main = await tokenOf('main');
    expect(Object.keys((await api(sim, main, 'GET', '/users/locks/mine')).body as object)).toEqual(['L1', 'SHARED']);
    expect(Object.keys((await api(sim, cabin, 'GET', '/users/locks/mine', undefined, cabinKey)).body as object)).toEqual(['L2', 'SHARED']);
    expect(Object.keys((await api(sim, cabin, 'GET', '/users/doorbells/mine', undefined, cabinKey)).body as object)).toEqual(['D2']);
    // Another account's device is unknown to it: no registration, no remote operation, no video.
    expect((await api(sim, cabin, 'POST', '/webhook/L1', registration(`${receiver.url}/x`, sim.accountOf('cabin').clientId, allLock), cabinKey)).status).toBe(404);
    expect((await api(sim, cabin, 'PUT', '/remoteoperate/L1/unlock', undefined, cabinKey)).status).toBe(404);
    expect((await api(sim, main, 'GET', '/doorbells/D2/videoevent?dvrID=abc')).status).toBe(404);
    expect(sim.stats.accounts.cabin?.byRoute).toMatchObject({ 'GET /api/users/locks/mine': 1, 'POST /api/webhook/:lockID': 1 });
  });

  it('a key and a token of different integrations get 403; an unknown key 403', async () => {
    const cabin = await tokenOf('cabin');
    expect((await api(sim, cabin, 'GET', '/users/me')).status).toBe(403);
    expect((await api(sim, await tokenOf('main'), 'GET', '/users/me', undefined, sim.accountOf('cabin').apiKey)).status).toBe(403);
    expect((await api(sim, cabin, 'GET', '/users/me', undefined, 'key_unknown')).status).toBe(403);
  });

  it('a shared lock: one delivery per registration, each signed with its account\'s key and carrying its header token', async () => {
    const cabin = sim.accountOf('cabin');
    await api(sim, await tokenOf('main'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/lock/SHARED`, sim.account.clientId, allLock, 'main-secret'));
    await api(sim, await tokenOf('cabin'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock, 'cabin-secret'), cabin.apiKey);
    expect(sim.registrations().map((r) => [r.scope, r.account])).toEqual([['SHARED', 'main'], ['SHARED', 'cabin']]);
    const results = await sim.fire('unlock', { lockId: 'SHARED', by: 'keypad' });
    expect(results.map((r) => r.outcome)).toEqual(['delivered', 'delivered']);
    const byPath = new Map(receiver.received.map((r) => [r.path, r]));
    const onMain = byPath.get('/lock/SHARED');
    const onCabin = byPath.get('/a/cabin/lock/SHARED');
    expect(onMain?.headers['x-lock-access-token']).toBe('main-secret');
    expect(onCabin?.headers['x-lock-access-token']).toBe('cabin-secret');
    expect(onMain && signedWith(onMain, sim.account.apiKey)).toBe(true);
    expect(onCabin && signedWith(onCabin, cabin.apiKey)).toBe(true);
    expect(onCabin && signedWith(onCabin, sim.account.apiKey)).toBe(false);
    expect(onMain?.rawBody).toBe(onCabin?.rawBody);
  });

  it('remote operate and status as an account: the callback names that account\'s user, and goes to every registration of the lock', async () => {
    const cabin = sim.accountOf('cabin');
    const cabinToken = await tokenOf('cabin');
    await api(sim, await tokenOf('main'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/lock/SHARED`, sim.account.clientId, allLock));
    await api(sim, cabinToken, 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock), cabin.apiKey);
    expect((await api(sim, cabinToken, 'PUT', '/remoteoperate/SHARED/unlock', undefined, cabin.apiKey)).status).toBe(200);
    await sim.idle();
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/a/cabin/lock/SHARED', '/lock/SHARED']);
    for (const r of receiver.received) {
      expect(r.body).toMatchObject({ Event: 'unlock', User: { UserID: cabin.userId } });
      expect(r.headers['x-lock-access-token']).toBeUndefined();
    }
  });

  it('user hooks are per user: membership and lifecycle events of an account reach its own hook only', async () => {
    const cabin = sim.accountOf('cabin');
    const cabinToken = await tokenOf('cabin');
    await api(sim, await tokenOf('main'), 'POST', '/webhook/user', registration(`${receiver.url}/user`, sim.account.clientId, userTypes));
    await api(sim, cabinToken, 'POST', '/webhook/user', registration(`${receiver.url}/a/cabin/user`, cabin.clientId, userTypes), cabin.apiKey);
    await api(sim, cabinToken, 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock), cabin.apiKey);
    await sim.fire('user-deleted', { account: 'cabin' });
    expect(receiver.received.map((r) => [r.path, (r.body as { UserID: string }).UserID])).toEqual([['/a/cabin/user', cabin.userId]]);
    receiver.received.length = 0;
    // The cabin's user leaves the shared lock: the main account still holds it, the cabin's registration gets nothing more.
    await sim.fire('lock-user-remove', { lockId: 'SHARED', subject: 'me', account: 'cabin' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/a/cabin/lock/SHARED', '/a/cabin/user']);
    expect(sim.lock('SHARED')?.accounts).toEqual(['main']);
    receiver.received.length = 0;
    expect(await sim.fire('unlock', { lockId: 'SHARED' })).toEqual([]);
    // Its own registration can still be deleted with its token and client.
    expect((await api(sim, cabinToken, 'DELETE', `/webhook/SHARED/${cabin.clientId}`, undefined, cabin.apiKey)).status).toBe(200);
    expect(sim.registrations().map((r) => r.account)).toEqual(['main', 'cabin']);
  });

  it('app operations name the first holder\'s user unless an account is given; an unknown account is refused', async () => {
    await api(sim, await tokenOf('cabin'), 'POST', '/webhook/L2', registration(`${receiver.url}/a/cabin/lock/L2`, sim.accountOf('cabin').clientId, allLock), sim.accountOf('cabin').apiKey);
    await sim.fire('unlock', { lockId: 'L2' });
    expect(receiver.received[0]?.body).toMatchObject({ User: { UserID: sim.accountOf('cabin').userId } });
    await expect(sim.fire('unlock', { lockId: 'L2', account: 'nobody' })).rejects.toThrow(/unknown account "nobody"/);
  });

  it('loseRegistrations(account) forgets only that account\'s registrations', async () => {
    const cabin = sim.accountOf('cabin');
    await api(sim, await tokenOf('main'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/lock/SHARED`, sim.account.clientId, allLock));
    await api(sim, await tokenOf('cabin'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock), cabin.apiKey);
    expect(sim.loseRegistrations('cabin')).toBe(1);
    expect(sim.registrations().map((r) => r.account)).toEqual(['main']);
  });

  it('registrationChanges lists each registration made and deleted, in order, with the account that called', async () => {
    const cabin = sim.accountOf('cabin');
    const cabinToken = await tokenOf('cabin');
    await api(sim, cabinToken, 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock), cabin.apiKey);
    await api(sim, await tokenOf('main'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/lock/SHARED`, sim.account.clientId, allLock));
    await api(sim, cabinToken, 'DELETE', `/webhook/SHARED/${cabin.clientId}`, undefined, cabin.apiKey);
    // Deleting what is not registered changes nothing, so it is not listed.
    await api(sim, cabinToken, 'DELETE', `/webhook/SHARED/${cabin.clientId}`, undefined, cabin.apiKey);
    expect(sim.registrationChanges()).toEqual([
      { op: 'register', kind: 'lock', scope: 'SHARED', account: 'cabin', url: `${receiver.url}/a/cabin/lock/SHARED` },
      { op: 'register', kind: 'lock', scope: 'SHARED', account: 'main', url: `${receiver.url}/lock/SHARED` },
      { op: 'delete', kind: 'lock', scope: 'SHARED', account: 'cabin' },
    ]);
  });

  it('revokeAccount takes one account\'s tokens away (its grant gets invalid_grant, its calls 401); the other account\'s keep working', async () => {
    const cabin = sim.accountOf('cabin');
    const cabinToken = await tokenOf('cabin');
    const mainToken = await tokenOf('main');
    const cabinRefresh = sim.issueRefreshToken('cabin');
    sim.revokeAccount('cabin');
    expect((await api(sim, cabinToken, 'GET', '/users/me', undefined, cabin.apiKey)).status).toBe(401);
    expect(sim.refreshTokenState(cabinRefresh)).toBe('revoked');
    expect(await tokenRequest(sim, { grant_type: 'refresh_token', client_id: cabin.clientId, client_secret: cabin.clientSecret, refresh_token: cabinRefresh })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await api(sim, mainToken, 'GET', '/users/me')).status).toBe(200);
    // Tokens issued afterwards work again (the account was linked anew).
    expect((await api(sim, await tokenOf('cabin'), 'GET', '/users/me', undefined, cabin.apiKey)).status).toBe(200);
  });

  it('simAccountEntry gives the plugin entry: id, name, refresh token and the key and client it does not share', () => {
    const cabin = sim.accountOf('cabin');
    expect(simAccountEntry(sim, 'cabin')).toEqual({ id: 'cabin', name: 'Cabin', refreshToken: cabin.refreshToken, apiKey: cabin.apiKey, clientId: cabin.clientId, clientSecret: cabin.clientSecret });
  });
});

describe('README The service simulator: accounts sharing one integration (key and client)', () => {
  beforeEach(async () => {
    clock = new ManualClock();
    sim = await startSimulator({ clock, accounts: [{ id: 'cabin', name: 'Cabin', shareKey: true, shareClient: true }], locks: [{ id: 'SHARED', accounts: ['main', 'cabin'] }] });
  });

  it('same key and client, own users; each token is its own user; callbacks differ only by header token and path', async () => {
    const cabin = sim.accountOf('cabin');
    expect([cabin.apiKey, cabin.clientId, cabin.clientSecret]).toEqual([sim.account.apiKey, sim.account.clientId, sim.account.clientSecret]);
    const cabinToken = await tokenOf('cabin');
    expect((await api(sim, cabinToken, 'GET', '/users/me')).body).toMatchObject({ UserID: cabin.userId });
    await api(sim, await tokenOf('main'), 'POST', '/webhook/SHARED', registration(`${receiver.url}/lock/SHARED`, sim.account.clientId, allLock, 'main-secret'));
    await api(sim, cabinToken, 'POST', '/webhook/SHARED', registration(`${receiver.url}/a/cabin/lock/SHARED`, cabin.clientId, allLock, 'cabin-secret'));
    await sim.fire('door-open', { lockId: 'SHARED' });
    expect(receiver.received.map((r) => [r.path, r.headers['x-lock-access-token']]).sort()).toEqual([['/a/cabin/lock/SHARED', 'cabin-secret'], ['/lock/SHARED', 'main-secret']]);
    expect(simAccountEntry(sim, 'cabin')).toEqual({ id: 'cabin', name: 'Cabin', refreshToken: cabin.refreshToken });
  });

  it('sign-in with a shared client: the consent page asks which account; login_hint picks it for ?auto=1', async () => {
    const query = new URLSearchParams({ response_type: 'code', client_id: sim.account.clientId, redirect_uri: 'http://127.0.0.1:1/cb', state: 's1' });
    const page = await (await fetch(`${sim.authUrl}/authorization?${query.toString()}&login_hint=cabin`)).text();
    expect(page).toContain('Sign in as');
    expect(page).toMatch(/value="cabin" checked/);
    const consent = await fetch(`${sim.authUrl}/authorization`, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ ...Object.fromEntries(query), decision: 'allow', account: 'cabin' }) });
    const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const exchanged = await tokenRequest(sim, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:1/cb', client_id: sim.account.clientId, client_secret: sim.account.clientSecret });
    expect((await api(sim, exchanged.body.access_token as string, 'GET', '/users/me')).body).toMatchObject({ UserID: sim.accountOf('cabin').userId });
    const auto = await fetch(`${sim.authUrl}/authorization?${query.toString()}&auto=1`, { redirect: 'manual' });
    const mainCode = new URL(auto.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const mainGrant = await tokenRequest(sim, { grant_type: 'authorization_code', code: mainCode, redirect_uri: 'http://127.0.0.1:1/cb', client_id: sim.account.clientId, client_secret: sim.account.clientSecret });
    expect((await api(sim, mainGrant.body.access_token as string, 'GET', '/users/me')).body).toMatchObject({ UserID: sim.account.userId });
    expect(sim.stats.accounts).toMatchObject({ main: { codeGrants: 1 }, cabin: { codeGrants: 1 } });
  });
});

describe('README The service simulator: accounts over the control routes', () => {
  beforeEach(async () => {
    clock = new ManualClock();
    sim = await startSimulator({ clock, locks: [{ id: 'L1' }] });
  });

  async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() as Record<string, unknown> };
  }

  it('POST /_sim/accounts makes one, POST /_sim/share gives it a lock, fire acts as it; bad input is 400', async () => {
    const made = await post('/_sim/accounts', { id: 'parents', name: 'Parents', shareKey: true });
    expect(made).toMatchObject({ status: 201, body: { id: 'parents', name: 'Parents', apiKey: sim.account.apiKey } });
    expect(made.body.clientId).not.toBe(sim.account.clientId);
    expect((await post('/_sim/accounts', { id: 'parents' })).status).toBe(400);
    expect((await post('/_sim/accounts', { id: 'Not Valid' })).status).toBe(400);
    expect(await post('/_sim/share', { kind: 'lock', id: 'L1', account: 'parents' })).toEqual({ status: 200, body: { kind: 'lock', id: 'L1', accounts: ['main', 'parents'] } });
    expect((await post('/_sim/share', { kind: 'lock', id: 'L1', account: 'nobody' })).status).toBe(400);
    const listed = await (await fetch(`${sim.url}/_sim/accounts`)).json() as { accounts: Array<{ id: string }> };
    expect(listed.accounts.map((a) => a.id)).toEqual(['main', 'parents']);
    const parents = sim.accountOf('parents');
    await api(sim, await tokenOf('parents'), 'POST', '/webhook/user', registration(`${receiver.url}/a/parents/user`, parents.clientId, userTypes));
    expect((await post('/_sim/fire', { event: 'user-deleted', account: 'parents' })).status).toBe(200);
    expect(receiver.received.map((r) => r.path)).toEqual(['/a/parents/user']);
    expect(await post('/_sim/share', { kind: 'lock', id: 'L1', account: 'parents', hold: false })).toMatchObject({ body: { accounts: ['main'] } });
  });
});
