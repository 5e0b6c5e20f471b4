// The facade as the plugin and the settings UI server use it together ("Single-flight
// ... between the plugin and its UI server"): one store, two processes' managers, and start-up.
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

import { NotLinkedError, RefreshRejectedError, RequestRejectedError } from '../../../src/cloud/http/errors.js';
import type { LinkState } from '../../../src/cloud/tokens/token-manager.js';
import { TOKENS_FILE } from '../../../src/storage/token-file.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('the plugin takes over what the settings UI server wrote to the store', () => {
  it('syncWithStore adopts a link made by another manager on the same store, at once and without a grant', async () => {
    const { sim } = await bed.boot();
    const plugin = bed.manager();
    expect(await plugin.start()).toBe('unlinked');
    const ui = bed.manager();
    await ui.start();
    await ui.linkWithRefreshToken(sim.issueRefreshToken());
    ui.stop();
    const grants = sim.stats.grants;
    expect(await plugin.syncWithStore()).toBe('linked');
    expect(await tokenWorks(sim, await plugin.getAccessToken())).toBe(true);
    expect(sim.stats.grants).toBe(grants);
  });

  it('syncWithStore follows an unlink made by another manager', async () => {
    const { sim } = await bed.boot();
    const plugin = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    expect(await plugin.start()).toBe('linked');
    const ui = bed.manager();
    await ui.start();
    await ui.unlink();
    expect(await plugin.syncWithStore()).toBe('unlinked');
    await expect(plugin.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
  });

  it('status() reports the link without any token', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const status = m.status();
    const record = await readTokens(storage);
    expect(status.state).toBe('linked');
    expect(status.lastRefreshAt).toBe(record?.lastRefreshAt);
    expect(typeof status.accessTokenExpiresAt).toBe('number');
    const text = JSON.stringify(status);
    for (const secret of [record?.accessToken, record?.refreshToken]) expect(text).not.toContain(secret ?? 'none');
  });

  it('a request made while start() is still reading the token file waits for it: the stored link answers, never "not linked"', async () => {
    const { sim } = await bed.boot();
    const seeds = { refreshToken: sim.issueRefreshToken() };
    const first = bed.manager({ seeds });
    expect(await first.start()).toBe('linked');
    first.stop();
    // A restart: Apple Home or a Matter controller may send a command as soon as the devices are
    // served, before the token file has been read.
    const again = bed.manager({ seeds });
    const starting = again.start();
    const token = again.getAccessToken();
    expect(await starting).toBe('linked');
    expect(await tokenWorks(sim, await token)).toBe(true);
  });

  it('a damaged token file is reported with what to do, and start() still resolves', async () => {
    const { storage } = await bed.boot();
    await storage.ensureDir();
    await writeFile(storage.file(TOKENS_FILE), '{ not json');
    const m = bed.manager();
    expect(await m.start()).toBe('unlinked');
    expect(bed.log.text('error').join('\n')).toMatch(/could not read its token file .*Move that file away, then link the account again/);
  });
});

// What the settings UI does with the tokens: link (pasted refresh token, OAuth authorization code),
// test the connection, and unlink ("User unlink ... deletes ... the tokens").
describe('the settings UI links the account and tests the connection', () => {
  it('linkWithRefreshToken spends the pasted token once and links', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager();
    await m.start();
    const states: LinkState[] = [];
    m.onStateChange((state) => states.push(state));
    const pasted = sim.issueRefreshToken();
    await m.linkWithRefreshToken(pasted);
    expect(m.state).toBe('linked');
    expect(states).toEqual(['linked']);
    expect(sim.refreshTokenState(pasted)).toBe('used');
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('a refused pasted refresh token throws RefreshRejectedError', async () => {
    await bed.boot();
    const m = bed.manager();
    await m.start();
    await expect(m.linkWithRefreshToken('rt_not-a-real-token')).rejects.toBeInstanceOf(RefreshRejectedError);
    expect(m.state).toBe('reauthorizationNeeded');
  });

  it('an empty paste is refused before anything is written or sent', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager();
    await m.start();
    await expect(m.linkWithRefreshToken('   ')).rejects.toBeInstanceOf(RequestRejectedError);
    expect(await readTokens(storage)).toBeUndefined();
    expect(sim.stats.grants).toBe(0);
  });

  it('a pasted token replaces the config seed\'s link, and that seed never links again', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const first = bed.manager({ seeds: { refreshToken: seed } });
    await first.start();
    const pasted = sim.issueRefreshToken();
    await first.linkWithRefreshToken(pasted);
    first.stop();
    const grants = sim.stats.grants;
    const restarted = bed.manager({ seeds: { refreshToken: seed } });
    expect(await restarted.start()).toBe('linked');
    expect(sim.stats.grants).toBe(grants);
    expect(bed.log.text('info').filter((line) => line.includes('replace the stored link'))).toEqual([]);
  });

  it('exchangeAuthorizationCode stores the result like a fresh link', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager();
    await m.start();
    const redirectUri = 'http://127.0.0.1:1/callback';
    const authorize = await fetch(`${sim.authUrl}/authorization?response_type=code&auto=1&client_id=${sim.account.clientId}&redirect_uri=${encodeURIComponent(redirectUri)}&state=s`, { redirect: 'manual' });
    const code = new URL(authorize.headers.get('location') ?? '').searchParams.get('code') ?? '';
    await m.exchangeAuthorizationCode({ code, redirectUri });
    expect(m.state).toBe('linked');
    expect(sim.stats.codeGrants).toBe(1);
    const record = await readTokens(storage);
    expect(sim.refreshTokenState(record?.refreshToken ?? '')).toBe('issued');
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    await expect(m.exchangeAuthorizationCode({ code, redirectUri })).rejects.toBeInstanceOf(RefreshRejectedError);
  });

  it('testConnection uses the access token and never spends the refresh token while it is accepted', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    expect(await m.testConnection()).toMatchObject({ ok: true });
    expect(sim.stats.grants).toBe(1);
    sim.revokeAccessTokens();
    expect(await m.testConnection()).toMatchObject({ ok: true });
    expect(sim.stats.grants).toBe(2);
  });

  it('testConnection during an outage says to try again later, and the link stays', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    sim.faults.failNext(1, 503, '/users/me');
    const result = await m.testConnection();
    expect(result.ok).toBe(false);
    // The reason is a code the page words in its language, never the English of the error.
    expect(result.message).toEqual({
      code: 'link.test.unreachable',
      params: { reason: { code: 'reason.httpStatus', params: { status: 503 }, text: 'the service answered HTTP 503' } },
      text: 'Could not reach the Lock Access service (the service answered HTTP 503). Try again later.',
    });
    expect(m.state).toBe('linked');
  });
});

