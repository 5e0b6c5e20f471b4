import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { WebhookRegistrar } from '../../src/cloud/registrations/registrations.js';
import { TokenStore, type TokenRecord } from '../../src/storage/token-file.js';
import { WebhookSecret } from '../../src/cloud/registrations/webhook-secret.js';
import type { Account } from '../../src/settings-ui/account-input.js';
import { AccountLink } from '../../src/settings-ui/account-link.js';
import { CloudSession } from '../../src/settings-ui/cloud-session.js';
import { UiError } from '../../src/settings-ui/ui-error.js';
import { Storage } from '../../src/storage.js';
import { demoDevices } from '../sim/devices.js';
import { startSimulator, type Simulator } from '../sim/index.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const PUBLIC_URL = 'http://127.0.0.1:9/lock-access';

describe('README "Link your account": link, test and unlink from the settings page', () => {
  let sim: Simulator;
  let dir: string;
  let storage: Storage;
  let session: CloudSession;
  let link: AccountLink;
  let account: Account;
  beforeEach(async () => {
    sim = await startSimulator({ ...demoDevices() });
    dir = await mkdtemp(join(tmpdir(), 'account-link-'));
    storage = Storage.under(dir);
    session = new CloudSession({
      storage, log: quiet, now: Date.now,
      createClient: (a, tokens) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens }),
    });
    link = new AccountLink(session);
    account = { apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl, publicUrl: PUBLIC_URL };
  });
  afterEach(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a refused refresh token is a UiError saying linking failed, and nothing is linked', async () => {
    const failure = link.withRefreshToken(account, 'not-a-token-the-service-issued');
    await expect(failure).rejects.toBeInstanceOf(UiError);
    await expect(failure).rejects.toThrow(/^Linking failed: /);
    // The page is told why in a code it words (the OAuth error's own code, no English); the log has the sentence.
    const refused = await failure.catch((error: unknown) => error);
    expect((refused as UiError).uiMessage).toMatchObject({ code: 'server.link.failed', params: { reason: { code: 'reason.refused', params: { oauthError: 'invalid_grant' } } } });
    expect(await link.test(account)).toMatchObject({ ok: false });
  });

  it('a client secret the token service refuses: linking fails, why as a reason code the page words (the service\'s status)', async () => {
    const failure = link.withRefreshToken({ ...account, clientSecret: 'not-the-secret' }, sim.issueRefreshToken());
    const refused = await failure.catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UiError);
    const message = (refused as UiError).uiMessage;
    expect(message.code).toBe('server.link.failed');
    expect(message.params.reason).toMatchObject({ code: 'reason.httpStatus', params: { status: 400 } });
  });

  /** Links through the page and registers three webhooks, as the plugin would. */
  async function linkAndRegister(): Promise<void> {
    await link.withRefreshToken(account, sim.issueRefreshToken());
    await session.withTokens(account, async (tokens) => {
      const registrar = new WebhookRegistrar({
        client: await session.client(account, tokens), storage, clientId: account.clientId, publicUrl: () => PUBLIC_URL,
        secret: await WebhookSecret.load(storage), log: quiet,
      });
      await registrar.reconcile({ locks: ['LOCK-FRONT-DOOR'], doorbells: ['DOORBELL-FRONT'], user: true });
      registrar.stop();
    });
    expect(sim.registrations()).toHaveLength(3);
  }

  it('unlink deletes every webhook registration at the service, then the tokens', async () => {
    await linkAndRegister();
    expect(await link.unlink(account)).toEqual({ message: { code: 'server.unlink.done', params: {}, text: 'Unlinked: the stored tokens were deleted.' }, notes: [], left: [], saved: true });
    expect(sim.registrations()).toEqual([]);
    const record = await new TokenStore(storage).read();
    expect(record).toMatchObject({ state: 'unlinked' });
    expect(record?.refreshToken).toBeUndefined();
    expect(record?.accessToken).toBeUndefined();
  });

  it('after a refused refresh the access token still works, so unlink still deletes every registration', async () => {
    await linkAndRegister();
    const store = new TokenStore(storage);
    const record = await store.read();
    if (!record?.refreshToken) throw new Error('linked record expected');
    sim.revokeRefreshToken(record.refreshToken);
    const refused: TokenRecord = { ...record, state: 'reauthorizationNeeded', refreshTokenLost: 'rejected', message: 'refused' };
    delete refused.refreshToken;
    await store.write(refused, record);
    const answer = await link.unlink(account);
    expect(answer.left).toEqual([]);
    expect(sim.registrations()).toEqual([]);
  });

  it('when no token can authenticate, the page is told which registrations are left behind', async () => {
    await linkAndRegister();
    sim.revokeAccessTokens();
    const store = new TokenStore(storage);
    const record = await store.read();
    if (!record?.refreshToken) throw new Error('linked record expected');
    sim.revokeRefreshToken(record.refreshToken);
    const answer = await link.unlink(account);
    expect(answer.left.map((row) => `${row.kind} ${row.id}`).sort()).toEqual(['doorbell DOORBELL-FRONT', 'lock LOCK-FRONT-DOOR', 'user ']);
    // Why, as a code the page words: the service refused the token, or none could sign in.
    for (const row of answer.left) expect(row.reason.code).toMatch(/^reason\.(tokenRefused|notLinked)$/);
    expect(answer.message.code).toBe('server.unlink.done');
    expect(answer.notes).toHaveLength(1);
    expect(answer.notes[0]).toMatchObject({ code: 'server.unlink.left', params: { count: 3 } });
    // The note names them by id, words of no language; the page lists each with its reason.
    expect(answer.notes[0]?.params.registrations).toBe(answer.left.map((row) => (row.kind === 'user' ? 'user' : row.id)).join(', '));
    expect(answer.notes[0]?.text).toMatch(/^3 webhook registrations could not be deleted: .*LOCK-FRONT-DOOR.*deleted after the next link/);
    expect(sim.registrations()).toHaveLength(3);
    expect(await store.read()).toMatchObject({ state: 'unlinked' });
  });

  it('without any link and nothing registered, unlink says only that the tokens are gone', async () => {
    expect(await link.unlink(account)).toEqual({ message: { code: 'server.unlink.done', params: {}, text: 'Unlinked: the stored tokens were deleted.' }, notes: [], left: [], saved: true });
  });
});
