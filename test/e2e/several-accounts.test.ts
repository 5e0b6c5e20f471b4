// Several accounts in one block (design 7h), end to end: the built plugin in a real Homebridge,
// the simulator with a main account, "Cabin" (a key and client of its own) and "Parents" (the main
// account's key and client), read through a paired HomeKit controller. One Homebridge serves every
// case: first with the main account alone (the upgrade), then with the extra accounts and four
// broken entries added. The cases run in order and build on each other.
import { readFile, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { characteristicId, type HapController } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { E2eSession } from '../harness/e2e-session.js';
import { startSimulator, signPayload, type Simulator, type SimRegistration } from '../sim/index.js';
import { lockStatus, person } from '../sim/payloads.js';
import { simAccountEntry, simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let sim: Simulator;
let listenPort = 0;
const session = new E2eSession();
const storage = (...parts: string[]) => join(session.hb?.storagePath ?? '', 'lock-access', ...parts);
const logs = (pattern: RegExp): string[] => session.hb?.logs.filter((line) => pattern.test(line)) ?? [];
const paired = (): HapController => session.paired();
/** The main account's registration run that changed nothing (its lines carry no account name). */
const UNCHANGED_MAIN = /\[Lock Access\] Webhooks: 0 registered, 0 deleted, 4 unchanged\./;

function platform(accounts?: Record<string, unknown>[]): Record<string, unknown> {
  return simPlatformConfig(sim, listenPort, {
    refreshStateOnStart: false,
    webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort, deliveryCheckMinutes: 0 },
    ...(accounts === undefined ? {} : { accounts }),
  });
}

/** The extra accounts, and four entries with a mistake each (after the first restart, so their seeds are known). */
function accountEntries(): Record<string, unknown>[] {
  const beach = (id: string) => simAccountEntry(sim, 'beach', { id, refreshToken: sim.issueRefreshToken('beach') });
  return [
    simAccountEntry(sim, 'cabin'),
    simAccountEntry(sim, 'parents'),
    beach('Beach House'),
    beach('cabin'),
    simAccountEntry(sim, 'beach', { id: 'cabin-copy', refreshToken: sim.accountOf('cabin').refreshToken }),
    simAccountEntry(sim, 'cabin', { id: 'again', name: 'Again', refreshToken: sim.issueRefreshToken('cabin') }),
  ];
}

const registration = (scope: string): SimRegistration => {
  const found = sim.registrations().filter((r) => r.scope === scope);
  expect(found, scope).toHaveLength(1);
  return found[0] as SimRegistration;
};
const tokenFile = (account?: string) => readFile(account === undefined ? storage('tokens.json') : storage('accounts', account, 'tokens.json'));
const aids = async (): Promise<Record<string, number>> => Object.fromEntries((await paired().accessories()).map((a) => [a.name, a.aid]));
const writesOf = (account: string) => Object.entries(sim.stats.accounts[account]?.byRoute ?? {}).filter(([route]) => !route.startsWith('GET ')).reduce((sum, [, n]) => sum + n, 0);

/** Posts a body signed with `key` (at `atMs`) to a listener path, with `token` as the custom header unless null. */
async function post(path: string, body: string, key: string, token: string | null, atMs = Date.now()): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-svc-signature': signPayload(body, key, atMs) };
  if (token !== null) headers['x-lock-access-token'] = token;
  return (await fetch(`http://127.0.0.1:${listenPort}/lock-access${path}`, { method: 'POST', headers, body })).status;
}

