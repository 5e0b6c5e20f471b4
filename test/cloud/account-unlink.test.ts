// One unlink for the plugin (the account-deleted callback) and the settings page: it deletes the
// registrations whenever any token can still sign in, otherwise names them as left behind and why;
// it always leaves a tombstone (or says it could not); it never rejects.
import { describe, expect, it } from 'vitest';

import { NO_TOKEN_LEFT, unlinkAccount, type UnlinkRegistrar, type UnlinkTokens } from '../../src/cloud/account-unlink.js';
import type { RegistrationStatus } from '../../src/cloud/registrations/registrations.js';
import { LinkControl } from '../../src/cloud/link-control.js';
import { captureLog } from '../fixtures/token-harness.js';

const known: RegistrationStatus[] = [
  { kind: 'lock', id: 'LOCK-1', url: 'https://home.example/lock-access', state: 'registered', lastSuccessAt: undefined, lastError: undefined },
  { kind: 'user', id: '', url: 'https://home.example/lock-access', state: 'registered', lastSuccessAt: undefined, lastError: undefined },
];

function registrar(calls: string[], outcome: Awaited<ReturnType<UnlinkRegistrar['unlinkAll']>> = { deleted: 2, left: [] }): UnlinkRegistrar & { reconcile: () => Promise<never>; sendAllAgain: () => Promise<never>; addressChanged: () => undefined; status: () => [] } {
  return {
    unlinkAll: () => {
      calls.push('unlinkAll');
      return Promise.resolve(outcome);
    },
    knownRegistrations: () => Promise.resolve(known),
    stop: () => calls.push('stop'),
    reconcile: () => Promise.reject(new Error('not used')),
    addressChanged: () => undefined,
    sendAllAgain: () => Promise.reject(new Error('not used')),
    status: () => [],
  };
}

function tokens(calls: string[], canAuthenticate: boolean, unlinkFails = false): UnlinkTokens {
  return {
    canAuthenticate: () => canAuthenticate,
    unlink: () => {
      calls.push('tombstone');
      return unlinkFails ? Promise.reject(new Error('cannot write tokens.json: no space left on device')) : Promise.resolve();
    },
  };
}

describe('the one unlink', () => {
  it('deletes the registrations first while a token can sign in, then leaves the tombstone', async () => {
    const calls: string[] = [];
    const result = await unlinkAccount(tokens(calls, true), registrar(calls), captureLog());
    expect(calls).toEqual(['unlinkAll', 'stop', 'tombstone']);
    expect(result).toEqual({ left: [] });
  });

  it('with no token that can sign in it sends nothing, names every known registration as left and why, and still leaves the tombstone', async () => {
    const calls: string[] = [];
    const result = await unlinkAccount(tokens(calls, false), registrar(calls), captureLog());
    expect(calls).toEqual(['stop', 'tombstone']);
    expect(result.left.map((row) => [row.kind, row.id, row.lastError])).toEqual([
      ['lock', 'LOCK-1', NO_TOKEN_LEFT],
      ['user', '', NO_TOKEN_LEFT],
    ]);
  });

  it('never rejects: registrations it could not delete and a tombstone it could not write are named', async () => {
    const calls: string[] = [];
    const log = captureLog();
    const left: RegistrationStatus[] = [{ kind: 'lock', id: 'LOCK-1', url: 'https://home.example/lock-access', state: 'deleting', lastSuccessAt: undefined, lastError: 'the service answered 500' }];
    const result = await unlinkAccount(tokens(calls, true, true), registrar(calls, { deleted: 1, left }), log);
    expect(result.left).toEqual(left);
    expect(result.tokensNotSaved).toContain('no space left');
    expect(log.text('error').some((line) => line.includes('Unlink again in the plugin settings'))).toBe(true);
  });

  it('the plugin\'s unlink (account deleted) follows the same rules: without a token that can sign in it deletes nothing and shows what is left', async () => {
    const calls: string[] = [];
    const shown: { lastError?: string | undefined }[][] = [];
    const link = new LinkControl({
      log: captureLog(),
      status: { link: () => undefined, registrations: (rows) => shown.push(rows) },
      newRegistrar: () => registrar(calls),
      tokens: tokens(calls, false),
      converge: () => undefined,
    });
    await link.unlink('the Lock Access account was deleted');
    expect(calls).not.toContain('unlinkAll');
    expect(calls).toContain('tombstone');
    expect(shown.at(-1)?.map((row) => row.lastError)).toEqual([NO_TOKEN_LEFT, NO_TOKEN_LEFT]);
  });
});
