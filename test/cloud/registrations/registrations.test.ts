// The registrar's reconcile loop against the simulator:
// exact bodies, reconcile at start-up, deletes of what is no longer wanted, retries, one run at a
// time, and never a crash.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import type { ApiClient } from '../../../src/cloud/http/api.js';
import { discoverDevices, mergeDevices } from '../../../src/cloud/discovery.js';
import { RateLimitedError } from '../../../src/cloud/http/errors.js';
import type { WantedHooks } from '../../../src/cloud/registrations/registrations.js';
import { WEBHOOK_SECRET_FILE } from '../../../src/cloud/registrations/webhook-secret.js';
import { DOORBELL_NOTIFICATION_TYPES, LOCK_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES } from '../../../src/settings.js';
import type { ClientEvent } from '../cloud-fixture.js';
import { describeResend } from '../../../src/cloud/registrations/registration-report.js';
import { ALL_HOOKS, lockIds, manualTimers, registrarTestBed } from './registrar-harness.js';

describe('spec "Webhook registration" against the simulator', () => {
  const bed = registrarTestBed();

  it('"exact bodies of the spec": the simulator records url, POST, clientID, our header and token, all types', async () => {
    const { registrar: r, secret } = await bed.registrar();
    const report = await r.reconcile(ALL_HOOKS);
    expect(report.failed).toEqual([]);
    expect(report.registered.sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-000', 'lock:LOCK-001', 'user']);
    const byScope = Object.fromEntries(bed.fx.sim.registrations().map((reg) => [`${reg.kind}:${reg.scope}`, reg]));
    const common = { method: 'POST', clientID: bed.fx.sim.account.clientId, header: 'x-lock-access-token', token: secret.token };
    expect(byScope['lock:LOCK-000']).toMatchObject({ ...common, url: `${bed.fx.target.url}/lock/LOCK-000`, notificationTypes: [...LOCK_NOTIFICATION_TYPES] });
    expect(byScope['doorbell:BELL-1']).toMatchObject({ ...common, url: `${bed.fx.target.url}/doorbell/BELL-1`, notificationTypes: [...DOORBELL_NOTIFICATION_TYPES] });
    expect(byScope[`user:${bed.fx.sim.account.userId}`]).toMatchObject({ ...common, url: `${bed.fx.target.url}/user`, notificationTypes: [...USER_NOTIFICATION_TYPES] });
    expect(secret.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The token is a secret: it is in no log line.
    expect(bed.fx.log.lines.some((line) => line.message.includes(String(secret.token)))).toBe(false);
    // Callbacks now reach the target with our header.
    const results = await bed.fx.sim.fire('lock', { lockId: 'LOCK-000' });
    expect(results.length).toBeGreaterThan(0);
    await bed.fx.sim.idle();
    expect(bed.fx.target.received.some((cb) => cb.path === '/lock-access/lock/LOCK-000' && cb.headers['x-lock-access-token'] === secret.token)).toBe(true);
  });

  it('"reconcile at start-up": a second start with nothing changed sends nothing', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    const before = bed.events.filter((e) => e.type === 'start').length;
    const second = await bed.registrar();
    const report = await second.registrar.reconcile(ALL_HOOKS);
    expect(report.registered).toEqual([]);
    expect(report.unchanged).toHaveLength(4);
    expect(bed.events.filter((e) => e.type === 'start').length).toBe(before);
  });

  it('"a registration changed only in its token is re-sent": a token file restored from another backup', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    const restored = { token: 'r'.repeat(43), generation: 7, createdAt: new Date(0).toISOString() };
    await writeFile(bed.fx.storage.file(WEBHOOK_SECRET_FILE), JSON.stringify(restored));
    const second = await bed.registrar();
    expect(second.secret.accepts(first.secret.token)).toBe(false);
    const report = await second.registrar.reconcile(ALL_HOOKS);
    expect(report.registered).toHaveLength(4);
    expect(bed.fx.sim.registrations().every((reg) => reg.token === restored.token)).toBe(true);
  });

  it('a damaged token file: the next start makes a new token and sends every registration again with it at once', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    await writeFile(bed.fx.storage.file(WEBHOOK_SECRET_FILE), '{"token":');
    const second = await bed.registrar();
    expect(second.secret.token).not.toBe(first.secret.token);
    const report = await second.registrar.reconcile(ALL_HOOKS);
    expect(report.registered).toHaveLength(4);
    expect(bed.fx.sim.registrations().every((reg) => reg.token === second.secret.token)).toBe(true);
  });

  it('a token file that cannot be read: nothing is registered with a made-up token, the run says why; once it can be read, nothing needs sending again', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    const file = bed.fx.storage.file(WEBHOOK_SECRET_FILE);
    const text = await readFile(file, 'utf8');
    // A folder in the file's place: a real read error (EISDIR), as EACCES or EIO would be.
    await rm(file);
    await mkdir(file);
    const second = await bed.registrar();
    second.secret.stop();
    const before = bed.events.filter((e) => e.type === 'start').length;
    const refused = await second.registrar.reconcile(ALL_HOOKS);
    expect(refused.failed).toEqual([{ key: '*', error: expect.stringMatching(/webhook-secret\.json cannot be read yet/) as string, reason: expect.objectContaining({ code: 'reason.other' }) as object }]);
    expect(bed.events.filter((e) => e.type === 'start').length).toBe(before);
    await rm(file, { recursive: true });
    await writeFile(file, text);
    const third = await bed.registrar();
    expect(third.secret.token).toBe(first.secret.token);
    const report = await third.registrar.reconcile(ALL_HOOKS);
    expect(report.registered).toEqual([]);
    expect(report.unchanged).toHaveLength(4);
  });

  it('"a lock removed from config is deleted on the next start" (DELETE /webhook/{lockID}/{clientID})', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    const next = await bed.registrar();
    const report = await next.registrar.reconcile({ locks: ['LOCK-000'], doorbells: [], user: true });
    expect(report.deleted.sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-001']);
    expect(bed.fx.sim.registrations().map((reg) => `${reg.kind}:${reg.scope}`).sort()).toEqual(['lock:LOCK-000', `user:${bed.fx.sim.account.userId}`]);
    expect(bed.fx.sim.stats.byRoute['DELETE /api/webhook/:lockID/:clientID']).toBe(1);
    expect(bed.fx.sim.stats.byRoute['DELETE /api/webhook/doorbell/:doorbellID/:clientID']).toBe(1);
    // Deleted registrations deliver to nobody.
    expect(await bed.fx.sim.send({ EventType: 'operation', Event: 'lock', LockID: 'LOCK-001' }, { lockId: 'LOCK-001' })).toEqual([]);
  });

  it('"hidden excludes": a lock marked hidden in the config is not registered, and its old registration is deleted', async () => {
    const config = { locks: [{ id: 'LOCK-000', doorSensor: false, hidden: false }, { id: 'LOCK-001', doorSensor: false, hidden: false }], doorbells: [] };
    const wantedFrom = (devices: ReturnType<typeof mergeDevices>): WantedHooks => ({ locks: devices.locks.map((l) => l.id), doorbells: devices.doorbells.map((d) => d.id), user: false });
    const first = await bed.registrar();
    await first.registrar.reconcile(wantedFrom(mergeDevices(config, await discoverDevices(bed.fx.client))));
    expect(bed.fx.sim.registrations().map((reg) => reg.scope).sort()).toEqual(['BELL-1', 'LOCK-000', 'LOCK-001', 'LOCK-002']);
    const hidden = { ...config, locks: [config.locks[0], { id: 'LOCK-001', doorSensor: false, hidden: true }].filter((l) => l !== undefined) };
    const next = await bed.registrar();
    const report = await next.registrar.reconcile(wantedFrom(mergeDevices(hidden, await discoverDevices(bed.fx.client))));
    expect(report.deleted).toEqual(['lock:LOCK-001']);
    expect(bed.fx.sim.registrations().map((reg) => reg.scope).sort()).toEqual(['BELL-1', 'LOCK-000', 'LOCK-002']);
  });

  it('"a 404 on delete counts as deleted"', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile({ locks: ['LOCK-000', 'LOCK-002'], doorbells: [], user: false });
    bed.fx.sim.removeLock('LOCK-002'); // the service forgot the lock: DELETE answers 404
    const report = await first.registrar.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    expect(report.deleted).toEqual(['lock:LOCK-002']);
    expect(report.failed).toEqual([]);
    expect(first.registrar.status().map((s) => s.id)).toEqual(['LOCK-000']);
  });

  it('"5xx retried with back-off": two 503s, then success, all registered in one run', async () => {
    const { registrar: r } = await bed.registrar();
    bed.fx.sim.faults.failNext(2, 503);
    const report = await r.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    expect(report.failed).toEqual([]);
    expect(bed.fx.sim.registrations()).toHaveLength(1);
    expect(bed.events.filter((e) => e.type === 'sleep-start').length).toBeGreaterThanOrEqual(2);
  });

  it('"a few attempts, then recorded as the last error and retried on the next reconcile by a timer"', async () => {
    const { timers, pending } = manualTimers();
    const { registrar: r } = await bed.registrar({ timers });
    bed.fx.sim.faults.failNext(4, 503); // DEFAULT_RETRY.maxAttempts is 4
    const report = await r.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    expect(report.failed.map((f) => f.key)).toEqual(['lock:LOCK-000']);
    const [status] = r.status();
    expect(status).toMatchObject({ state: 'failed', lastSuccessAt: undefined });
    expect(status?.lastError).toMatch(/503/);
    expect(bed.fx.log.lines.some((line) => line.level === 'warn' && line.message.includes('1 failed'))).toBe(true);
    expect(pending).toHaveLength(1);
    const [timer] = pending;
    expect(timer?.ms).toBeGreaterThanOrEqual(15_000);
    // The timer fires: the next reconcile registers it.
    pending.splice(0);
    timer?.callback();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await r.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    expect(bed.fx.sim.registrations()).toHaveLength(1);
    expect(r.status()[0]).toMatchObject({ state: 'registered', lastError: undefined });
    // With everything confirmed, the next wake-up is the daily re-registration.
    expect(pending.at(-1)?.ms).toBeGreaterThan(23 * 60 * 60 * 1000);
  });

  it('"network errors retried": a dropped connection is retried', async () => {
    const { registrar: r } = await bed.registrar();
    bed.fx.sim.faults.dropNext(1, 'POST /webhook/:lockID');
    const report = await r.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    expect(report.failed).toEqual([]);
    expect(bed.events.filter((e) => e.type === 'start' && e.method === 'POST')).toHaveLength(2);
  });

  it('"reconcile is serialised": calls made while one runs merge into one run with the latest wish', async () => {
    const { registrar: r } = await bed.registrar();
    const a = r.reconcile({ locks: ['LOCK-000'], doorbells: [], user: false });
    const b = r.reconcile({ locks: ['LOCK-001'], doorbells: [], user: false });
    const c = r.reconcile({ locks: ['LOCK-002'], doorbells: [], user: false });
    expect(b).toBe(c);
    await Promise.all([a, b, c]);
    expect(bed.fx.sim.registrations().map((reg) => reg.scope)).toEqual(['LOCK-002']);
  });

  it('"nothing crashes it": authorization lost ends the run quietly, with a plain warning, no timer and no unhandled rejection', async () => {
    const { timers, pending } = manualTimers();
    const { registrar: r } = await bed.registrar({ timers });
    const stored = JSON.parse((await bed.fx.tokenStorage.readText('tokens.json')) ?? '{}') as { refreshToken?: string };
    if (stored.refreshToken) bed.fx.sim.revokeRefreshToken(stored.refreshToken);
    bed.fx.sim.revokeAccessTokens();
    const report = await r.reconcile(ALL_HOOKS);
    expect(report.authorizationLost).toBe(true);
    expect(report.registered).toEqual([]);
    expect(bed.fx.sim.registrations()).toEqual([]);
    expect(pending).toEqual([]);
    expect(bed.fx.log.lines.some((line) => line.level === 'warn' && line.message.includes('link it again'))).toBe(true);
    // The run stopped at the first refusal instead of trying every scope.
    expect(bed.events.filter((e) => e.type === 'start').length).toBeLessThanOrEqual(8);
  });

  it('"nothing crashes it": a client failing with unexpected errors yields a report, never a rejection', async () => {
    const { timers, pending } = manualTimers();
    const broken: ApiClient = { request: () => Promise.reject(new TypeError('boom')) };
    const { registrar: r } = await bed.registrar({ client: broken, timers });
    const report = await r.reconcile(ALL_HOOKS);
    expect(report.failed.map((f) => f.error)).toEqual(['boom', 'boom', 'boom', 'boom']);
    expect(pending).toHaveLength(1);
    r.stop();
    expect(pending).toHaveLength(0);
  });

  it('"100 locks register in seconds, 429s honoured": latency 50 ms and a burst of 429s, all registered in the end', async () => {
    await bed.restart({ locks: lockIds(100).map((id) => ({ id })), latencyMs: 50 });
    const { registrar: r } = await bed.registrar();
    bed.fx.sim.faults.rateLimitNext(20, 1, 'POST /webhook/:lockID');
    const report = await r.reconcile({ locks: lockIds(100), doorbells: [], user: false });
    expect(report.failed).toEqual([]);
    expect(report.registered).toHaveLength(100);
    expect(bed.fx.sim.registrations()).toHaveLength(100);
    const rateLimited = bed.events.filter((e): e is ClientEvent => e.type === 'error' && (e).error instanceof RateLimitedError);
    expect(rateLimited).toHaveLength(20);
    expect(bed.events.filter((e) => e.type === 'start')).toHaveLength(120);
    // Retry-After (1 s) honoured: after the first 429, no call starts before a wait of at least 1 s ends.
    const firstLimited = bed.events.findIndex((e) => e.type === 'error');
    const firstPauseEnd = bed.events.findIndex((e, i) => i > firstLimited && e.type === 'sleep-end' && e.ms >= 1_000);
    expect(firstPauseEnd).toBeGreaterThan(firstLimited);
    expect(bed.events.slice(firstLimited, firstPauseEnd).some((e) => e.type === 'start')).toBe(false);
    // Bounded concurrency: never more than 8 calls in flight.
    let inFlight = 0;
    let peak = 0;
    for (const e of bed.events) {
      if (e.type === 'start') peak = Math.max(peak, ++inFlight);
      if (e.type === 'ok' || e.type === 'error') inFlight--;
    }
    expect(peak).toBeLessThanOrEqual(8);
    expect(peak).toBeGreaterThan(1);
  });
});

