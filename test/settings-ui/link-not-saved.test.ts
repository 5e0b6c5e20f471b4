// A link made from the settings page whose tokens cannot be written is no link yet: the page is
// told the tokens are not saved and why (never "Linked"), and the new tokens are never held only by
// a process about to exit. The settings server keeps them, retries the write, and ends only once
// they are saved; the plugin then takes them over from the token file. The fault is real: the
// token file is replaced by a directory right after the service issued the tokens, so every write
// of it fails (EISDIR) whoever runs the test, root included.
import { mkdir, mkdtemp, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { TokenManager } from '../../src/cloud/tokens/token-manager.js';
import { SAVE_RETRY_FIRST_MS } from '../../src/cloud/tokens/token-writes.js';
import { SettingsUiBackend } from '../../src/settings-ui/settings-ui-backend.js';
import { UiError } from '../../src/settings-ui/ui-error.js';
import { Storage } from '../../src/storage.js';
import { captureLog, readTokens, tokenWorks, type CapturedLog } from '../fixtures/token-harness.js';
import { startSimulator, type Simulator } from '../sim/index.js';

const REDIRECT = 'https://home.example.net/linked';

describe('a link from the settings page whose tokens cannot be written', () => {
  let sim: Simulator;
  let dir: string;
  let log: CapturedLog;
  let backend: SettingsUiBackend;
  /** Armed: the next successful token-endpoint answer turns tokens.json into a directory. */
  let breakAfterGrant = false;
  const tokensFile = (): string => join(dir, 'lock-access', 'tokens.json');

  async function breakTokenFile(): Promise<void> {
    if (existsSync(tokensFile())) await rename(tokensFile(), `${tokensFile()}.kept`);
    await mkdir(tokensFile());
  }

  async function repairTokenFile(): Promise<void> {
    await rmdir(tokensFile());
    if (existsSync(`${tokensFile()}.kept`)) await rename(`${tokensFile()}.kept`, tokensFile());
  }

  beforeEach(async () => {
    sim = await startSimulator({});
    dir = await mkdtemp(join(tmpdir(), 'link-not-saved-'));
    log = captureLog();
    await writeFile(join(dir, 'config.json'), JSON.stringify({ platforms: [{
      platform: 'LockAccess', apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret,
      baseUrl: sim.baseUrl, authUrl: sim.authUrl, webhook: { publicUrl: 'http://127.0.0.1:9/lock-access' },
    }] }));
    breakAfterGrant = false;
    backend = new SettingsUiBackend({
      storagePath: dir, configPath: join(dir, 'config.json'), log,
      createClient: (account, tokens) => new CloudHttpClient({ baseUrl: account.baseUrl, apiKey: account.apiKey, tokens }),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (breakAfterGrant && response.url.endsWith('/access_token') && response.ok) {
          breakAfterGrant = false;
          await breakTokenFile();
        }
        return response;
      },
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The running plugin, reading the same token file. */
  function plugin(): TokenManager {
    return new TokenManager({
      storage: Storage.under(dir), authUrl: sim.authUrl, baseUrl: sim.baseUrl, apiKey: sim.account.apiKey,
      clientId: sim.account.clientId, clientSecret: sim.account.clientSecret, log: captureLog(),
    });
  }

  /** Moves the fake clock on until the server may end (the file writes themselves take real time). */
  async function untilEnded(closing: { ended: () => boolean }): Promise<void> {
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
      expect(closing.ended()).toBe(true);
    }, { timeout: 30_000, interval: 10 });
  }

  /** The page closes: the process may end only when this resolves. */
  async function pageClosed(): Promise<{ ended: () => boolean }> {
    let ended = false;
    void backend.safeToExit().then(() => {
      ended = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    return { ended: () => ended };
  }

  it('pasted refresh token: not "Linked" but "not saved" with the reason; the server stays until the tokens are saved, and the plugin links with them', async () => {
    const pasted = sim.issueRefreshToken();
    breakAfterGrant = true;
    const answer = backend.linkWithRefreshToken({ refreshToken: pasted });
    await expect(answer).rejects.toBeInstanceOf(UiError);
    await expect(answer).rejects.toThrow(/^Not linked yet: the service issued new tokens, but the token file could not be written \(.+\)\./);
    await expect(answer).rejects.not.toThrow(/Linked/);
    // The page words why in its language: the token file is a directory (EISDIR), a file fault.
    await expect(answer).rejects.toMatchObject({ uiMessage: { code: 'server.link.notSaved', params: { reason: { code: 'reason.file', params: { errorCode: 'EISDIR' } } } } });
    // The pasted token is spent: the new tokens exist only in this process.
    expect(sim.refreshTokenState(pasted)).toBe('used');

    const closing = await pageClosed();
    await vi.advanceTimersByTimeAsync(4 * SAVE_RETRY_FIRST_MS);
    expect(closing.ended()).toBe(false);
    expect(log.text('warn').some((line) => line.includes('keeps running and retrying the save'))).toBe(true);

    await repairTokenFile();
    await untilEnded(closing);
    const saved = await readTokens(Storage.under(dir));
    expect(saved?.state).toBe('linked');
    expect(saved?.refreshToken).toBeDefined();
    expect(sim.refreshTokenState(saved?.refreshToken ?? '')).toBe('issued');
    expect(log.text('info').some((line) => line.includes('tokens of the new link are saved now'))).toBe(true);

    vi.useRealTimers();
    const running = plugin();
    expect(await running.start()).toBe('linked');
    expect(await tokenWorks(sim, await running.getAccessToken())).toBe(true);
    running.stop();
    await running.settled();
    expect(log.lines.map((line) => line.message).join('\n')).not.toContain(pasted);
  });

  it('authorization code: not "Linked" but "not saved"; the tokens are saved once the file can be written', async () => {
    const started = await backend.startAuthorization({ redirectUri: REDIRECT });
    const redirected = (await fetch(`${started.url}&auto=1`, { redirect: 'manual' })).headers.get('location') ?? '';
    breakAfterGrant = true;
    const answer = backend.finishAuthorization({ redirectUrl: redirected });
    await expect(answer).rejects.toThrow(/^Not linked yet: .*could not be written/);

    const closing = await pageClosed();
    await vi.advanceTimersByTimeAsync(2 * SAVE_RETRY_FIRST_MS);
    expect(closing.ended()).toBe(false);
    await repairTokenFile();
    await untilEnded(closing);
    const saved = await readTokens(Storage.under(dir));
    expect(saved?.state).toBe('linked');
    expect(sim.refreshTokenState(saved?.refreshToken ?? '')).toBe('issued');
  });

  it('a token file that cannot even be read: the code is not spent and nothing is held', async () => {
    await mkdir(join(dir, 'lock-access'), { recursive: true });
    await breakTokenFile();
    const started = await backend.startAuthorization({ redirectUri: REDIRECT });
    const redirected = (await fetch(`${started.url}&auto=1`, { redirect: 'manual' })).headers.get('location') ?? '';
    const grantsBefore = sim.stats.grants;
    await expect(backend.finishAuthorization({ redirectUrl: redirected })).rejects.toThrow(/^Linking failed: /);
    expect(sim.stats.grants).toBe(grantsBefore);
    const closing = await pageClosed();
    expect(closing.ended()).toBe(true);
  });

  it('when nothing is unsaved, closing the page ends the server at once', async () => {
    await backend.linkWithRefreshToken({ refreshToken: sim.issueRefreshToken() });
    const closing = await pageClosed();
    expect(closing.ended()).toBe(true);
  });
});