/** The status line of the answer to a request that announces a large body and sends none of it. */
function answerWithoutBody(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(listenPort, '127.0.0.1', () => {
      socket.write(`POST /lock-access${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`);
    });
    socket.setEncoding('utf8');
    socket.once('data', (chunk: string) => {
      socket.destroy();
      resolve(chunk.split('\r\n')[0] ?? '');
    });
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  sim = await startSimulator({
    accounts: [{ id: 'cabin', name: 'Cabin' }, { id: 'parents', name: 'Parents', shareKey: true, shareClient: true }, { id: 'beach', name: 'Beach' }],
    locks: [
      { id: 'LOCK-FRONT', name: 'Front Door', lockState: 'locked' },
      { id: 'LOCK-SHED', name: 'Shed', accounts: ['main', 'parents'] },
      { id: 'LOCK-CABIN', name: 'Cabin Door', lockState: 'locked', accounts: ['cabin'] },
      { id: 'LOCK-GARAGE', name: 'Garage', accounts: ['cabin', 'parents'] },
      { id: 'LOCK-PARENTS', name: 'Parents Door', lockState: 'locked', accounts: ['parents'] },
    ],
    doorbells: [{ id: 'BELL-PORCH', name: 'Porch', accounts: ['main', 'cabin'] }],
  });
  listenPort = await freePort();
  // Debug lines: a run that changed nothing says so only there.
  await session.start({ platforms: [platform()], debug: true, registrations: { sim, atLeast: 4 } });
  await session.pair(4, 'the bridge, Front Door, Shed and Porch');
}, 120_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

describe('several accounts: migration', () => {
  it('a config without accounts, restarted, makes no grant and no registration; tokens.json stays byte-identical, the UUIDs and aids the same, nothing of accounts is stored', async () => {
    await session.hb?.waitForLog(/Webhooks: 4 registered/);
    const before = { tokens: await tokenFile(), aids: await aids(), grants: sim.stats.grants, writes: writesOf('main'), changes: sim.registrationChanges().length };
    expect(sim.registrations().map((r) => r.url.replace(/^http:\/\/[^/]+/, '')).sort()).toEqual(['/lock-access/doorbell/BELL-PORCH', '/lock-access/lock/LOCK-FRONT', '/lock-access/lock/LOCK-SHED', '/lock-access/user']);
    await session.restart({ platforms: [platform()], debug: true });
    await session.hb?.waitForLog(UNCHANGED_MAIN);
    await paired().reconnect();
    expect({ tokens: await tokenFile(), aids: await aids(), grants: sim.stats.grants, writes: writesOf('main'), changes: sim.registrationChanges().length }).toEqual(before);
    await expect(stat(storage('accounts'))).rejects.toThrow(/ENOENT/);
    const cached = await readFile(join(session.hb?.storagePath ?? '', 'accessories', 'cachedAccessories'), 'utf8');
    expect(cached).toContain(hap.uuid.generate('lock:LOCK-FRONT'));
    expect(cached).toContain(hap.uuid.generate('doorbell:BELL-PORCH'));
  });

  it('adding extra accounts changes nothing of the main account\'s: no grant, no registration, its token file and aids as they were', async () => {
    const before = { tokens: await tokenFile(), aids: await aids(), grants: sim.stats.accounts.main?.grants, writes: writesOf('main'), main: sim.registrations().filter((r) => r.account === 'main') };
    await session.restart({ platforms: [platform(accountEntries())], debug: true });
    // Cabin registers Cabin Door, Garage (its first holder) and its user hook; Parents its door and its user hook.
    await session.eventually(() => Promise.resolve(sim.registrations().length === 9 ? true : undefined), 'nine registrations', 30_000);
    await session.hb?.waitForLog(UNCHANGED_MAIN);
    await paired().reconnect();
    const now = await aids();
    expect({ tokens: await tokenFile(), aids: { 'Front Door': now['Front Door'], Porch: now.Porch }, grants: sim.stats.accounts.main?.grants, writes: writesOf('main'), main: sim.registrations().filter((r) => r.account === 'main') })
      .toEqual({ ...before, aids: { 'Front Door': before.aids['Front Door'], Porch: before.aids.Porch } });
  });
});

