import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { ApiClient } from '../../../src/cloud/http/api.js';
import { LEDGER_FILE, type LedgerEntry } from '../../../src/cloud/registrations/registration-ledger.js';
import { WebhookRegistrar, type WantedHooks } from '../../../src/cloud/registrations/registrations.js';
import { WEBHOOK_SECRET_FILE, WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import { type CloudFixture, startCloudFixture } from '../cloud-fixture.js';
import { tsChildArgs } from '../../harness/ts-child.js';
import { until } from '../../harness/until.js';

const noTimers = { set: () => undefined, clear: () => undefined };

/** The real client until `limit` calls went out; after that every call hangs, as in a process that died. */
function dyingClient(inner: ApiClient, limit: number): { client: ApiClient; sent: () => number } {
  let sent = 0;
  return {
    sent: () => sent,
    client: {
      request(method, path, options) {
        if (sent >= limit) return new Promise(() => undefined);
        sent++;
        return inner.request(method, path, options);
      },
    },
  };
}

async function readLedger(fx: CloudFixture): Promise<LedgerEntry[]> {
  const text = await fx.storage.readText(LEDGER_FILE);
  return text === undefined ? [] : (JSON.parse(text) as { entries: LedgerEntry[] }).entries;
}

describe('a crash in the middle of reconciliation converges on the next start', () => {
  let fx: CloudFixture;

  beforeEach(async () => {
    fx = await startCloudFixture({ locks: ['L0', 'L1', 'L2', 'L3', 'L4'].map((id) => ({ id })) });
  });

  afterEach(async () => {
    await fx.close();
  });

  const make = async (client: ApiClient) =>
    new WebhookRegistrar({
      client,
      storage: fx.storage,
      clientId: fx.sim.account.clientId,
      publicUrl: () => fx.target.url,
      secret: await WebhookSecret.load(fx.storage),
      log: fx.log,
      concurrency: 1,
      timers: noTimers,
    });

  const scopes = () => fx.sim.registrations().map((reg) => reg.scope).sort();

  it('"record an intent before each call": the process dies after two of six calls; the next start finishes the job', async () => {
    const first = await make(fx.client);
    await first.reconcile({ locks: ['L0', 'L1', 'L2'], doorbells: [], user: false });
    expect(scopes()).toEqual(['L0', 'L1', 'L2']);

    // New wish: L1 and L2 go, L3 and L4 come, and the token changed so L0 is re-sent.
    // A damaged token file: the next load makes a new token.
    await writeFile(fx.storage.file(WEBHOOK_SECRET_FILE), '{"token":');
    await WebhookSecret.load(fx.storage);
    const wanted: WantedHooks = { locks: ['L0', 'L3', 'L4'], doorbells: [], user: false };
    const dying = dyingClient(fx.client, 2);
    const crashed = await make(dying.client);
    void crashed.reconcile(wanted);
    // Wait until the two calls went out and the third hangs.
    await until(() => dying.sent() >= 2, 'two calls sent');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(dying.sent()).toBe(2);

    // What the dead process left on disk: every planned call recorded as an intent first.
    const left = await readLedger(fx);
    const states = Object.fromEntries(left.map((entry) => [entry.id, entry.state]));
    expect(Object.values(states).filter((state) => state === 'registering' || state === 'deleting').length).toBeGreaterThanOrEqual(3);
    expect(states.L3 ?? states.L4).toBeDefined();

    // Next start: a fresh registrar over the same storage converges.
    const next = await make(fx.client);
    const report = await next.reconcile(wanted);
    expect(report.failed).toEqual([]);
    expect(scopes()).toEqual(['L0', 'L3', 'L4']);
    const current = (await WebhookSecret.load(fx.storage)).token;
    expect(fx.sim.registrations().every((reg) => reg.token === current)).toBe(true);
    expect((await readLedger(fx)).map((entry) => [entry.id, entry.state])).toEqual([['L0', 'registered'], ['L3', 'registered'], ['L4', 'registered']]);
    // And once converged, another start sends nothing.
    const calls = fx.sim.stats.apiCalls;
    await (await make(fx.client)).reconcile(wanted);
    expect(fx.sim.stats.apiCalls).toBe(calls);
  });

  it('"treat unknown as must re-send": a ledger left with intents (registering, deleting) is re-sent and re-deleted', async () => {
    const secret = await WebhookSecret.load(fx.storage);
    const base = { clientId: fx.sim.account.clientId, types: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'], tokenGeneration: secret.generation, tokenFingerprint: secret.fingerprint, lastAttemptAt: 1 };
    // L1's DELETE may or may not have reached the service: here it did not.
    await (await make(fx.client)).reconcile({ locks: ['L1'], doorbells: [], user: false });
    await fx.storage.write(LEDGER_FILE, {
      version: 1,
      entries: [
        { ...base, kind: 'lock', id: 'L0', url: `${fx.target.url}/lock/L0`, state: 'registering' },
        { ...base, kind: 'lock', id: 'L1', url: `${fx.target.url}/lock/L1`, state: 'deleting', lastSuccessAt: Date.now() },
      ],
    });
    const report = await (await make(fx.client)).reconcile({ locks: ['L0'], doorbells: [], user: false });
    expect(report.registered).toEqual(['lock:L0']);
    expect(report.deleted).toEqual(['lock:L1']);
    expect(scopes()).toEqual(['L0']);
  });

  it('"a child process killed mid-reconcile": the next start converges', async () => {
    await fx.close();
    const ids = Array.from({ length: 10 }, (_, i) => `K${i}`);
    fx = await startCloudFixture({ locks: ids.map((id) => ({ id })), latencyMs: 150 });
    const here = fileURLToPath(new URL('.', import.meta.url));
    // One process (plain node, not a CLI that forks): SIGKILL ends the registrar itself.
    const child = spawn(process.execPath, await tsChildArgs(join(here, 'registrations-crash-child.ts')), {
      env: {
        ...process.env,
        CHILD_STORAGE: fx.storage.dir,
        CHILD_TOKENS: `${fx.storage.dir}-child-tokens`,
        SIM_AUTH: fx.sim.authUrl,
        SIM_BASE: fx.sim.baseUrl,
        SIM_API_KEY: fx.sim.account.apiKey,
        SIM_CLIENT_ID: fx.sim.account.clientId,
        SIM_CLIENT_SECRET: fx.sim.account.clientSecret,
        SIM_REFRESH_TOKEN: fx.sim.issueRefreshToken(),
        PUBLIC_URL: fx.target.url,
        LOCKS: ids.join(','),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => {
      resolve();
    }));
    try {
      const posts = () => fx.sim.stats.byRoute['POST /api/webhook/:lockID'] ?? 0;
      await until(() => posts() >= 3, 'three registrations posted');
      expect(posts()).toBeGreaterThanOrEqual(3);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const left = await readLedger(fx);
    expect(left.some((entry) => entry.state === 'registering')).toBe(true);
    expect(fx.sim.registrations().length).toBeLessThan(10);

    const report = await (await make(fx.client)).reconcile({ locks: ids, doorbells: [], user: false });
    expect(report.failed).toEqual([]);
    expect(scopes()).toEqual([...ids].sort());
    expect((await readLedger(fx)).every((entry) => entry.state === 'registered')).toBe(true);
  });
});
