// The facade as the plugin and the settings UI server use it together ("Single-flight
// ... between the plugin and its UI server"): one store, two processes' managers, and start-up.
import { writeFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import { NotLinkedError } from '../../../src/cloud/http/errors.js';
import { TOKENS_FILE } from '../../../src/cloud/tokens/token-store.js';
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

  it('a damaged token file is reported with what to do, and start() still resolves', async () => {
    const { storage } = await bed.boot();
    await storage.ensureDir();
    await writeFile(storage.file(TOKENS_FILE), '{ not json');
    const m = bed.manager();
    expect(await m.start()).toBe('unlinked');
    expect(bed.log.text('error').join('\n')).toMatch(/could not read its token file .*Move that file away, then link the account again/);
  });
});
