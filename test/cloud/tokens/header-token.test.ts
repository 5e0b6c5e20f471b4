// Tokens from answers' headers ("Every API response's x-svc-access-token header is kept in
// memory at once and persisted at most once per 24 h").
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { readTokens, tokenTestBed } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('header tokens are used at once and written at most once per 24 h (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 1) });
  });

  it('header tokens are used in memory at once and written to disk at most once per 24 h', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    const writesBefore = storage.tokenWrites;
    const stored = (await readTokens(storage))?.accessToken;
    for (let hour = 0; hour < 47; hour += 1) {
      const before = await m.getAccessToken();
      await client.request('GET', '/users/me');
      await m.settled();
      expect(await m.getAccessToken()).not.toBe(before);
      await vi.advanceTimersByTimeAsync(60 * 60 * 1000);
    }
    // 47 hours of calls: the day-1 and day-2 boundaries at most.
    expect(storage.tokenWrites - writesBefore).toBeGreaterThanOrEqual(1);
    expect(storage.tokenWrites - writesBefore).toBeLessThanOrEqual(2);
    expect((await readTokens(storage))?.accessToken).not.toBe(stored);
  });

  it('a token the service refused is never taken back from a header, and an empty header changes nothing', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const old = await m.getAccessToken();
    sim.revokeAccessTokens();
    const fresh = await m.handleUnauthorized(old);
    m.noteResponseToken(old);
    m.noteResponseToken('');
    expect(await m.getAccessToken()).toBe(fresh);
    m.noteResponseToken('a-newer-token');
    expect(await m.getAccessToken()).toBe('a-newer-token');
  });
});
