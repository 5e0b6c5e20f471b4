// The refresh grant against the simulator: rotation with write-ahead, and for every
// outcome of the token endpoint the right answer to "was the refresh token spent?".
import { describe, expect, it } from 'vitest';

import { RefreshRejectedError, TransientError } from '../../../src/cloud/http/errors.js';
import { SteppedStorage, steppedFetch, type StepHook } from '../../fixtures/refresh-steps.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('refresh grant, write-ahead, validation', () => {
  it('the refresh grant rotates the single-use refresh token and stores the successor before validation', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const before = await readTokens(storage);
    const oldAccess = await m.getAccessToken();
    await m.refreshNow();
    const after = await readTokens(storage);
    expect(sim.stats.grants).toBe(2);
    expect(sim.refreshTokenState(before?.refreshToken ?? '')).toBe('used');
    expect(sim.refreshTokenState(after?.refreshToken ?? '')).toBe('issued');
    expect(after?.refreshInFlight).toBeUndefined();
    expect(after?.accessToken).not.toBe(before?.accessToken);
    expect(after?.pendingAccessToken).toBeUndefined();
    // In memory: the grant's token, or the newer one its validation reply carried.
    expect(await m.getAccessToken()).not.toBe(oldAccess);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('every step is written down before the next: the marker before the request, the successor before validation', async () => {
    const { sim, storage } = await bed.boot();
    const seen: { step: string; record: Awaited<ReturnType<typeof readTokens>> }[] = [];
    const hook: StepHook = async (step) => {
      seen.push({ step, record: await readTokens(storage) });
    };
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() }, fetch: steppedFetch(hook) }, new SteppedStorage(storage.dir, hook));
    await m.start(); // the seed's grant
    seen.length = 0;
    const before = await readTokens(storage);
    await m.refreshNow();
    expect(seen.map((s) => s.step)).toEqual(['markerWritten', 'responseReceived', 'responseRead', 'tokensWritten']);
    const [marker, received, read, written] = seen.map((s) => s.record);
    expect(marker?.refreshInFlight).toBeDefined();
    expect(marker?.refreshToken).toBe(before?.refreshToken);
    expect(received?.refreshToken).toBe(before?.refreshToken);
    expect(read?.refreshToken).toBe(before?.refreshToken);
    expect(written?.refreshInFlight).toBeUndefined();
    expect(written?.refreshToken).not.toBe(before?.refreshToken);
    expect(written?.pendingAccessToken).toBeDefined();
    expect(sim.refreshTokenState(written?.refreshToken ?? '')).toBe('issued');
  });

  it('a refused refresh token while the access token still works: re-authorization needed, but the plugin keeps working', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const access = await m.getAccessToken();
    sim.revokeRefreshToken((await readTokens(storage))?.refreshToken ?? '');
    await expect(m.refreshNow()).rejects.toBeInstanceOf(RefreshRejectedError);
    expect(m.state).toBe('reauthorizationNeeded');
    expect(await m.getAccessToken()).toBe(access);
    expect(await tokenWorks(sim, access)).toBe(true);
  });

  it('single flight in one process: refreshes asked for at once share one grant', async () => {
    const { sim } = await bed.boot({ latencyMs: 20 });
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const grants = sim.stats.grants;
    await Promise.all([m.refreshNow(), m.refreshNow(), m.refreshNow()]);
    expect(sim.stats.grants - grants).toBe(1);
  });
});

describe('a token endpoint that answers 503 has not used the refresh token', () => {
  it('keeps the refresh token, stays linked, and the next attempt renews with it', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const refresh = (await readTokens(storage))?.refreshToken ?? '';
    sim.faults.failNext(1, 503, 'POST /oauth/access_token');
    await expect(m.refreshNow()).rejects.toBeInstanceOf(TransientError);
    expect(sim.refreshTokenState(refresh)).toBe('issued');
    const record = await readTokens(storage);
    expect(record?.refreshToken).toBe(refresh);
    expect(record?.refreshTokenLost).toBeUndefined();
    expect(m.state).toBe('linked');
    await m.refreshNow();
    expect(sim.refreshTokenState(refresh)).toBe('used');
    const renewed = (await readTokens(storage))?.refreshToken ?? '';
    expect(renewed).not.toBe(refresh);
    expect(sim.refreshTokenState(renewed)).toBe('issued');
  });
});

describe('"rotation committed, response failed" (sim.faults.rotateThenFail)', () => {
  for (const mode of ['drop', '500'] as const) {
    it(`${mode}: the spent refresh token is never sent again; the old access token stays in use and alive`, async () => {
      const { sim, storage } = await bed.boot();
      const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
      await m.start();
      const access = await m.getAccessToken();
      const oldRefresh = (await readTokens(storage))?.refreshToken ?? '';
      sim.faults.rotateThenFail(mode);
      await expect(m.refreshNow()).rejects.toBeInstanceOf(TransientError);
      expect(sim.refreshTokenState(oldRefresh)).toBe('used');
      const record = await readTokens(storage);
      expect(record?.refreshToken).toBeUndefined();
      expect(record?.refreshTokenLost).toBe('uncertain');
      expect(m.state).toBe('linked');
      expect(m.status().message).toContain('may have replaced the refresh token');
      expect(bed.log.text('warn').join('\n')).toContain('the old one will never be sent again');
      expect(await m.getAccessToken()).toBe(access);
      const sent = sim.stats.byRoute['POST /oauth/access_token'];
      await expect(m.refreshNow()).rejects.toBeInstanceOf(RefreshRejectedError);
      expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(sent);
      const result = await m.testConnection();
      expect(result.ok).toBe(true);
    });
  }
});
