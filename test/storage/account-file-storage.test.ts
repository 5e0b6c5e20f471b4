// An extra account's one file: its tokens, its header secret and its ledger under keys of their
// own, each part writing its key without losing the others'.
import { readdir, readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { accountStorage } from '../../src/accounts/account-storage.js';
import { RegistrationLedger } from '../../src/cloud/registrations/registration-ledger.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import { TokenStore } from '../../src/storage/token-file.js';
import { Storage } from '../../src/storage.js';
import { tempDirEachTest } from '../fixtures/token-harness.js';

const linked = { version: 1 as const, rotations: 1, state: 'linked' as const, linkedAt: 1, knownSeedHashes: [], refreshToken: 'r1' };
const entry = { kind: 'lock' as const, id: 'L2', clientId: 'c', url: 'https://x/a/cabin/lock/L2', types: ['lock'], tokenGeneration: 1, tokenFingerprint: 'f', state: 'registered' as const, lastSuccessAt: 1 };

describe('an extra account\'s tokens.json', () => {
  const temp = tempDirEachTest();
  const cabin = () => accountStorage(Storage.under(temp.dir), 'cabin');
  const file = () => join(temp.dir, 'lock-access', 'accounts', 'cabin', 'tokens.json');
  const whole = async () => JSON.parse(await readFile(file(), 'utf8')) as Record<string, unknown>;

  it('holds the tokens, the header secret and the ledger, and no other file of the account', async () => {
    const storage = cabin();
    const tokens = new TokenStore(storage);
    const written = await tokens.locked(() => tokens.write(linked, undefined));
    const secret = await WebhookSecret.load(storage);
    const ledger = await RegistrationLedger.load(storage, () => undefined);
    ledger.set(entry);
    await ledger.flush();
    expect(await whole()).toMatchObject({ state: 'linked', refreshToken: 'r1', headerSecret: { token: secret.token }, registrations: { version: 1, entries: [entry] } });
    expect((await readdir(join(temp.dir, 'lock-access', 'accounts', 'cabin'))).filter((name) => !name.endsWith('.lock'))).toEqual(['tokens.json']);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    // The token store reads its record alone, and its next write keeps the secret and the ledger.
    expect(await tokens.read()).toEqual(written);
    await tokens.locked(() => tokens.write({ ...written, refreshToken: 'r2' }, written));
    expect(await whole()).toMatchObject({ refreshToken: 'r2', headerSecret: { token: secret.token }, registrations: { entries: [entry] } });
    // Read again after a restart: the same secret and ledger.
    expect((await WebhookSecret.load(cabin())).token).toBe(secret.token);
    expect((await RegistrationLedger.load(cabin(), () => undefined)).all()).toEqual([entry]);
  });

  it('a header secret made before the account is linked is kept by the link, and the tokens\' removal keeps it', async () => {
    const storage = cabin();
    const secret = await WebhookSecret.load(storage);
    const tokens = new TokenStore(storage);
    expect(await tokens.read()).toBeUndefined();
    const written = await tokens.locked(() => tokens.write(linked, undefined));
    expect(written.generation).toBe(1);
    await tokens.remove();
    expect(await tokens.read()).toBeUndefined();
    expect(Object.keys(await whole())).toEqual(['headerSecret']);
    expect((await whole()).headerSecret).toMatchObject({ token: secret.token });
    await (await RegistrationLedger.load(storage, () => undefined)).erase();
    expect(Object.keys(await whole())).toEqual(['headerSecret']);
    expect((await whole()).headerSecret).toMatchObject({ token: secret.token });
  });

  it('a damaged file reads as damaged to the tokens and is never overwritten by the secret or the ledger', async () => {
    await mkdir(join(temp.dir, 'lock-access', 'accounts', 'cabin'), { recursive: true });
    await writeFile(file(), '{"version": 1, "refresh');
    await expect(new TokenStore(cabin()).read()).rejects.toMatchObject({ damaged: true });
    const ledger = await RegistrationLedger.load(cabin(), () => undefined);
    ledger.set(entry);
    await expect(ledger.flush()).rejects.toThrow(/not valid JSON/);
    expect(await readFile(file(), 'utf8')).toBe('{"version": 1, "refresh');
  });

  it('the main account keeps its files of its own, as before', async () => {
    const root = Storage.under(temp.dir);
    expect(accountStorage(root, 'main')).toBe(root);
    await WebhookSecret.load(root);
    expect(await readdir(join(temp.dir, 'lock-access'))).toEqual(['webhook-secret.json']);
  });
});
