// After an unlink nothing brings a token back: an answer that was in flight during the unlink
// carries a token in its header, and it is ignored; an unlink followed by a new link faster than
// the plugin looks at the token file still reads as an unlink, so every webhook is registered again.
import { describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { NotLinkedError } from '../../../src/cloud/http/errors.js';
import type { LinkState } from '../../../src/cloud/tokens/token-manager.js';
import { LinkControl, type Registrar } from '../../../src/cloud/link-control.js';
import { SteppedStorage, steppedFetch, type StepHook } from '../../fixtures/refresh-steps.js';
import { readTokens, tokenTestBed } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

/** A registrar that deletes nothing and records when it is stopped (which registrar, by name). */
function standInRegistrar(name: string, calls: string[]): Registrar {
  return {
    reconcile: () => Promise.reject(new Error('not used here')),
    addressChanged: () => undefined,
    sendAllAgain: (reason) => {
      calls.push(`${name} sendAllAgain: ${reason}`);
      return Promise.resolve({ registered: [], deleted: [], unchanged: [], failed: [], authorizationLost: false, skipped: true });
    },
    status: () => [],
    unlinkAll: () => Promise.resolve({ deleted: 0, left: [] }),
    knownRegistrations: () => Promise.resolve([]),
    stop: () => calls.push(`${name} stop`),
  };
}

/** The running plugin's link control over `plugin`, with stand-in registrars: the link states seen and what was called. */
function followLink(plugin: ReturnType<typeof bed.manager>): { seen: LinkState[]; calls: string[]; link: LinkControl; made: () => number } {
  const seen: LinkState[] = [];
  const calls: string[] = [];
  let made = 0;
  const link = new LinkControl({
    log: bed.log,
    status: { link: () => undefined, registrations: () => undefined },
    newRegistrar: () => standInRegistrar(`registrar${String(++made)}`, calls),
    tokens: plugin,
    converge: (asFirstRun) => calls.push(`converge ${String(asFirstRun)}`),
  });
  plugin.onStateChange((state) => {
    seen.push(state);
    link.onLinkState(state);
  });
  return { seen, calls, link, made: () => made };
}

describe('an answer in flight during the unlink brings no token back', () => {
  it('the header token of a request sent before the unlink is ignored', async () => {
    const { sim, storage } = await bed.boot({ latencyMs: 50 });
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: m });
    const inFlight = client.request('GET', '/users/me');
    // Let the request leave with its token, then unlink while the answer is on its way.
    await new Promise((resolve) => setImmediate(resolve));
    await m.unlink();
    await inFlight;
    await m.settled();
    expect(m.canAuthenticate()).toBe(false);
    await expect(m.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
    const onDisk = await readTokens(storage);
    expect(onDisk?.state).toBe('unlinked');
    expect(onDisk?.accessToken).toBeUndefined();
  });

  it('a late header from before the unlink does not replace the token of the new link', async () => {
    const { sim } = await bed.boot();
    const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } });
    await m.start();
    m.stop();
    const oldToken = await m.getAccessToken();
    await m.unlink();
    m.noteResponseToken('token-from-the-old-link', oldToken);
    expect(m.canAuthenticate()).toBe(false);
    await m.linkWithRefreshToken(sim.issueRefreshToken());
    const fresh = await m.getAccessToken();
    m.noteResponseToken('token-from-the-old-link', oldToken);
    expect(await m.getAccessToken()).toBe(fresh);
    // Answers of the new link still rotate the token as usual.
    m.noteResponseToken('token-of-the-new-link', fresh);
    expect(await m.getAccessToken()).toBe('token-of-the-new-link');
  });
});

describe('an unlink and a new link in the settings, faster than the plugin looks at the file', () => {
  it('the plugin still sees the unlink, then the link: a fresh registrar registers every webhook again', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const plugin = bed.manager({ seeds: { refreshToken: seed } });
    await plugin.start();
    const { seen, calls, link, made } = followLink(plugin);

    // The settings server: unlink (it deletes the registrations), then link again at once.
    const ui = bed.manager({ seeds: { refreshToken: seed } });
    await ui.start();
    ui.stop();
    await ui.unlink();
    await ui.linkWithRefreshToken(sim.issueRefreshToken());

    // The plugin looks at the file only now: both changes arrive at once.
    expect(await plugin.syncWithStore()).toBe('linked');
    expect(seen).toEqual(['unlinked', 'linked']);
    expect(calls).toContain('registrar1 stop');
    // The fresh registrar sends every webhook, whatever the list the unlink left says.
    expect(calls).toContain(`registrar${String(made())} sendAllAgain: the account was linked again`);
    expect(calls.at(-1)).toBe('converge true');
    expect(link.idle).toBe(false);
    expect(made()).toBeGreaterThanOrEqual(2);
  });

  it('a token renewal made by the other process is not an unlink', async () => {
    const { sim } = await bed.boot();
    const seed = sim.issueRefreshToken();
    const plugin = bed.manager({ seeds: { refreshToken: seed } });
    await plugin.start();
    const seen: LinkState[] = [];
    plugin.onStateChange((state) => seen.push(state));
    const ui = bed.manager({ seeds: { refreshToken: seed } });
    await ui.start();
    ui.stop();
    await ui.refreshNow();
    expect(await plugin.syncWithStore()).toBe('linked');
    expect(seen).toEqual([]);
  });
});

describe('an unlink while a token renewal is in flight', () => {
  it.each(['markerWritten', 'responseReceived', 'tokensWritten'] as const)(
    'renewal paused at %s: the link never switches back to "linked" (no new registrar, no first-run set-up, no "linked again")',
    async (pauseAt) => {
      const { sim, storage } = await bed.boot();
      let release: () => void = () => undefined;
      let paused: () => void = () => undefined;
      const reachedPause = new Promise<void>((resolve) => {
        paused = resolve;
      });
      let armed = false;
      const hook: StepHook = (step) => {
        if (!armed || step !== pauseAt) return undefined;
        armed = false;
        paused();
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      };
      const plugin = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() }, fetch: steppedFetch(hook) }, new SteppedStorage(storage.dir, hook));
      await plugin.start();
      plugin.stop();
      const { seen, calls, link, made } = followLink(plugin);

      armed = true;
      const renewal = plugin.refreshNow().catch(() => undefined);
      await reachedPause;
      // The account is deleted (or unlinked) while the renewal waits.
      const unlinked = link.unlink('the account was deleted');
      await new Promise((resolve) => setImmediate(resolve));
      release();
      await Promise.all([renewal, unlinked]);
      await plugin.settled();

      expect(seen).not.toContain('linked');
      expect(plugin.state).toBe('unlinked');
      expect(made()).toBe(1);
      expect(calls).not.toContain('converge true');
      const messages = bed.log.lines.map((line) => line.message);
      expect(messages.some((line) => line.includes('linked again'))).toBe(false);
      expect(messages.some((line) => line.includes('is unlinked because the account was deleted'))).toBe(true);
      expect(plugin.canAuthenticate()).toBe(false);
      await expect(plugin.getAccessToken()).rejects.toBeInstanceOf(NotLinkedError);
      const onDisk = await readTokens(storage);
      expect(onDisk?.state).toBe('unlinked');
      expect(onDisk?.refreshToken).toBeUndefined();
      expect(onDisk?.accessToken).toBeUndefined();
    },
  );
});
