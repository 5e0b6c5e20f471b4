// RFC 6749 section 5.2 against the simulator: a refresh 400 that blames our own client settings
// (invalid_client, unauthorized_client, invalid_request) leaves the refresh token unused. The plugin
// keeps it, says once which setting to fix, shows it in the status, and after the fix and a restart
// the same refresh token links.
import { describe, expect, it } from 'vitest';

import { RequestRejectedError } from '../../../src/cloud/http/errors.js';
import { SettingsViews } from '../../../src/settings-ui/settings-views.js';
import { CloudSession } from '../../../src/settings-ui/cloud-session.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

describe('a wrong client secret never costs the refresh token', () => {
  it('wrong secret: a warning naming clientSecret (once), the token kept unused; fixed secret after a restart: linked with that same token', async () => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const wrong = bed.manager({ seeds: { refreshToken: seed }, clientSecret: 'typo-in-the-secret' });
    await wrong.start();

    // The simulator answered 400 invalid_client without looking at the token.
    expect(sim.refreshTokenState(seed)).toBe('issued');
    const stored = await readTokens(storage);
    expect(stored?.refreshToken).toBe(seed);
    expect(stored?.refreshInFlight).toBeUndefined();
    expect(stored?.settingsProblem).toBe('clientSecret');
    expect(wrong.status()).toMatchObject({ problem: 'settings', setting: 'clientSecret' });
    expect(wrong.status().message).toContain('clientSecret');
    expect(wrong.state).not.toBe('reauthorizationNeeded');

    // Every later attempt fails the same way, but the log says it once.
    await expect(wrong.refreshNow()).rejects.toBeInstanceOf(RequestRejectedError);
    await expect(wrong.getAccessToken()).rejects.toBeInstanceOf(RequestRejectedError);
    const warnings = bed.log.text('warn').filter((line) => line.includes('clientSecret'));
    expect(warnings).toHaveLength(1);
    expect(bed.log.text('error').join('\n')).not.toContain('link your account again');
    expect(sim.refreshTokenState(seed)).toBe('issued');
    // No secret in the log.
    expect(bed.log.lines.map((l) => l.message).join('\n')).not.toContain(seed);
    wrong.stop();
    await wrong.settled();

    // The settings page reads the token file: it shows the setting to fix, not "linked".
    const views = new SettingsViews(new CloudSession({ storage, createClient: () => { throw new Error('not used'); }, log: bed.log, now: Date.now }), Date.now);
    const page = await views.status();
    expect(page.link.state).toBe('checkSettings');
    expect(page.link.message.text).toContain('clientSecret');
    // In the page's language: the code names the field, no English sentence as a param.
    expect(page.link.message).toMatchObject({ code: 'link.checkSetting', params: { field: 'clientSecret' } });

    // The user fixes the secret and restarts.
    const fixed = bed.manager({ seeds: { refreshToken: seed } });
    expect(await fixed.start()).toBe('linked');
    expect(sim.refreshTokenState(seed)).toBe('used');
    const after = await readTokens(storage);
    expect(after?.settingsProblem).toBeUndefined();
    expect(after?.message).toBeUndefined();
    expect(fixed.status().problem).toBeUndefined();
    expect(await tokenWorks(sim, await fixed.getAccessToken())).toBe(true);
    expect((await views.status()).link.state).toBe('linked');
  });

  it('a fixed secret links at restart even while an access token is still stored', async () => {
    const { sim, storage } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    const kept = (await readTokens(storage))?.refreshToken ?? '';
    m.stop();
    await m.settled();
    // A later renewal with a secret that was changed in the config by mistake.
    const wrong = bed.manager({ clientSecret: 'changed-by-mistake' });
    await wrong.start();
    await expect(wrong.refreshNow()).rejects.toBeInstanceOf(RequestRejectedError);
    // The access token still works meanwhile: HomeKit is not interrupted.
    expect(await tokenWorks(sim, await wrong.getAccessToken())).toBe(true);
    expect((await readTokens(storage))?.refreshToken).toBe(kept);
    wrong.stop();
    await wrong.settled();
    const fixed = bed.manager();
    await fixed.start();
    expect(sim.refreshTokenState(kept)).toBe('used');
    expect(fixed.status().problem).toBeUndefined();
  });

  it('invalid_grant still means the token is spent: re-authorization needed', async () => {
    const { sim, storage } = await bed.boot();
    const seed = sim.issueRefreshToken();
    sim.revokeRefreshToken(seed);
    const m = bed.manager({ seeds: { refreshToken: seed } });
    expect(await m.start()).toBe('reauthorizationNeeded');
    expect((await readTokens(storage))?.refreshToken).toBeUndefined();
    expect(m.status().problem).toBeUndefined();
  });
});
