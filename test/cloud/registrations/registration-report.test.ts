// What the registrar reports: one log line per run, and per scope for the status page,
// never the token.
import { describe, expect, it } from 'vitest';

import { emptyReport, logOutcome, type ReconcileReport, registrationStatus } from '../../../src/cloud/registrations/registration-report.js';
import { reasonMessage } from '../../../src/util/reason-messages.js';
import { captureLog } from '../../fixtures/token-harness.js';
import { ALL_HOOKS, registrarTestBed } from './registrar-harness.js';

describe('registration status for the status page', () => {
  const bed = registrarTestBed();

  it('status() lists every scope with url, state and last success, never the token', async () => {
    const { registrar: r, secret } = await bed.registrar();
    await r.reconcile(ALL_HOOKS);
    const status = r.status();
    expect(status).toHaveLength(4);
    expect(status.every((s) => s.state === 'registered' && typeof s.lastSuccessAt === 'string' && s.lastError === undefined)).toBe(true);
    expect(JSON.stringify(status)).not.toContain(secret.token);
  });
});

describe('one log line per reconcile run', () => {
  const report = (change: Partial<ReconcileReport>): ReconcileReport => ({ ...emptyReport(false), ...change });

  it('nothing sent is debug; something registered or deleted is info with the counts', () => {
    const log = captureLog();
    logOutcome(report({ unchanged: ['lock:A'] }), log);
    logOutcome(report({ registered: ['lock:A'], deleted: ['lock:B', 'user'] }), log);
    expect(log.lines).toEqual([
      { level: 'debug', message: 'Webhooks: 0 registered, 0 deleted, 1 unchanged.' },
      { level: 'info', message: 'Webhooks: 1 registered, 2 deleted, 0 unchanged.' },
    ]);
  });

  it('failures are a warning naming the first five, tried again later', () => {
    const log = captureLog();
    const failed = Array.from({ length: 7 }, (_, i) => ({ key: `lock:L${i}`, error: 'down (HTTP 503)', reason: reasonMessage('reason.httpStatus', { status: 503 }) }));
    logOutcome(report({ failed }), log);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]?.level).toBe('warn');
    expect(log.lines[0]?.message).toMatch(/^Webhooks: 0 registered, 0 deleted, 0 unchanged, 7 failed \(tried again later\): lock:L0: down \(HTTP 503\);/);
    expect(log.lines[0]?.message).toContain('lock:L4');
    expect(log.lines[0]?.message).not.toContain('lock:L5');
    expect(log.lines[0]?.message.endsWith('; ...')).toBe(true);
  });

  it('a lost link says what to do; a run cut short by unlink or shutdown is only debug', () => {
    const log = captureLog();
    logOutcome(report({ authorizationLost: true, failed: [{ key: 'lock:A', error: 'x', reason: reasonMessage('reason.other') }] }), log);
    logOutcome(emptyReport(true), log);
    expect(log.lines.map((line) => line.level)).toEqual(['warn', 'debug']);
    expect(log.lines[0]?.message).toContain('link it again in the plugin settings');
  });

  it('ledger states map to what the status page shows, with ISO times', () => {
    const entry = { kind: 'lock' as const, id: 'L1', clientId: 'c', url: 'https://x/lock/L1', types: [], tokenGeneration: 1, tokenFingerprint: 'f' };
    expect(
      registrationStatus([
        { ...entry, state: 'registering' },
        { ...entry, state: 'registered', lastSuccessAt: Date.UTC(2026, 0, 2) },
        { ...entry, state: 'failed', lastError: 'down' },
        { ...entry, state: 'deleting' },
      ]).map((s) => [s.state, s.lastSuccessAt, s.lastError]),
    ).toEqual([
      ['pending', undefined, undefined],
      ['registered', '2026-01-02T00:00:00.000Z', undefined],
      ['failed', undefined, 'down'],
      ['deleting', undefined, undefined],
    ]);
  });
});