describe('unlink deletes the tokens, and the unlink survives restarts', () => {
  it('unlink() leaves a tombstone without any token and moves to unlinked', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    await m.unlink();
    expect(m.state).toBe('unlinked');
    const record = await readTokens(storage);
    expect(record).toMatchObject({ state: 'unlinked' });
    expect(record?.refreshToken).toBeUndefined();
    expect(record?.accessToken).toBeUndefined();
    expect(record?.pendingAccessToken).toBeUndefined();
    await expect(m.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
    expect(await m.testConnection()).toMatchObject({ ok: false, message: { code: 'link.notLinked', params: {} } });
  });

  it('a refresh token still in config.json neither links again nor is sent after a restart', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const first = bed.manager({ seeds: { refreshToken: seed } });
    await first.start();
    await first.unlink();
    first.stop();
    const grants = sim.stats.grants;
    const restarted = bed.manager({ seeds: { refreshToken: seed } });
    expect(await restarted.start()).toBe('unlinked');
    expect(sim.stats.grants).toBe(grants);
    // said once at start-up, without the token
    const said = bed.log.text('warn').filter((line) => line.includes('is unlinked'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('tokens still in the plugin settings are not used again');
    expect(said[0]).not.toContain(seed);
    expect(restarted.canAuthenticate()).toBe(false);
    await expect(restarted.refreshNow()).rejects.toBeInstanceOf(NotLinkedError);
    expect(sim.stats.grants).toBe(grants);
  });

  it('an access token seed still in config.json does not link again after a restart', async () => {
    const { sim } = await bed.boot();
    const first = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await first.start();
    const accessToken = await first.getAccessToken();
    first.stop();
    const withAccess = bed.manager({ seeds: { accessToken } });
    expect(await withAccess.start()).toBe('linked');
    await withAccess.unlink();
    withAccess.stop();
    const restarted = bed.manager({ seeds: { accessToken } });
    expect(await restarted.start()).toBe('unlinked');
    await expect(restarted.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
  });

  it('a new seed in config.json, or a link in the settings, links again on purpose', async () => {
    const { sim } = await bed.boot();
    const first = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await first.start();
    await first.unlink();
    first.stop();
    const fresh = sim.issueRefreshToken();
    const withNewSeed = bed.manager({ seeds: { refreshToken: fresh } });
    expect(await withNewSeed.start()).toBe('linked');
    expect(sim.refreshTokenState(fresh)).toBe('used');
    await withNewSeed.unlink();
    await withNewSeed.linkWithRefreshToken(sim.issueRefreshToken());
    expect(withNewSeed.state).toBe('linked');
  });

  it('another process (the settings UI server) unlinking is taken over by syncWithStore', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const plugin = bed.manager({ seeds: { refreshToken: seed } });
    await plugin.start();
    const ui = bed.manager({ seeds: { refreshToken: seed } });
    await ui.start();
    ui.stop();
    await ui.unlink();
    expect(await plugin.syncWithStore()).toBe('unlinked');
    expect(plugin.canAuthenticate()).toBe(false);
  });
});