describe('several accounts: bad entries', () => {
  it('a malformed id, an id used before, a refresh token entered twice: that entry alone is disabled before it sends anything, with a line naming it', () => {
    expect(logs(/Account 3 of accounts \(id "Beach House", Beach\) is disabled until you fix it in the plugin settings: id/)).toHaveLength(1);
    expect(logs(/Account 4 of accounts \(id "cabin", Beach\) is disabled .*id "cabin" is already used by account 1 of accounts/)).toHaveLength(1);
    expect(logs(/Account 5 of accounts \(id "cabin-copy", Beach\) is disabled .*refreshToken is the one account 1 of accounts \(id "cabin", Cabin\) was linked with/)).toHaveLength(1);
    // The Beach account's tokens were never sent, and the copied Cabin token only by Cabin.
    expect(sim.stats.accounts.beach).toMatchObject({ grants: 0, codeGrants: 0, apiCalls: 0 });
    expect(sim.registrations().filter((r) => /\/a\/(cabin-copy|Beach)/.test(r.url))).toEqual([]);
  });

  it('the same /users/me user as an earlier account: disabled before it registers anything, with a line naming both; its tokens stay in its own storage, unused', async () => {
    const line = await session.hb?.waitForLog(/Again \(again\).*This account is disabled\. It is the same Lock Access user as account Cabin \(cabin\)/);
    expect(line).toBeDefined();
    expect(sim.registrationChanges().filter((c) => c.url?.includes('/a/again/') === true)).toEqual([]);
    expect(JSON.parse((await tokenFile('again')).toString())).toMatchObject({ state: 'linked' });
    // Cabin's registrations are still its own (the same user registering would have replaced them).
    expect(registration('LOCK-CABIN').url).toMatch(/\/a\/cabin\/lock\/LOCK-CABIN$/);
  });

  it('an unknown or disabled account\'s path is 404 at once, without reading the body', async () => {
    for (const path of ['/a/again/lock/LOCK-CABIN', '/a/nowhere/lock/LOCK-FRONT', '/a/Beach%20House/user', '/a/cabin-copy/user']) {
      expect(await answerWithoutBody(path), path).toBe('HTTP/1.1 404 Not Found');
    }
  });
});

