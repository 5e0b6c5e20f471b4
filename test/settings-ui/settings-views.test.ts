import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import type { Account } from '../../src/settings-ui/account-input.js';
import { AccountLink } from '../../src/settings-ui/account-link.js';
import { CloudSession } from '../../src/settings-ui/cloud-session.js';
import { EventLog } from '../../src/status/event-log.js';
import { SettingsViews, STATUS_STALE_MS, isPluginRunning } from '../../src/settings-ui/settings-views.js';
import { StatusWriter, emptyStatus, type Status } from '../../src/status/status.js';
import { UiError } from '../../src/settings-ui/ui-error.js';
import { Storage } from '../../src/storage.js';
import { TokenStore } from '../../src/storage/token-file.js';
import { demoDevices } from '../sim/devices.js';
import { startSimulator, type Simulator } from '../sim/index.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
/** Above any Linux pid_max: no such process. */
const NO_SUCH_PID = 0x7ffffff0;

describe('README "Settings UI" > Status: is the plugin running?', () => {
  const snapshot = (updatedAt: number, pid?: number): Status => ({ ...emptyStatus(updatedAt), ...(pid === undefined ? {} : { pid }) });

  it('a snapshot whose writer still runs means running, however old it is', () => {
    expect(isPluginRunning(snapshot(0, process.pid), STATUS_STALE_MS * 10)).toBe(true);
  });

  it('a snapshot whose writer is gone means not running, however fresh it is', () => {
    expect(isPluginRunning(snapshot(1000, NO_SUCH_PID), 1000)).toBe(false);
  });

  it('a snapshot without a pid is trusted for 10 minutes', () => {
    expect(isPluginRunning(snapshot(0), STATUS_STALE_MS)).toBe(true);
    expect(isPluginRunning(snapshot(0), STATUS_STALE_MS + 1)).toBe(false);
  });
});

describe('README "Settings UI": status and event log read from the files the plugin writes', () => {
  let dir: string;
  let storage: Storage;
  let views: SettingsViews;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'settings-views-'));
    storage = Storage.under(dir);
    views = new SettingsViews(new CloudSession({ storage, createClient: () => { throw new Error('no network in these tests'); }, log: quiet, now: Date.now }), Date.now);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('before anything ran: not linked, no snapshot, not running', async () => {
    expect(await views.status()).toEqual({
      link: { state: 'unlinked', message: { code: 'server.linkState.neverLinked', params: {}, text: 'Not linked yet: link your Lock Access account below.' } },
      plugin: undefined,
      pluginRunning: false,
      accounts: {},
      holdings: {},
    });
  });

  it('each extra account the page names has the link of its own token file; a shared device its holders and owner', async () => {
    const cabin = new Storage(join(storage.dir, 'accounts', 'cabin'));
    await cabin.ensureDir();
    await new TokenStore(cabin).write({ version: 1, rotations: 1, state: 'linked', refreshToken: 'rt-cabin', linkedAt: Date.now(), knownSeedHashes: [] }, undefined);
    await storage.write('device-accounts.json', { version: 1, devices: { 'lock:LOCK-1': { owner: 'cabin', holders: ['main', 'cabin'] } } });
    const status = await views.status(['cabin', 'parents', 'main', '../x', 7]);
    expect(status.link.state).toBe('unlinked');
    expect(Object.keys(status.accounts)).toEqual(['cabin', 'parents']);
    expect(status.accounts.cabin).toMatchObject({ state: 'linked', message: { code: 'server.linkState.linked' } });
    expect(status.accounts.parents).toMatchObject({ state: 'unlinked', message: { code: 'server.linkState.neverLinked' } });
    expect(status.holdings).toEqual({ 'lock:LOCK-1': { owner: 'cabin', holders: ['main', 'cabin'] } });
  });

  it('an unreadable token file asks to link again, without failing the page', async () => {
    await storage.ensureDir();
    await writeFile(storage.file('tokens.json'), '{not json');
    const status = await views.status();
    expect(status.link.state).toBe('reauthorizationNeeded');
    expect(status.link.message.code).toBe('server.linkState.unreadable');
    expect(status.link.message.text).toMatch(/^The stored tokens cannot be read \(.+\)\. Link the account again\.$/);
    // Why, as a reason the page words: a damaged file is no error code of the system.
    expect(status.link.message.params.reason).toMatchObject({ code: 'reason.other' });
  });

  it('shows the plugin\'s snapshot (rejection counts included) and that its writer runs', async () => {
    const writer = await StatusWriter.open(storage);
    writer.receiverCounters(0, { 'stale timestamp': 3 });
    await writer.flush();
    const status = await views.status();
    expect(status.plugin?.receiver.rejected).toEqual({ 'stale timestamp': 3 });
    expect(status.pluginRunning).toBe(true);
  });

  it('the event log comes newest first', async () => {
    const log = await EventLog.open(storage);
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 1, event: { at: 1, lockId: 'L1', kind: 'doorState', state: 'open' } });
    log.record({ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Front Door', at: 2, event: { at: 2, lockId: 'L1', kind: 'doorState', state: 'closed' } });
    await log.flush();
    expect((await views.events()).map((e) => e.text)).toEqual(['Door closed', 'Door opened']);
  });
});

describe('README "Settings UI" > Devices and Event log: device list and recordings from the service', () => {
  let sim: Simulator;
  let dir: string;
  let views: SettingsViews;
  let account: Account;
  beforeEach(async () => {
    sim = await startSimulator({ ...demoDevices() });
    dir = await mkdtemp(join(tmpdir(), 'settings-views-'));
    const session = new CloudSession({
      storage: Storage.under(dir), log: quiet, now: Date.now,
      createClient: (a, tokens) => new CloudHttpClient({ baseUrl: a.baseUrl, apiKey: a.apiKey, tokens }),
    });
    views = new SettingsViews(session, Date.now);
    account = { apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl };
    await new AccountLink(session).withRefreshToken(account, sim.issueRefreshToken());
  });
  afterEach(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the account\'s locks and doorbells with their names', async () => {
    expect(await views.discover(account)).toEqual({
      locks: [{ id: 'LOCK-FRONT-DOOR', name: 'Front Door' }],
      doorbells: [{ id: 'DOORBELL-FRONT', name: 'Front Doorbell' }],
    });
  });

  it('a recording answers its playlist address; an unknown doorbell is a UiError in plain words', async () => {
    const { url } = await views.video(account, 'DOORBELL-FRONT', '0b8f5b1e-1d3c-4a8e-9d76-3f1f6c1a2b3c');
    expect(url).toMatch(/^https?:\/\/.+\.m3u8/);
    const failure = views.video(account, 'NOPE', 'x');
    await expect(failure).rejects.toBeInstanceOf(UiError);
    await expect(failure).rejects.toThrow(/^The recording could not be found: /);
    // Why, as a reason code the page words in its language; the error's own words are logged.
    await expect(failure).rejects.toMatchObject({ uiMessage: { code: 'server.video.notFound', params: { reason: { code: expect.stringMatching(/^reason\./) as unknown } } } });
  });
});
