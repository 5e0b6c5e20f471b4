// Unlink against the simulator ("User unlink ... deletes every registration").
import { describe, expect, it } from 'vitest';

import { LEDGER_FILE } from '../../../src/cloud/registrations/registration-ledger.js';
import { DEFAULT_RETRY } from '../../../src/cloud/http/retry.js';
import { ALL_HOOKS, registrarTestBed } from './registrar-harness.js';

describe('unlinkAll deletes every registration', () => {
  const bed = registrarTestBed();

  it('"unlinkAll deletes everything and callbacks stop": sim.send delivers to nobody, the ledger is gone', async () => {
    const { registrar: r } = await bed.registrar();
    await r.reconcile(ALL_HOOKS);
    await r.unlinkAll();
    expect(bed.fx.sim.registrations()).toEqual([]);
    expect(bed.fx.sim.stats.byRoute['DELETE /api/webhook/user/:clientID']).toBe(1);
    expect(await bed.fx.sim.send({ EventType: 'operation', Event: 'lock', LockID: 'LOCK-000' }, { lockId: 'LOCK-000', user: true })).toEqual([]);
    expect(await bed.fx.storage.readText(LEDGER_FILE)).toBeUndefined();
    expect(r.status()).toEqual([]);
  });

  it('"unlinkAll" also deletes a user registration the ledger does not know about', async () => {
    const other = await bed.registrar();
    await other.registrar.reconcile({ locks: [], doorbells: [], user: true });
    await bed.fx.storage.remove(LEDGER_FILE);
    const fresh = await bed.registrar();
    await fresh.registrar.unlinkAll();
    expect(bed.fx.sim.registrations()).toEqual([]);
  });
});

describe('an unlink made by another process (the settings UI) while this one runs', () => {
  const bed = registrarTestBed();

  it('a reconcile with nothing to do does not write its own list back over the deleted one', async () => {
    const { registrar: running } = await bed.registrar();
    await running.reconcile(ALL_HOOKS);
    const { registrar: settingsUi } = await bed.registrar();
    await settingsUi.unlinkAll();
    expect(await bed.fx.storage.readText(LEDGER_FILE)).toBeUndefined();
    // The running plugin's reconcile, from before it noticed the unlink: all current in its memory.
    await running.reconcile(ALL_HOOKS);
    expect(await bed.fx.storage.readText(LEDGER_FILE)).toBeUndefined();
    // Linked again: a fresh registrar reads what is on disk and registers everything.
    const { registrar: linkedAgain } = await bed.registrar();
    await linkedAgain.reconcile(ALL_HOOKS);
    expect(bed.fx.sim.registrations()).toHaveLength(4);
  });
});

describe('registrations that could not be deleted are kept for the next link', () => {
  const bed = registrarTestBed();

  it('a delete that keeps failing stays in the ledger with its error, with a warning; the rest are gone', async () => {
    const { registrar: r } = await bed.registrar();
    await r.reconcile(ALL_HOOKS);
    // Every attempt for one lock fails.
    bed.fx.sim.faults.failNext(DEFAULT_RETRY.maxAttempts, 503, `DELETE /webhook/LOCK-001/${bed.fx.sim.account.clientId}`);
    const unlinker = await bed.registrar();
    await unlinker.registrar.unlinkAll();
    expect(bed.fx.sim.registrations().map((reg) => reg.scope)).toEqual(['LOCK-001']);
    const left = JSON.parse((await bed.fx.storage.readText(LEDGER_FILE)) ?? '{}') as { entries: { id: string; state: string; lastError?: string }[] };
    expect(left.entries).toHaveLength(1);
    expect(left.entries[0]).toMatchObject({ id: 'LOCK-001', state: 'deleting', lastError: expect.stringContaining('503') as string });
    expect(bed.fx.log.text('warn').some((line) => line.startsWith('Unlinked, but 1 webhook registration(s) could not be deleted'))).toBe(true);
  });
});
