// The pure reconcile plan ("register what is wanted, DELETE ... what is no longer wanted").
import { describe, expect, it } from 'vitest';

import { desiredRegistrations, nextRefreshAt, planReconcile, REREGISTER_AFTER_MS } from '../../../src/cloud/registrations/registration-plan.js';
import { DOORBELL_NOTIFICATION_TYPES, LOCK_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES } from '../../../src/settings.js';
import { confirmed, context, NOW } from './registration-entries.js';

describe('spec "Webhook registration": one registration per wanted scope', () => {
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
});

describe('reconcile plan (register what differs or is a day old, delete what is not wanted)', () => {
  const wantedAll = desiredRegistrations({ locks: ['L1'], doorbells: ['D1'], user: true }, context);

  it('"send all again": a confirmed, current and fresh registration is sent too (the service may have lost it); a not-wanted one is still deleted', () => {
    const plan = planReconcile(wantedAll.filter((d) => d.key === 'lock:L1'), [confirmed({ kind: 'lock', id: 'L1' }), confirmed({ kind: 'lock', id: 'GONE' })], NOW, REREGISTER_AFTER_MS, true);
    expect(plan.unchanged).toEqual([]);
    expect(plan.actions.map((a) => (a.op === 'register' ? [a.op, a.desired.key, a.reason] : [a.op, a.reason]))).toEqual([
      ['register', 'lock:L1', 'sent again'],
      ['delete', 'not wanted'],
    ]);
  });

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
