import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { LEDGER_FILE, type LedgerEntry, RegistrationLedger } from '../../src/cloud/registration-ledger.js';
import { desiredRegistrations, nextRefreshAt, planReconcile, REREGISTER_AFTER_MS } from '../../src/cloud/registration-plan.js';
import { deletePath, registerPath, registrationBody } from '../../src/cloud/registrations.js';
import { DOORBELL_NOTIFICATION_TYPES, LOCK_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';

const context = { publicUrl: 'https://home.example.net/lock-access/', clientId: 'client-1', token: { generation: 1, fingerprint: 'aaaa' } };
const NOW = 1_800_000_000_000;

function confirmed(overrides: Partial<LedgerEntry> & Pick<LedgerEntry, 'kind' | 'id'>): LedgerEntry {
  const desired = desiredRegistrations({ locks: overrides.kind === 'lock' ? [overrides.id] : [], doorbells: overrides.kind === 'doorbell' ? [overrides.id] : [], user: overrides.kind === 'user' }, context)[0];
  if (!desired) throw new Error('no desired registration');
  return {
    clientId: desired.clientId,
    url: desired.url,
    types: [...desired.types],
    tokenGeneration: desired.tokenGeneration,
    tokenFingerprint: desired.tokenFingerprint,
    state: 'registered',
    lastSuccessAt: NOW - 1_000,
    ...overrides,
  };
}

describe('spec "Webhook registration": exact bodies and paths', () => {
  it('one registration per wanted lock, doorbell and the user, with callback URLs under publicUrl', () => {
    const desired = desiredRegistrations({ locks: ['L1', 'L1', 'L 2'], doorbells: ['D1'], user: true }, context);
    expect(desired.map((d) => [d.key, d.url])).toEqual([
      ['lock:L1', 'https://home.example.net/lock-access/lock/L1'],
      ['lock:L 2', 'https://home.example.net/lock-access/lock/L%202'],
      ['doorbell:D1', 'https://home.example.net/lock-access/doorbell/D1'],
      ['user', 'https://home.example.net/lock-access/user'],
    ]);
  });

  it('"complete notificationTypes per kind": all five lock, all three doorbell, both user values', () => {
    const desired = desiredRegistrations({ locks: ['L1'], doorbells: ['D1'], user: true }, context);
    expect(desired.map((d) => d.types)).toEqual([LOCK_NOTIFICATION_TYPES, DOORBELL_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES]);
    expect([...LOCK_NOTIFICATION_TYPES].sort()).toEqual(['accessmgmt', 'battery', 'configuration', 'operation', 'systemstatus']);
  });

  it('body = url, method POST, clientID, header x-lock-access-token, token, notificationTypes', () => {
    const [lock] = desiredRegistrations({ locks: ['L1'], doorbells: [], user: false }, context);
    if (!lock) throw new Error('missing');
    expect(registrationBody(lock, 'secret-token')).toEqual({
      url: 'https://home.example.net/lock-access/lock/L1',
      method: 'POST',
      clientID: 'client-1',
      header: 'x-lock-access-token',
      token: 'secret-token',
      notificationTypes: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'],
    });
  });

  it('register and DELETE paths of the spec, ids escaped', () => {
    expect(registerPath('lock', 'L/1')).toBe('/webhook/L%2F1');
    expect(registerPath('doorbell', 'D1')).toBe('/webhook/doorbell/D1');
    expect(registerPath('user', '')).toBe('/webhook/user');
    expect(deletePath('lock', 'L1', 'c 1')).toBe('/webhook/L1/c%201');
    expect(deletePath('doorbell', 'D1', 'c1')).toBe('/webhook/doorbell/D1/c1');
    expect(deletePath('user', '', 'c1')).toBe('/webhook/user/c1');
  });
});

describe('design 5: reconcile plan (register what differs or is a day old, delete what is not wanted)', () => {
  const wantedAll = desiredRegistrations({ locks: ['L1'], doorbells: ['D1'], user: true }, context);

  it('a new scope is registered; a confirmed, current and fresh one is left alone', () => {
    const plan = planReconcile(wantedAll, [confirmed({ kind: 'lock', id: 'L1' })], NOW);
    expect(plan.unchanged).toEqual(['lock:L1']);
    expect(plan.actions.map((a) => (a.op === 'register' ? [a.op, a.desired.key, a.reason] : [a.op]))).toEqual([
      ['register', 'user', 'new'],
      ['register', 'doorbell:D1', 'new'],
    ]);
  });

  it.each([
    ['url changed', { url: 'https://old.example.net/lock/L1' }],
    ['types changed', { types: ['operation'] }],
    ['token changed', { tokenGeneration: 0 }],
    ['token changed', { tokenFingerprint: 'bbbb' }],
    ['client changed', { clientId: 'client-0' }],
    ['older than a day', { lastSuccessAt: NOW - REREGISTER_AFTER_MS }],
    ['older than a day', { lastSuccessAt: NOW + 2 * 60 * 60 * 1000 }],
    ['unconfirmed', { state: 'registering' as const }],
    ['unconfirmed', { state: 'failed' as const }],
    ['unconfirmed', { state: 'deleting' as const }],
  ])('"repeated when anything differs": %s', (reason, change) => {
    const plan = planReconcile(wantedAll.filter((d) => d.key === 'lock:L1'), [confirmed({ kind: 'lock', id: 'L1', ...change })], NOW);
    expect(plan.actions).toHaveLength(1);
    expect(plan.actions[0]).toMatchObject({ op: 'register', reason });
  });

  it('types in another order are the same registration', () => {
    const plan = planReconcile(wantedAll.filter((d) => d.key === 'lock:L1'), [confirmed({ kind: 'lock', id: 'L1', types: [...LOCK_NOTIFICATION_TYPES].reverse() })], NOW);
    expect(plan.actions).toEqual([]);
  });

  it('"registrations no longer wanted are deleted", whatever their state', () => {
    const ledger = [
      confirmed({ kind: 'lock', id: 'GONE' }),
      confirmed({ kind: 'doorbell', id: 'OLD', state: 'failed' }),
      confirmed({ kind: 'user', id: '', state: 'deleting' }),
    ];
    const plan = planReconcile([], ledger, NOW);
    expect(plan.actions.map((a) => (a.op === 'delete' ? `${a.entry.kind}:${a.entry.id}` : 'register'))).toEqual(['lock:GONE', 'doorbell:OLD', 'user:']);
  });

  it('the maintenance wake-up is when the oldest confirmation turns a day old', () => {
    const ledger = [confirmed({ kind: 'lock', id: 'A', lastSuccessAt: 5_000 }), confirmed({ kind: 'lock', id: 'B', lastSuccessAt: 1_000 }), confirmed({ kind: 'lock', id: 'C', state: 'failed', lastSuccessAt: 0 })];
    expect(nextRefreshAt(ledger)).toBe(1_000 + REREGISTER_AFTER_MS);
    expect(nextRefreshAt([])).toBeUndefined();
  });
});

describe('design 5: the ledger in storage (webhooks.json)', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('round-trips entries and coalesces a burst of flushes into few writes, each caller seeing its change on disk', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    let writes = 0;
    const storage = new (class extends Storage {
      override write(name: string, value: unknown): Promise<void> {
        writes++;
        return super.write(name, value);
      }
    })(dir);
    const ledger = await RegistrationLedger.load(storage, () => undefined);
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      ledger.set(confirmed({ kind: 'lock', id: `L${i}` }));
      flushes.push(ledger.flush());
    }
    await Promise.all(flushes);
    expect(writes).toBe(2);
    const again = await RegistrationLedger.load(storage, () => undefined);
    expect(again.size).toBe(50);
    expect(again.get('lock:L49')).toMatchObject({ state: 'registered', url: 'https://home.example.net/lock-access/lock/L49' });
    const text = await readFile(join(dir, LEDGER_FILE), 'utf8');
    expect(text).not.toContain('token"'); // the token itself is never stored, only its fingerprint
  });

  it('a damaged file is reported and treated as empty (everything is registered again)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    const storage = new Storage(dir);
    await storage.ensureDir();
    await writeFile(join(dir, LEDGER_FILE), '{"version":1,"entries":[{"kind":"lo');
    const reasons: string[] = [];
    const ledger = await RegistrationLedger.load(storage, (reason) => reasons.push(reason));
    expect(ledger.size).toBe(0);
    expect(reasons).toHaveLength(1);
  });

  it('erase removes the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    const storage = new Storage(dir);
    const ledger = await RegistrationLedger.load(storage, () => undefined);
    ledger.set(confirmed({ kind: 'user', id: '' }));
    await ledger.flush();
    await ledger.erase();
    expect(await storage.readText(LEDGER_FILE)).toBeUndefined();
  });
});
