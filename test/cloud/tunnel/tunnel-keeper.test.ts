// Design "Reach", built-in tunnel: the tunnel's life with a scripted adapter and fake timers:
// the address adopted (origin plus the listener's path), one error per cause with what to do,
// back-off, nothing adopted before a success, a session that drops and comes back elsewhere,
// and the close at shutdown.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { TUNNEL_RETRY, TunnelKeeper, type TunnelState } from '../../../src/cloud/tunnel/tunnel-keeper.js';
import { captureLog } from '../cloud-fixture.js';
import { ScriptedAdapter, type Scripted } from './scripted-adapter.js';

function keeper(script: Scripted[], prefix = '/lock-access') {
  const adapter = new ScriptedAdapter(script);
  const log = captureLog();
  const addresses: string[] = [];
  const states: TunnelState[] = [];
  const k = new TunnelKeeper({
    adapter,
    target: { host: '127.0.0.1', port: 8582, https: false },
    prefix,
    domain: 'calm-otter.ngrok-free.app',
    log,
    onAddress: (url) => addresses.push(url),
    onState: (state) => states.push(state),
    now: Date.now,
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (handle) => {
      clearTimeout(handle as NodeJS.Timeout);
    },
  });
  return { k, adapter, log, addresses, states, last: () => states.at(-1) };
}

