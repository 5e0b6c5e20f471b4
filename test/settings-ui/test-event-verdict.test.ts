import { describe, expect, it } from 'vitest';

import { tunnelMessage } from '../../src/cloud/tunnel/tunnel-messages.js';
import { legacyMessage } from '../../src/util/ui-message.js';

import { emptyStatus, type Status } from '../../src/status/status.js';
import { TEST_EVENT_TIMEOUT_MS, judgeTestEvent, testEventAddress } from '../../src/settings-ui/test-event-verdict.js';

const STARTED = 1_800_000_000_000;
const PUBLIC = 'https://user:pass-word@home.example.net/lock-access';

function status(patch: (s: Status) => void): Status {
  const s = emptyStatus(STARTED);
  s.receiver.listenAddress = '0.0.0.0:8582';
  patch(s);
  return s;
}

const ask = (s: Status | undefined, now = STARTED + 1_000) => judgeTestEvent(s, { lockId: 'L1', startedAt: STARTED, now, publicUrl: PUBLIC });

describe('"Send a test event": what came of it, in one sentence a user can act on', () => {
  it('passed: the status callback came in through the public address with a good signature, and how long it took', () => {
    const verdict = ask(status((s) => { s.receiver.lastCallbacks['lock:L1'] = { deviceKind: 'lock', deviceId: 'L1', at: STARTED + 1_250, kind: 'lockState' }; }));
    expect(verdict).toEqual({
      state: 'passed',
      tookMs: 1_250,
      message: {
        code: 'testEvent.passed',
        params: { url: 'https://home.example.net/lock-access', seconds: 1.3 },
        text: 'The test event came back through https://home.example.net/lock-access in 1.3 s with a good signature: the whole way from the service to HomeKit works.',
      },
    });
  });

  it('a callback from before the test does not count', () => {
    expect(ask(status((s) => { s.receiver.lastCallbacks['lock:L1'] = { deviceKind: 'lock', deviceId: 'L1', at: STARTED - 1 }; })).state).toBe('waiting');
  });

  it.each([
    ['bad-signature', 'testEvent.refused.signature', {}, /API key in the plugin settings differs/],
    ['stale-timestamp', 'testEvent.refused.clockMinutes', { count: 7 }, /time was 7 minutes off: this machine's clock .* is wrong\. Turn on time sync/],
    ['bad-token', 'testEvent.refused.token', {}, /webhook token did not match.*Restart Homebridge/],
    ['body-too-large', 'testEvent.refused.other', { reason: 'body-too-large' }, /the listener refused it \(body-too-large\)/],
  ])('refused (%s): which check failed and what to do', (reason, code, params, words) => {
    const verdict = ask(status((s) => { s.receiver.lastRejection = { at: STARTED + 900, reason, device: 'lock:L1', clockOffsetMs: 420_000 }; }));
    expect(verdict.state).toBe('refused');
    expect(verdict.message).toMatchObject({ code, params });
    expect(verdict.message.text).toMatch(/^A callback arrived, but /);
    expect(verdict.message.text).toMatch(words);
  });

  it('refused for its time: the offset in seconds below a minute and a half, without one the plain words', () => {
    const offBy = (clockOffsetMs: number | undefined) => ask(status((s) => { s.receiver.lastRejection = { at: STARTED + 900, reason: 'future-timestamp', device: 'lock:L1', ...(clockOffsetMs === undefined ? {} : { clockOffsetMs }) }; })).message;
    expect(offBy(-45_000)).toMatchObject({ code: 'testEvent.refused.clockSeconds', params: { count: 45 } });
    expect(offBy(-45_000).text).toMatch(/its time was 45 seconds off/);
    expect(offBy(1_000).text).toMatch(/its time was 1 second off/);
    expect(offBy(undefined)).toMatchObject({ code: 'testEvent.refused.clock', params: {} });
  });

  it('arrived at another path: the proxy or tunnel changes the path', () => {
    const verdict = ask(status((s) => { s.receiver.lastUnknownPath = { at: STARTED + 700, path: '/lock/L1' }; }));
    expect(verdict).toMatchObject({ state: 'otherPath', message: { code: 'testEvent.otherPath', params: { path: '/lock/L1', expected: '/lock-access/lock/L1', prefix: '/lock-access' } } });
    expect(verdict.message.text).toBe('A request arrived at /lock/L1, not at /lock-access/lock/L1: your proxy or tunnel changes the path. Forward the path as it is (keep /lock-access).');
  });

  it('nothing arrived within 30 seconds: the service cannot reach the public address (shown without its credentials)', () => {
    expect(ask(status(() => undefined), STARTED + TEST_EVENT_TIMEOUT_MS - 1).state).toBe('waiting');
    const verdict = ask(status(() => undefined), STARTED + TEST_EVENT_TIMEOUT_MS);
    expect(verdict.state).toBe('nothing');
    expect(verdict.message).toMatchObject({ code: 'testEvent.nothingAt', params: { count: 30, url: 'https://home.example.net/lock-access', listener: '0.0.0.0:8582' } });
    expect(verdict.message.text).toBe('Nothing arrived within 30 seconds: the service cannot reach https://home.example.net/lock-access. Check that your tunnel or proxy is running and forwards to this plugin\'s listener (0.0.0.0:8582).');
    expect(JSON.stringify(verdict.message)).not.toContain('pass-word');
  });

  it('the product waits 30 s; a callback that came in time passes even when asked about later', () => {
    expect(TEST_EVENT_TIMEOUT_MS).toBe(30_000);
    const silent = (now: number) => judgeTestEvent(status(() => undefined), { lockId: 'L1', startedAt: STARTED, now, publicUrl: PUBLIC });
    expect(silent(STARTED + 29_999).state).toBe('waiting');
    expect(silent(STARTED + 30_000).state).toBe('nothing');
    expect(silent(STARTED + 30_000).message.text).toMatch(/^Nothing arrived within 30 seconds: /);
    const passed = judgeTestEvent(status((s) => { s.receiver.lastCallbacks['lock:L1'] = { deviceKind: 'lock', deviceId: 'L1', at: STARTED + 500 }; }), { lockId: 'L1', startedAt: STARTED, now: STARTED + 35_000, publicUrl: PUBLIC });
    expect(passed.state).toBe('passed');
  });

  it('no status file yet (the plugin never ran) waits, then says nothing arrived', () => {
    expect(ask(undefined).state).toBe('waiting');
    expect(ask(undefined, STARTED + TEST_EVENT_TIMEOUT_MS).state).toBe('nothing');
  });
});

describe('design "Reach": the test event works through the tunnel as through one\'s own address', () => {
  const TUNNEL = 'https://calm-otter.ngrok-free.app';

  it('uses the address the running plugin registered (the tunnel\'s) over the page\'s, and judges the path under it', () => {
    const s = status((x) => { x.publicAddress = { via: 'ngrok', url: TUNNEL, tunnel: { state: 'connected', message: legacyMessage('connected'), since: STARTED } }; });
    expect(testEventAddress(s, undefined)).toEqual({ url: TUNNEL });
    expect(testEventAddress(s, 'https://old.example.net/la')).toEqual({ url: TUNNEL });
    s.receiver.lastCallbacks['lock:L1'] = { deviceKind: 'lock', deviceId: 'L1', at: STARTED + 900, kind: 'lockState' };
    expect(judgeTestEvent(s, { lockId: 'L1', startedAt: STARTED, now: STARTED + 1_000, publicUrl: TUNNEL }).message.text).toMatch(/came back through https:\/\/calm-otter\.ngrok-free\.app in 0\.9 s/);
    const stray = status((x) => { x.receiver.lastUnknownPath = { at: STARTED + 5, path: '/other/lock/L1' }; });
    expect(judgeTestEvent(stray, { lockId: 'L1', startedAt: STARTED, now: STARTED + 1_000, publicUrl: TUNNEL }).message.text).toMatch(/not at \/lock\/L1/);
  });

  it('a tunnel that has not connected: the tunnel\'s own words, at once, instead of 30 s of waiting', () => {
    const s = status((x) => { x.publicAddress = { via: 'ngrok', tunnel: { state: 'failed', message: tunnelMessage('tunnel.failed.authtoken'), since: STARTED } }; });
    expect(testEventAddress(s, undefined)).toEqual({
      problem: {
        code: 'testEvent.tunnelDown',
        params: { reason: tunnelMessage('tunnel.failed.authtoken') },
        text: expect.stringMatching(/^The ngrok tunnel is not connected, so the service cannot reach the plugin: The ngrok tunnel could not connect: ngrok refused the authtoken\. /) as unknown,
      },
    });
  });

  it('a plugin that has not said yet: the page\'s address, or what to enter', () => {
    expect(testEventAddress(undefined, PUBLIC)).toEqual({ url: PUBLIC });
    expect(testEventAddress(undefined, undefined)).toMatchObject({ problem: { code: 'testEvent.noAddress', params: {}, text: expect.stringMatching(/Enter the public webhook address \(or set up the ngrok tunnel\)/) as unknown } });
  });
});