describe('several accounts: a shared device', () => {
  it('a lock two accounts hold is one accessory with one registration, its owner\'s (the first holder)', async () => {
    const names = (await paired().accessories()).map((a) => a.name).filter((name) => !name.startsWith('Lock Access Test Bridge')).sort();
    expect(names).toEqual(['Cabin Door', 'Front Door', 'Garage', 'Parents Door', 'Porch', 'Shed']);
    expect(registration('LOCK-GARAGE')).toMatchObject({ account: 'cabin', url: expect.stringMatching(/\/a\/cabin\/lock\/LOCK-GARAGE$/) as unknown });
    expect(registration('BELL-PORCH')).toMatchObject({ account: 'main', url: expect.stringMatching(/\/lock-access\/doorbell\/BELL-PORCH$/) as unknown });
  });

  it('the same event delivered on the main account\'s and Cabin\'s path within 60 s rings once', async () => {
    const porch = await paired().accessory('Porch');
    const press = characteristicId(porch, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    const subscription = await paired().subscribe([press]);
    const main = registration('BELL-PORCH');
    const cabin = sim.accountOf('cabin');
    // A press with nothing identifying it: each delivery is signed afresh, so only the bytes tell.
    const bare = JSON.stringify({ EventType: 'buttonpush', DoorbellID: 'BELL-PORCH' });
    const now = Date.now();
    expect(await post('/doorbell/BELL-PORCH', bare, sim.account.apiKey, main.token, now)).toBe(200);
    expect(await post('/a/cabin/doorbell/BELL-PORCH', bare, cabin.apiKey, registration('LOCK-CABIN').token, now + 1_000)).toBe(200);
    // A later press of its own: once it has rung, the one before it would have too.
    expect(await post('/doorbell/BELL-PORCH', JSON.stringify({ EventType: 'buttonpush', DoorbellID: 'BELL-PORCH', dvrID: 'later-press' }), sim.account.apiKey, main.token)).toBe(200);
    await subscription.waitFor((e) => e.id === press && subscription.events.filter((x) => x.id === press).length === 2, 'two presses');
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(2);
    // The log line may reach this process after the HAP event.
    await session.eventually(() => Promise.resolve(logs(/Porch: doorbell pressed/).length >= 2 ? true : undefined), 'two press lines');
    expect(logs(/Porch: doorbell pressed/)).toHaveLength(2);
    expect(logs(/duplicate doorbell callback ignored/)).toHaveLength(1);
    await subscription.close();
  });
});

describe('several accounts: keys and header secrets per path', () => {
  it('another account\'s signature or header on X\'s path is 401, X\'s on the main path is 401; a header-less status callback on X\'s path is applied', async () => {
    const cabin = sim.accountOf('cabin');
    const main = registration('LOCK-FRONT');
    const parents = registration('LOCK-PARENTS');
    const cabinToken = registration('LOCK-CABIN').token;
    const body = (lockId: string) => JSON.stringify(lockStatus({ lockId, state: 'unlock', user: person({ UserID: 'someone' }) }));
    // Cabin's key on Parents' path; Cabin's key and header on the main path.
    expect(await post('/a/parents/lock/LOCK-PARENTS', body('LOCK-PARENTS'), cabin.apiKey, parents.token)).toBe(401);
    expect(await post('/lock/LOCK-FRONT', body('LOCK-FRONT'), cabin.apiKey, cabinToken)).toBe(401);
    // Parents shares the main account's key: each one's header on the other's path is refused.
    const operation = (lockId: string) => JSON.stringify({ EventType: 'operation', Event: 'unlock', Device: 'lock', LockID: lockId, User: person({ UserID: 'someone' }) });
    expect(await post('/a/parents/lock/LOCK-PARENTS', operation('LOCK-PARENTS'), sim.account.apiKey, main.token)).toBe(401);
    expect(await post('/lock/LOCK-FRONT', operation('LOCK-FRONT'), sim.account.apiKey, parents.token)).toBe(401);
    // A status callback carries no header; well signed on Cabin's path, it is applied.
    const door = await paired().accessory('Cabin Door');
    const current = characteristicId(door, S.LockMechanism.UUID, C.LockCurrentState.UUID);
    expect(await post('/a/cabin/lock/LOCK-CABIN', body('LOCK-CABIN'), cabin.apiKey, null)).toBe(200);
    await session.eventually(async () => ((await paired().readOne(current)).value === C.LockCurrentState.UNSECURED ? true : undefined), 'Cabin Door unlocked in HomeKit');
    expect((await paired().readOne(characteristicId(await paired().accessory('Parents Door'), S.LockMechanism.UUID, C.LockCurrentState.UUID))).value).not.toBe(C.LockCurrentState.UNSECURED);
  });
});

describe('several accounts: one account leaves, another loses its grant', () => {
  it('the owner\'s own user removed from a shared lock (lock_user_remove): Parents registers Shed first, then the main account deletes its own; the accessory keeps its aid', async () => {
    const mark = sim.registrationChanges().length;
    const aid = (await aids()).Shed;
    expect(registration('LOCK-SHED').account).toBe('main');
    await sim.fire('lock-user-remove', { lockId: 'LOCK-SHED', subject: 'me', account: 'main' });
    await session.eventually(() => Promise.resolve(sim.registrations().filter((r) => r.scope === 'LOCK-SHED').map((r) => r.account).join() === 'parents' ? true : undefined), 'Shed registered by Parents alone', 30_000);
    expect(sim.registrationChanges().slice(mark).map((c) => `${c.op} ${c.scope} ${c.account}`)).toEqual(['register LOCK-SHED parents', 'delete LOCK-SHED main']);
    expect((await aids()).Shed).toBe(aid);
  });

  it('a lifecycle notice on Cabin\'s user route: Parents registers Garage first, then Cabin deletes its own; nothing of the main account or Parents changes', async () => {
    const mark = sim.registrationChanges().length;
    const before = { aids: await aids(), main: await tokenFile(), mainWrites: writesOf('main') };
    const results = await sim.fire('user-deleted', { account: 'cabin' });
    expect(results.map((r) => r.status)).toEqual([200]);
    await session.eventually(() => Promise.resolve(sim.registrations().some((r) => r.account === 'cabin') ? undefined : true), 'no registration of Cabin left', 30_000);
    const changes = sim.registrationChanges().slice(mark).map((c) => `${c.op} ${c.scope} ${c.account}`);
    expect(changes.filter((c) => c.includes('LOCK-GARAGE'))).toEqual(['register LOCK-GARAGE parents', 'delete LOCK-GARAGE cabin']);
    expect(changes.filter((c) => !c.endsWith(' cabin') && !c.includes('LOCK-GARAGE'))).toEqual([]);
    expect(registration('LOCK-GARAGE').url).toMatch(/\/a\/parents\/lock\/LOCK-GARAGE$/);
    expect(registration('BELL-PORCH').account).toBe('main');
    // Cabin's tokens are gone; the main account's file is as it was, and no token of Cabin stays.
    await session.eventually(async () => (JSON.parse((await tokenFile('cabin')).toString()) as { state?: string }).state === 'unlinked' ? true : undefined, 'Cabin unlinked in its token file');
    const cabinFile = JSON.parse((await tokenFile('cabin')).toString()) as Record<string, unknown>;
    expect(Object.keys(cabinFile).filter((key) => /^(access|refresh|pending)/i.test(key) && key !== 'refreshTokenLost')).toEqual([]);
    expect(await tokenFile()).toEqual(before.main);
    expect(writesOf('main')).toBe(before.mainWrites);
    // HomeKit: Cabin Door left, Garage kept its aid; Cabin's path is gone.
    await session.eventually(async () => ((await aids())['Cabin Door'] === undefined ? true : undefined), 'Cabin Door gone from HomeKit');
    const after = await aids();
    expect(after.Garage).toBe(before.aids.Garage);
    expect(after.Porch).toBe(before.aids.Porch);
    expect(await answerWithoutBody('/a/cabin/lock/LOCK-GARAGE')).toBe('HTTP/1.1 404 Not Found');
    expect(logs(/\bunlinked\b/i).filter((line) => !line.includes("Cabin (cabin)"))).toEqual([]);
  });

  it('Parents\' invalid_grant puts Parents alone in re-authorization needed: the main account gets no grant, its commands work, no line blames it', async () => {
    const mainGrants = sim.stats.accounts.main?.grants;
    const changes = sim.registrationChanges().length;
    sim.revokeAccount('parents');
    const parentsDoor = characteristicId(await paired().accessory('Parents Door'), S.LockMechanism.UUID, C.LockTargetState.UUID);
    await paired().write(parentsDoor, C.LockTargetState.UNSECURED);
    await session.hb?.waitForLog(/Parents \(parents\): Lock Access needs you to link your account again: The Lock Access service refused the stored refresh token/);
    // The main account's command goes with its own token, at once.
    const front = characteristicId(await paired().accessory('Front Door'), S.LockMechanism.UUID, C.LockTargetState.UUID);
    expect(await paired().write(front, C.LockTargetState.UNSECURED)).toBe(0);
    await session.eventually(() => Promise.resolve(sim.lock('LOCK-FRONT')?.lockState === 'unlocked' ? true : undefined), 'Front Door unlocked at the service');
    expect(sim.stats.accounts.main?.grants).toBe(mainGrants);
    expect(logs(/re-authori[sz]ation|needs you to link/i).filter((l) => !l.includes('Parents (parents)') && !l.includes('Parents Door'))).toEqual([]);
    // Re-authorization needed is no handover: Garage stays with Parents.
    expect(sim.registrationChanges().length).toBe(changes);
    expect(JSON.parse((await tokenFile('parents')).toString())).toMatchObject({ state: 'reauthorizationNeeded' });
  });
});