describe('design "Reach": the tunnel keeper', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-25T10:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('adopts https://<domain> plus the listener path as the public address, once, and says so', async () => {
    const t = keeper([{ origin: 'https://calm-otter.ngrok-free.app' }]);
    expect(t.k.address).toBeUndefined();
    await t.k.start();
    expect(t.adapter.targets).toEqual([{ host: '127.0.0.1', port: 8582, https: false }]);
    expect(t.addresses).toEqual(['https://calm-otter.ngrok-free.app/lock-access']);
    expect(t.k.address).toBe('https://calm-otter.ngrok-free.app/lock-access');
    expect(t.states.map((s) => s.state)).toEqual(['connecting', 'connected']);
    expect(t.last()?.url).toBe('https://calm-otter.ngrok-free.app/lock-access');
    expect(t.log.text('info').join('\n')).toMatch(/ngrok tunnel is connected: the service reaches this plugin at https:\/\/calm-otter\.ngrok-free\.app\/lock-access/);
    expect(t.log.text('error')).toEqual([]);
  });

  it('a failure is ONE error naming ngrok, the cause and the fix; no address is adopted; it is tried again on back-off (30 s, doubling, at most 30 min)', async () => {
    const t = keeper([
      { fail: 'network', detail: 'failed to connect session: failed to establish tcp connection' },
      { fail: 'network', detail: 'failed to connect session: failed to establish tcp connection' },
      { fail: 'network', detail: 'failed to connect session' },
      { origin: 'https://calm-otter.ngrok-free.app' },
    ]);
    await t.k.start();
    const errors = t.log.text('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/ngrok tunnel could not connect: ngrok cannot be reached from this machine\./);
    // What ngrok said is in the log line only: the page gets the code.
    expect(errors[0]).toMatch(/\(ngrok: failed to connect session: failed to establish tcp connection\)/);
    expect(t.last()?.message).toEqual({ code: 'tunnel.failed.network', params: {}, text: expect.not.stringMatching(/failed to connect session/) as unknown });
    expect(errors[0]).toMatch(/Check the Homebridge machine's internet connection/);
    expect(errors[0]).toMatch(/tries again on its own/);
    expect(errors[0]).toMatch(/nothing is registered with the service/);
    expect(t.addresses).toEqual([]);
    expect(t.k.address).toBeUndefined();
    expect(t.last()).toMatchObject({ state: 'failed', nextTryAt: Date.now() + TUNNEL_RETRY.firstMs });

    await vi.advanceTimersByTimeAsync(TUNNEL_RETRY.firstMs - 1);
    expect(t.adapter.calls).toEqual(['open']);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.adapter.calls).toEqual(['open', 'open']);
    // The same cause again: a debug line, not another error.
    expect(t.log.text('error')).toHaveLength(1);
    expect(t.log.text('debug').join('\n')).toMatch(/try 2 failed again/);
    expect(t.last()?.nextTryAt).toBe(Date.now() + 2 * TUNNEL_RETRY.firstMs);
    await vi.advanceTimersByTimeAsync(2 * TUNNEL_RETRY.firstMs);
    expect(t.adapter.calls).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(4 * TUNNEL_RETRY.firstMs);
    expect(t.adapter.calls).toHaveLength(4);
    expect(t.addresses).toEqual(['https://calm-otter.ngrok-free.app/lock-access']);
    expect(t.log.text('info').join('\n')).toMatch(/connects again after 3 failed tries/);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('the back-off stops growing at 30 minutes', async () => {
    const t = keeper(Array.from({ length: 12 }, () => ({ fail: 'network' as const })));
    await t.k.start();
    for (let i = 0; i < 10; i++) await vi.runOnlyPendingTimersAsync();
    const delays = t.states.filter((s) => s.state === 'failed').map((s) => (s.nextTryAt ?? 0) - s.since);
    expect(delays.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(Math.max(...delays)).toBe(TUNNEL_RETRY.maxMs);
    expect(t.log.text('error')).toHaveLength(1);
  });

  it('another cause is a new error line (a refused authtoken, then a refused domain), each with its own fix', async () => {
    const t = keeper([{ fail: 'authtoken', detail: 'ERR_NGROK_107' }, { fail: 'domain', detail: 'ERR_NGROK_320' }]);
    await t.k.start();
    await vi.runOnlyPendingTimersAsync();
    const errors = t.log.text('error');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/ngrok refused the authtoken\. Copy your authtoken again from https:\/\/dashboard\.ngrok\.com\/get-started\/your-authtoken.*\(ngrok: ERR_NGROK_107\)/);
    expect(errors[1]).toMatch(/ngrok refused the domain calm-otter\.ngrok-free\.app: it is not a domain of the ngrok account.*\(ngrok: ERR_NGROK_320\)/);
    expect(t.last()?.message).toMatchObject({ code: 'tunnel.failed.domain', params: { domain: 'calm-otter.ngrok-free.app' } });
    expect(t.addresses).toEqual([]);
  });

  it('no SDK build for this machine: one error saying how to fix it, and no pointless retries', async () => {
    const t = keeper([{ fail: 'sdkMissing', detail: "Cannot find package '@ngrok/ngrok'" }]);
    await t.k.start();
    expect(t.log.text('error')).toHaveLength(1);
    expect(t.log.text('error')[0]).toMatch(/ngrok SDK \(@ngrok\/ngrok\) is not installed for this machine/);
    expect(t.log.text('error')[0]).toMatch(/set webhook\.publicUrl/);
    expect(t.last()).toMatchObject({ state: 'failed' });
    expect(t.last()?.nextTryAt).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a session that drops warns once; when it comes back at another address, that address is adopted (registrations follow)', async () => {
    const t = keeper([{ origin: 'https://a1b2.ngrok-free.app' }], '');
    await t.k.start();
    t.k.sessionLost();
    t.k.sessionLost();
    expect(t.log.text('warn')).toHaveLength(1);
    expect(t.last()?.state).toBe('reconnecting');
    t.k.sessionBack('https://c3d4.ngrok-free.app');
    expect(t.addresses).toEqual(['https://a1b2.ngrok-free.app', 'https://c3d4.ngrok-free.app']);
    expect(t.last()).toMatchObject({ state: 'connected', url: 'https://c3d4.ngrok-free.app' });
    // Back at the same address: nothing to register again.
    t.k.sessionLost();
    t.k.sessionBack('https://c3d4.ngrok-free.app');
    expect(t.addresses).toHaveLength(2);
  });

  it('shutdown closes the tunnel and ends the retries', async () => {
    const t = keeper([{ fail: 'network' }, { origin: 'https://never.ngrok-free.app' }]);
    await t.k.start();
    expect(vi.getTimerCount()).toBe(1);
    await t.k.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(t.adapter.calls).toEqual(['open', 'close']);
    expect(t.last()?.state).toBe('closed');
    await vi.advanceTimersByTimeAsync(TUNNEL_RETRY.maxMs);
    expect(t.adapter.calls).toEqual(['open', 'close']);
  });

  it('shutdown while the tunnel is still opening: the late tunnel is closed and its address never adopted', async () => {
    let answer: (origin: string) => void = () => undefined;
    const t = keeper([{ hold: new Promise<string>((resolve) => { answer = resolve; }) }]);
    const opening = t.k.start();
    const stopping = t.k.stop();
    answer('https://late.ngrok-free.app');
    await opening;
    await stopping;
    expect(t.addresses).toEqual([]);
    expect(t.adapter.calls.filter((c) => c === 'close').length).toBeGreaterThanOrEqual(1);
    expect(t.last()?.state).toBe('closed');
  });
});
