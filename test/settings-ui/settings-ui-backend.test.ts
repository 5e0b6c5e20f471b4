import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { AUTHORIZATION_TTL_MS } from '../../src/settings-ui/oauth-code-flow.js';
import { SettingsUiBackend } from '../../src/settings-ui/settings-ui-backend.js';
import { UiError } from '../../src/settings-ui/ui-error.js';
import { demoDevices } from '../sim/devices.js';
import { startSimulator, type Simulator } from '../sim/index.js';

const REDIRECT = 'https://home.example.net/linked';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

describe('README "Link your account": the settings server links by OAuth 2.0 authorization code (RFC 6749 4.1) through the shared token store', () => {
  let sim: Simulator;
  let dir: string;
  let now = Date.now();
  let backend: SettingsUiBackend;

  beforeEach(async () => {
    sim = await startSimulator({ ...demoDevices() });
    dir = await mkdtemp(join(tmpdir(), 'ui-backend-'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({ platforms: [{
      platform: 'LockAccess', apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret,
      baseUrl: sim.baseUrl, authUrl: sim.authUrl, webhook: { publicUrl: 'http://127.0.0.1:9/lock-access' },
    }] }));
    now = Date.now();
    backend = new SettingsUiBackend({
      storagePath: dir, configPath: join(dir, 'config.json'), log: quiet, now: () => now,
      createClient: (account, tokens) => new CloudHttpClient({ baseUrl: account.baseUrl, apiKey: account.apiKey, tokens }),
    });
  });
  afterEach(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What a browser does: open the sign-in address, allow (auto), follow to the redirect address. */
  const approve = async (url: string) => {
    const response = await fetch(`${url}&auto=1`, { redirect: 'manual' });
    return response.headers.get('location') ?? '';
  };

  it('the sign-in address carries response_type=code, client_id, redirect_uri and a random state', async () => {
    const { url } = await backend.startAuthorization({ redirectUri: REDIRECT });
    const parsed = new URL(url);
    expect(`${parsed.origin}${parsed.pathname}`).toBe(`${sim.authUrl}/authorization`);
    expect(parsed.searchParams.get('response_type')).toBe('code');
    expect(parsed.searchParams.get('client_id')).toBe(sim.account.clientId);
    expect(parsed.searchParams.get('redirect_uri')).toBe(REDIRECT);
    const second = new URL((await backend.startAuthorization({ redirectUri: REDIRECT })).url);
    expect(parsed.searchParams.get('state')).not.toBe(second.searchParams.get('state'));
  });

  it('exchanges the code of a matching state, once; then the link state is "linked" and no answer holds a secret', async () => {
    const redirected = await approve((await backend.startAuthorization({ redirectUri: REDIRECT })).url);
    expect(await backend.finishAuthorization({ redirectUrl: redirected })).toMatchObject({ linked: true });
    const status = await backend.status();
    expect(status.link.state).toBe('linked');
    const tokens = JSON.parse(await readFile(join(dir, 'lock-access', 'tokens.json'), 'utf8')) as { refreshToken: string };
    const shown = JSON.stringify(status);
    for (const secret of [sim.account.apiKey, sim.account.clientSecret, tokens.refreshToken]) expect(shown).not.toContain(secret);
    await expect(backend.finishAuthorization({ redirectUrl: redirected })).rejects.toThrow(/does not answer the sign-in started here/);
  });

  it('a missing account field is named without spending the sign-in: after filling it the same address links', async () => {
    const saved = await readFile(join(dir, 'config.json'), 'utf8');
    const redirected = await approve((await backend.startAuthorization({ redirectUri: REDIRECT })).url);
    const block = (JSON.parse(saved) as { platforms: Record<string, unknown>[] }).platforms[0] ?? {};
    await writeFile(join(dir, 'config.json'), JSON.stringify({ platforms: [{ ...block, clientSecret: '' }] }));
    await expect(backend.finishAuthorization({ redirectUrl: redirected })).rejects.toThrow(/client secret/);
    await writeFile(join(dir, 'config.json'), saved);
    expect(await backend.finishAuthorization({ redirectUrl: redirected })).toMatchObject({ linked: true });
  });

  it('refuses an unknown state, an expired state, another redirect address and a denied request', async () => {
    const redirected = await approve((await backend.startAuthorization({ redirectUri: REDIRECT })).url);
    const forged = new URL(redirected);
    forged.searchParams.set('state', 'not-ours');
    await expect(backend.finishAuthorization({ redirectUrl: forged.toString() })).rejects.toBeInstanceOf(UiError);

    const elsewhere = new URL(await approve((await backend.startAuthorization({ redirectUri: REDIRECT })).url));
    elsewhere.host = 'evil.example.com';
    await expect(backend.finishAuthorization({ redirectUrl: elsewhere.toString() })).rejects.toThrow(/not the redirect address/);

    const late = await approve((await backend.startAuthorization({ redirectUri: REDIRECT })).url);
    now += AUTHORIZATION_TTL_MS + 1;
    await expect(backend.finishAuthorization({ redirectUrl: late })).rejects.toThrow(/older than 15 minutes/);

    const { url } = await backend.startAuthorization({ redirectUri: REDIRECT });
    const state = new URL(url).searchParams.get('state') ?? '';
    await expect(backend.finishAuthorization({ redirectUrl: `${REDIRECT}?error=access_denied&state=${state}` })).rejects.toThrow(/not allowed/);
    expect((await backend.status()).link.state).toBe('unlinked');
  });

  it('"test connection" uses the stored access token and leaves the refresh token unspent', async () => {
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    const before = JSON.parse(await readFile(join(dir, 'lock-access', 'tokens.json'), 'utf8')) as { refreshToken: string; rotations: number };
    expect(await backend.testConnection({})).toMatchObject({ ok: true });
    const after = JSON.parse(await readFile(join(dir, 'lock-access', 'tokens.json'), 'utf8')) as { refreshToken: string; rotations: number };
    expect(after.rotations).toBe(before.rotations);
    expect(sim.refreshTokenState(after.refreshToken)).toBe('issued');
  });

  it('"Send a test event" that gets no answer: still waiting at 29.999 s, "nothing arrived within 30 seconds" at 30 s', async () => {
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    // The config's public address (port 9) reaches nothing: the service's callback never arrives.
    const started = await backend.startTestEvent({ lockId: 'LOCK-FRONT-DOOR' });
    now = started.startedAt + 29_999;
    expect(await backend.testEventResult({ ...started })).toMatchObject({ state: 'waiting' });
    now = started.startedAt + 30_000;
    expect(await backend.testEventResult({ ...started })).toMatchObject({ state: 'nothing', message: { code: 'testEvent.nothing', params: { count: 30 }, text: expect.stringMatching(/^Nothing arrived within 30 seconds: the service cannot reach http:\/\/127\.0\.0\.1:9\/lock-access\./) as unknown } });
  });

  it('names the missing account fields instead of calling the service', async () => {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ platforms: [{ platform: 'LockAccess' }] }));
    await expect(backend.testConnection({})).rejects.toMatchObject({ message: 'Enter the API key first.', uiMessage: { code: 'server.account.missing.apiKey', params: {} } });
  });
});
