// The keep-alive timer ("A daily keep-alive call keeps the access token valid without
// spending the refresh token; the refresh grant runs when the token nears expiry").
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { DAY_MS } from '../../../src/cloud/tokens/keep-alive.js';
import type { TokenManager } from '../../../src/cloud/tokens/token-manager.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';
import type { Simulator } from '../../sim/index.js';

const bed = tokenTestBed();

const usersMeCalls = (sim: Simulator): number => sim.stats.byRoute['GET /api/users/me'] ?? sim.stats.byRoute['GET /users/me'] ?? 0;

describe('daily keep-alive and expiry refresh (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 1) });
  });

  async function days(m: TokenManager, count: number, step = DAY_MS / 4): Promise<void> {
    for (let elapsed = 0; elapsed < count * DAY_MS; elapsed += step) {
      await vi.advanceTimersByTimeAsync(step);
      await m.settled();
    }
  }

  it('"stay linked for years": with the daily keep-alive the refresh token is not spent while tokens would have expired', async () => {
    const { sim } = await bed.boot(); // four-month tokens, each reply extends validity by a day
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    await days(m, 150, DAY_MS);
    expect(sim.stats.grants).toBe(1);
    expect(usersMeCalls(sim)).toBeGreaterThanOrEqual(150);
    expect(usersMeCalls(sim)).toBeLessThan(160);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    expect(m.state).toBe('linked');
  }, 120_000);

  it('the refresh token is spent (and saved first) well before its one-year limit, and the log says so', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const first = (await readTokens(storage))?.refreshToken ?? '';
    await days(m, 299, DAY_MS);
    expect(sim.stats.grants).toBe(1);
    await days(m, 2, DAY_MS);
    expect(sim.stats.grants).toBe(2);
    expect(sim.refreshTokenState(first)).toBe('used');
    expect(bed.log.text('info').some((line) => /refresh token is 300 days old.*one year at most/.test(line))).toBe(true);
    // A year and more after the link, the link still renews on its own.
    await days(m, 100, DAY_MS);
    const stored = (await readTokens(storage))?.refreshToken ?? '';
    expect(sim.refreshTokenState(stored)).toBe('issued');
    sim.revokeAccessTokens();
    await m.refreshNow();
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    expect(m.state).toBe('linked');
    // 400 days, each with real HTTP to the simulator and a token file written: a loaded machine needs long.
  }, 120_000);

  it('refreshes when 10% of a 10-day lifetime remains, "never more than needed"', async () => {
    const { sim } = await bed.boot({ accessTokenLifetimeSeconds: 10 * 86_400, accessTokenExtensionSeconds: 1 });
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    expect(sim.stats.grants).toBe(1);
    await days(m, 8.5);
    expect(sim.stats.grants).toBe(1);
    await days(m, 1);
    expect(sim.stats.grants).toBe(2);
    await days(m, 20.5);
    expect(sim.stats.grants).toBe(4); // days 9, 18, 27
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('timers never throw: a keep-alive during an outage is retried with back-off and the link survives', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    sim.faults.failNext(5, 503, '/users/me');
    await days(m, 2, 60 * 60 * 1000);
    expect(m.state).toBe('linked');
    expect(sim.stats.grants).toBe(1);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
  });

  it('failed rounds back off 1 min doubling, and only the third failure in a row is a warning', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    await days(m, 1, DAY_MS); // the first daily keep-alive succeeded; the next is due a day later
    sim.faults.failNext(3, 503, '/users/me');
    const calls = usersMeCalls(sim);
    await days(m, 1, DAY_MS);
    expect(usersMeCalls(sim) - calls).toBe(1);
    expect(bed.log.text('warn')).toEqual([]);
    await vi.advanceTimersByTimeAsync(60_000);
    await m.settled();
    expect(usersMeCalls(sim) - calls).toBe(2);
    await vi.advanceTimersByTimeAsync(119_000);
    await m.settled();
    expect(usersMeCalls(sim) - calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    await m.settled();
    expect(usersMeCalls(sim) - calls).toBe(3);
    expect(bed.log.text('warn').filter((line) => line.includes('keep the tokens fresh'))).toHaveLength(1);
    expect(bed.log.text('warn')[0]).toContain('Trying again in 4 min');
  });

  it('stop() clears the timers: nothing runs afterwards', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const calls = sim.stats.apiCalls;
    await days(m, 3);
    expect(sim.stats.apiCalls).toBe(calls);
  });
});