describe('sending every registration again (the service may have lost them)', () => {
  const bed = registrarTestBed();

  it('a reconcile trusts the ledger and sends nothing, so lost registrations stay lost; sendAllAgain sends every one, current or not', async () => {
    const { registrar: r } = await bed.registrar();
    await r.reconcile(ALL_HOOKS);
    expect(bed.fx.sim.loseRegistrations()).toBe(4);
    const reconciled = await r.reconcile(ALL_HOOKS);
    expect(reconciled.registered).toEqual([]);
    expect(bed.fx.sim.registrations()).toEqual([]);
    const report = await r.sendAllAgain('events are not arriving');
    expect(report.registered.sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-000', 'lock:LOCK-001', 'user']);
    expect(bed.fx.sim.registrations().map((reg) => `${reg.kind}:${reg.scope}`).sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-000', 'lock:LOCK-001', `user:${bed.fx.sim.account.userId}`]);
    expect(describeResend(report)).toEqual({ code: 'resend.confirmed', params: { confirmed: 4 }, text: 'every webhook registration was sent again (4 confirmed)' });
    // Only that run: the next reconcile trusts the ledger again.
    expect((await r.reconcile(ALL_HOOKS)).registered).toEqual([]);
  });

  it('before the first reconcile it sends nothing itself, and the first reconcile then sends everything', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    bed.fx.sim.loseRegistrations();
    const { registrar: r } = await bed.registrar();
    expect((await r.sendAllAgain('the public address changed')).skipped).toBe(true);
    expect((await r.reconcile(ALL_HOOKS)).registered).toHaveLength(4);
    expect(bed.fx.sim.registrations()).toHaveLength(4);
  });
});
