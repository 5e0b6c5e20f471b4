// A refresh 400 is read by its OAuth `error`, case-insensitively (RFC 6749 section 5.2): only
// invalid_grant, or a body without a readable error, spends the refresh token. Any other word says
// nothing about the token: it is kept and the grant is tried again on the back-off schedule. The
// client errors, in any case, blame the plugin's settings and keep the token for after the fix.
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('a refresh 400 is read by its OAuth error word', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 0, 1) });
  });

  it.each(['server_error', 'temporarily_unavailable', 'slow_down', 'invalid_scope', 'unsupported_grant_type', 'a_word_nobody_knows', 'Server_Error', 'not even a word!'])(
    '400 %s: the refresh token is kept, nothing asks to link again, and the grant is tried again after the back-off',
    async (word) => {
      const { sim, storage } = await bed.boot();
      const seed = sim.issueRefreshToken();
      sim.faults.refuseGrantNext(1, { error: word });
      const m = bed.manager({ seeds: { refreshToken: seed } });
      expect(await m.start()).not.toBe('reauthorizationNeeded');

      expect(sim.refreshTokenState(seed)).toBe('issued');
      const kept = await readTokens(storage);
      expect(kept?.refreshToken).toBe(seed);
      expect(kept?.refreshTokenLost).toBeUndefined();
      expect(kept?.refreshInFlight).toBeUndefined();
      expect(kept?.state).toBe('linked');
      expect(m.status().problem).toBeUndefined();
      expect(bed.log.text('error').join('\n')).not.toContain('link your account again');
      expect(sim.stats.grants).toBe(0);

      // The first step of the back-off schedule later, the same refresh token links.
      await vi.advanceTimersByTimeAsync(60_000);
      await m.settled();
      expect(sim.refreshTokenState(seed)).toBe('used');
      expect(m.state).toBe('linked');
      expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
      expect(bed.log.lines.map((line) => line.message).join('\n')).not.toContain(seed);
    },
  );

  it('a restart after such an answer tries the still-valid refresh token again', async () => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    sim.faults.refuseGrantNext(1, { error: 'temporarily_unavailable' });
    const first = bed.manager({ seeds: { refreshToken: seed } });
    await first.start();
    first.stop();
    await first.settled();
    expect((await readTokens(storage))?.refreshToken).toBe(seed);

    const again = bed.manager({ seeds: { refreshToken: seed } });
    expect(await again.start()).toBe('linked');
    expect(sim.refreshTokenState(seed)).toBe('used');
  });

  it.each([
    ['INVALID_CLIENT', 'clientSecret'],
    ['Unauthorized_Client', 'clientId'],
    ['INVALID_REQUEST', 'clientId and clientSecret'],
  ])('400 %s blames the settings: %s named once, shown in the status, the token kept; after a restart it links', async (word, setting) => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    sim.faults.refuseGrantNext(3, { error: word });
    const wrong = bed.manager({ seeds: { refreshToken: seed } });
    await wrong.start();
    expect(sim.refreshTokenState(seed)).toBe('issued');
    const stored = await readTokens(storage);
    expect(stored?.refreshToken).toBe(seed);
    expect(stored?.settingsProblem).toBe(setting);
    expect(wrong.status()).toMatchObject({ problem: 'settings' });
    expect(wrong.status().message).toContain(`Fix ${setting === 'clientId and clientSecret' ? 'them' : setting}`);
    expect(wrong.state).not.toBe('reauthorizationNeeded');
    await expect(wrong.refreshNow()).rejects.toThrow(setting);
    expect(bed.log.text('warn').filter((line) => line.includes(setting))).toHaveLength(1);
    wrong.stop();
    await wrong.settled();

    sim.faults.clear();
    const fixed = bed.manager({ seeds: { refreshToken: seed } });
    expect(await fixed.start()).toBe('linked');
    expect(sim.refreshTokenState(seed)).toBe('used');
    expect(fixed.status().problem).toBeUndefined();
  });

  it.each([
    ['INVALID_GRANT', { error: 'INVALID_GRANT' }],
    ['a JSON body without error', { error_description: 'no' }],
    ['a body that is not JSON', 'Bad Request'],
    ['an error that is not a string', { error: 42 }],
  ])('400 with %s: the refresh token counts as spent (re-authorization needed)', async (_name, body) => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    sim.faults.refuseGrantNext(1, body);
    const m = bed.manager({ seeds: { refreshToken: seed } });
    expect(await m.start()).toBe('reauthorizationNeeded');
    expect((await readTokens(storage))?.refreshToken).toBeUndefined();
  });
});
