// no path from a callback, a timer or the settings UI rejects unhandled when the
// disk fails. Storage failures are injected into every unlink and token-write path; each ends in a
// log line or an answer its caller handles, and the process sees no unhandled rejection.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { WebhookRegistrar } from '../../src/cloud/registrations/registrations.js';
import { TokenManager } from '../../src/cloud/tokens/token-manager.js';
import { TOKENS_FILE } from '../../src/storage/token-file.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import { LinkControl } from '../../src/cloud/link-control.js';
import { Storage, StorageError } from '../../src/storage.js';
import type { Account } from '../../src/settings-ui/account-input.js';
import { AccountLink } from '../../src/settings-ui/account-link.js';
import { CloudSession } from '../../src/settings-ui/cloud-session.js';
import { captureLog, type CapturedLog } from '../fixtures/token-harness.js';
import { startSimulator, type Simulator } from '../sim/index.js';

/** Storage whose writes and removes of the named files fail once `broken` is set (a full or read-only disk). */
class FailingStorage extends Storage {
  broken = new Set<string>();

  override async write(name: string, value: unknown, options?: { compact?: boolean }): Promise<void> {
    if (this.broken.has(name)) throw new StorageError(`cannot write ${name}: no space left on device`);
    await super.write(name, value, options);
  }

  override async remove(name: string): Promise<void> {
    if (this.broken.has(name)) throw new StorageError(`cannot remove ${name}: read-only file system`);
    await super.remove(name);
  }
}

const LEDGER = 'webhooks.json';

describe('storage failures in unlink and token writes never reject unhandled', () => {
  let sim: Simulator;
  let dir: string;
  let storage: FailingStorage;
  let log: CapturedLog;
  let tokens: TokenManager;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  beforeEach(async () => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'unlink-failures-'));
    storage = new FailingStorage(dir);
    log = captureLog();
    tokens = managerOn(storage);
    expect(await tokens.start()).toBe('linked');
  });

  afterEach(async () => {
    tokens.stop();
    await tokens.settled();
    vi.useRealTimers();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
    // One more turn, so a rejection left unhandled by the test's last step is reported.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  function managerOn(store: Storage, seed: string = sim.issueRefreshToken()): TokenManager {
    return new TokenManager({
      storage: store,
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      apiKey: sim.account.apiKey,
      clientId: sim.account.clientId,
      clientSecret: sim.account.clientSecret,
      seeds: { refreshToken: seed },
      log,
    });
  }

  async function registeredRegistrar(): Promise<WebhookRegistrar> {
    const registrar = new WebhookRegistrar({
      client: new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens }),
      storage,
      clientId: sim.account.clientId,
      publicUrl: () => 'http://127.0.0.1:9/lock-access',
      secret: await WebhookSecret.load(storage),
      log,
    });
    await registrar.reconcile({ locks: ['LOCK-1'], doorbells: [], user: true });
    return registrar;
  }

  function linkControl(registrar: WebhookRegistrar, shown: unknown[][]): LinkControl {
    return new LinkControl({
      log,
      status: { link: () => undefined, registrations: (rows) => shown.push(rows) },
      newRegistrar: () => registrar,
      tokens,
      converge: () => undefined,
    });
  }

  it('the account-deleted callback\'s unlink with the token file unwritable: resolves, logs what to do, keeps no secret in the log', async () => {
    const shown: unknown[][] = [];
    const link = linkControl(await registeredRegistrar(), shown);
    storage.broken.add(TOKENS_FILE);
    await expect(link.unlink('the Lock Access account was deleted')).resolves.toBeUndefined();
    expect(link.idle).toBe(true);
    expect(sim.registrations()).toEqual([]);
    expect(log.text('error').some((line) => line.includes('could not save the unlink') && line.includes('Unlink again in the plugin settings'))).toBe(true);
    expect(log.lines.map((line) => line.message).join('\n')).not.toContain(sim.account.apiKey);
  });

  it('the account-deleted callback\'s unlink with the ledger unwritable: resolves, the tokens are still forgotten', async () => {
    const shown: unknown[][] = [];
    const link = linkControl(await registeredRegistrar(), shown);
    storage.broken.add(LEDGER);
    await expect(link.unlink('the Lock Access account was deleted')).resolves.toBeUndefined();
    expect(tokens.state).toBe('unlinked');
    expect(log.text('error').some((line) => line.startsWith('Unlinking could not finish'))).toBe(true);
  });

  it('the settings UI\'s unlink with the token file unwritable: an answer (never a rejection) that says the unlink is not saved', async () => {
    await registeredRegistrar();
    const session = new CloudSession({
      storage,
      log,
      now: Date.now,
      createClient: (a, t) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens: t }),
    });
    const account: Account = { apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl };
    storage.broken.add(TOKENS_FILE);
    storage.broken.add(LEDGER);
    const answer = await new AccountLink(session).unlink(account);
    expect(answer.saved).toBe(false);
    expect(answer.message.code).toBe('server.unlink.notSaved');
    // Why, as a reason code the page words (the error's own words are in the log).
    expect(answer.message.params.reason).toMatchObject({ code: expect.stringMatching(/^reason\./) as unknown });
    expect(answer.message.text).toContain('could not be written');
    expect(answer.message.text).toContain('unlink again');
    // The ledger was unwritable too: the answer says the list could not be updated.
    expect(answer.notes.map((note) => note.code)).toContain('server.unlink.listNotUpdated');
    // Its why, too, as a reason code (not the storage error's words).
    expect(answer.notes.find((note) => note.code === 'server.unlink.listNotUpdated')?.params.reason).toMatchObject({ code: expect.stringMatching(/^reason\./) as unknown });
    expect(answer.notes.map((note) => note.text).join(' ')).toContain('The list of webhooks could not be updated');
  });

  it('token writes from a timer (keep-alive, header token save, expiry refresh) with the disk failing: logged, never thrown', async () => {
    vi.useFakeTimers({ now: Date.now(), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    storage.broken.add(TOKENS_FILE);
    // A day on: the keep-alive call runs and the header token is due to be saved (and fails).
    await vi.advanceTimersByTimeAsync(25 * 60 * 60 * 1000);
    await tokens.settled();
    tokens.noteResponseToken(await tokens.getAccessToken());
    await tokens.settled();
    // The explicit paths reject to their caller with a typed error.
    await expect(tokens.refreshNow()).rejects.toThrow(/could not run/);
    await expect(tokens.linkWithRefreshToken(sim.issueRefreshToken())).rejects.toBeInstanceOf(StorageError);
    expect(tokens.state).toBe('linked');
    // The unlink rejects to its caller, but this process forgets the tokens all the same.
    await expect(tokens.unlink()).rejects.toBeInstanceOf(StorageError);
    expect(tokens.state).toBe('unlinked');
    expect(tokens.canAuthenticate()).toBe(false);
  });
});
