// Design "Reach", built-in tunnel: the ngrok adapter. What it hands the SDK, how each SDK failure
// becomes a cause with its fix (never quoting the authtoken), the SDK missing on this platform,
// an open that never answers, and the real SDK offline: no network here, so forward() fails at
// once with "failed to connect session", which must read as "ngrok cannot be reached".
import { describe, expect, it, vi } from 'vitest';

import { NgrokAdapter, ngrokProblem, type NgrokListener, type NgrokSdk } from '../../../src/cloud/tunnel/ngrok-adapter.js';
import { TunnelError } from '../../../src/cloud/tunnel/tunnel-adapter.js';

const AUTHTOKEN = '2abcDEFghiJKLmnoPQRstuVWX_1234567890abcdefghij';
const target = { host: '127.0.0.1', port: 8582, https: false };

function fakeSdk(answer: (config: Record<string, unknown>) => Promise<NgrokListener>) {
  const configs: Record<string, unknown>[] = [];
  const sdk: NgrokSdk = {
    forward: (config) => {
      configs.push(config);
      return answer(config);
    },
  };
  return { sdk, configs };
}

const listener = (url: string, closed: string[] = []): NgrokListener => ({
  url: () => url,
  close: () => {
    closed.push(url);
    return Promise.resolve();
  },
});

describe('design "Reach": the ngrok adapter', () => {
  it('forwards the listener with the authtoken and domain, and answers the address ngrok gives', async () => {
    const { sdk, configs } = fakeSdk(() => Promise.resolve(listener('https://calm-otter.ngrok-free.app')));
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app', load: () => Promise.resolve(sdk) });
    await expect(adapter.open(target)).resolves.toBe('https://calm-otter.ngrok-free.app');
    expect(configs[0]).toMatchObject({ addr: '127.0.0.1:8582', authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' });
    expect(configs[0]).not.toHaveProperty('verify_upstream_tls');
  });

  it('without a domain none is asked for; a listener serving https is forwarded as https without checking its certificate against 127.0.0.1', async () => {
    const { sdk, configs } = fakeSdk(() => Promise.resolve(listener('https://a1b2.ngrok-free.app')));
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, load: () => Promise.resolve(sdk) });
    await adapter.open({ host: '[::1]', port: 9000, https: true });
    expect(configs[0]).toMatchObject({ addr: 'https://[::1]:9000', verify_upstream_tls: false });
    expect(configs[0]).not.toHaveProperty('domain');
  });

  it('closes its listener at shutdown, once', async () => {
    const closed: string[] = [];
    const { sdk } = fakeSdk(() => Promise.resolve(listener('https://x.ngrok-free.app', closed)));
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, load: () => Promise.resolve(sdk) });
    await adapter.open(target);
    await adapter.close();
    await adapter.close();
    expect(closed).toEqual(['https://x.ngrok-free.app']);
  });

  it('the session dropping and coming back is handed on with the address ngrok then shows', async () => {
    const events: [string, string | undefined][] = [];
    let status: ((s: string) => void) | undefined;
    const { sdk } = fakeSdk((config) => {
      status = config.onStatusChange as (s: string) => void;
      return Promise.resolve(listener('https://x.ngrok-free.app'));
    });
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, load: () => Promise.resolve(sdk), onStatus: (state, origin) => events.push([state, origin]) });
    await adapter.open(target);
    status?.('closed');
    status?.('connected');
    expect(events).toEqual([['lost', undefined], ['back', 'https://x.ngrok-free.app']]);
  });

  it.each([
    ['authtoken', `authentication failed: The authtoken you specified is properly formed, but it is invalid. Your authtoken: ${AUTHTOKEN}\n\nERR_NGROK_107`],
    ['authtoken', 'authentication failed: Usage of ngrok requires a verified account and authtoken. ERR_NGROK_4018'],
    ['domain', 'failed to start tunnel: This domain is reserved for another account. ERR_NGROK_320'],
    ['domain', 'failed to bind: The domain calm-otter.ngrok-free.app is not reserved by your account. ERR_NGROK_7118'],
    ['inUse', 'failed to start tunnel: The endpoint https://calm-otter.ngrok-free.app is already online. ERR_NGROK_334'],
    ['network', 'failed to connect session: failed to establish tcp connection'],
    ['other', 'something new from ngrok'],
  ] as const)('an SDK failure reads as %s, and the authtoken never appears in its words', (problem, message) => {
    const error = ngrokProblem(Object.assign(new Error(message), { code: 'GenericFailure' }), AUTHTOKEN);
    expect(error.problem).toBe(problem);
    expect(error.detail).not.toContain(AUTHTOKEN);
    expect(error.detail).not.toContain('\n');
  });

  it('an SDK that cannot load on this platform is "sdkMissing"', async () => {
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, load: () => Promise.reject(new Error('Cannot find module \'@ngrok/ngrok-linux-arm-gnueabihf\'\nRequire stack: …')) });
    const failure = await adapter.open(target).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TunnelError);
    expect(failure).toMatchObject({ problem: 'sdkMissing', detail: "Cannot find module '@ngrok/ngrok-linux-arm-gnueabihf'" });
  });

  it('an open that never answers counts as no way to ngrok, and a late tunnel is closed', async () => {
    vi.useFakeTimers();
    try {
      const closed: string[] = [];
      let late: (l: NgrokListener) => void = () => undefined;
      const { sdk } = fakeSdk(() => new Promise<NgrokListener>((resolve) => { late = resolve; }));
      const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, load: () => Promise.resolve(sdk), openTimeoutMs: 30_000 });
      const opening = adapter.open(target).catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(await opening).toMatchObject({ problem: 'network', detail: 'no answer from ngrok within 30 seconds' });
      late(listener('https://late.ngrok-free.app', closed));
      await vi.advanceTimersByTimeAsync(0);
      expect(closed).toEqual(['https://late.ngrok-free.app']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the real SDK on this offline machine: forward() fails at once, read as "ngrok cannot be reached", without the authtoken', async () => {
    const adapter = new NgrokAdapter({ authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' });
    const failure = await adapter.open(target).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TunnelError);
    // Offline (these machines): no way to ngrok. Were it online, the made-up authtoken is refused.
    expect(['network', 'authtoken']).toContain((failure as TunnelError).problem);
    if ((failure as TunnelError).problem === 'network') expect((failure as TunnelError).detail).toMatch(/failed to connect session/);
    expect((failure as TunnelError).detail).not.toContain(AUTHTOKEN);
    await adapter.close();
  });
});
