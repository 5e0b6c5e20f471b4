import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, RETRY_DELAYS_MS, startSimulator, type Simulator } from './index.js';
import * as p from './payloads.js';
import { api, grant, registration } from './test-helpers.js';
import { startTestReceiver, type TestReceiver } from './test-receiver.js';

let receiver: TestReceiver;
let sim: Simulator;
let clock: ManualClock;
let token: string;

beforeAll(async () => {
  receiver = await startTestReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function setup(options: Parameters<typeof startSimulator>[0] = {}): Promise<void> {
  sim = await startSimulator({ clock, locks: [{ id: 'L1', name: 'Front', keypad: true, doorSensor: true }], doorbells: [{ id: 'D1' }], ...options });
  token = (await grant(sim)).accessToken;
}

async function hook(path: string, url: string, types: string[], method = 'POST'): Promise<void> {
  const reply = await api(sim, token, 'POST', path, { ...registration(url, sim.account.clientId, types, 'hook-token'), method });
  expect(reply.status).toBe(200);
}

function hmac(secret: string, message: string, encoding: 'hex' | 'base64'): string {
  return createHmac('sha256', secret).update(message).digest(encoding);
}

function parseSignature(header: unknown): { t: string; v: string } {
  const parts = Object.fromEntries(String(header).split(',').map((el) => el.split('=', 2) as [string, string]));
  return { t: parts.t ?? '', v: String(header).split(',').find((el) => el.startsWith('v='))?.slice(2) ?? '' };
}

beforeEach(() => {
  clock = new ManualClock();
  receiver.received.length = 0;
  receiver.replies.length = 0;
  receiver.defaultStatus = 200;
});
afterEach(async () => {
  await sim.close();
});

describe('Callback authentication: signature (spec: Callback authentication)', () => {
  it('X-Svc-Signature is t=<unix seconds>,v=<hex HMAC-SHA256 of t + "." + body keyed by the API key>', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    await sim.fire('unlock', { by: 'keypad' });
    const [callback] = receiver.received;
    const { t, v } = parseSignature(callback?.headers['x-svc-signature']);
    expect(t).toBe(String(Math.floor(clock.now() / 1000)));
    expect(t).toMatch(/^\d{10}$/);
    expect(v).toBe(hmac(sim.account.apiKey, `${t}.${callback?.rawBody ?? ''}`, 'hex'));
    expect(v).not.toBe(hmac('other-key', `${t}.${callback?.rawBody ?? ''}`, 'hex'));
  });

  it('base64 v and millisecond t are selectable per simulator', async () => {
    await setup({ signature: { encoding: 'base64', timestampUnit: 'ms' } });
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    await sim.fire('door-open');
    const [callback] = receiver.received;
    const { t, v } = parseSignature(callback?.headers['x-svc-signature']);
    expect(t).toBe(String(clock.now()));
    expect(t).toMatch(/^\d{13}$/);
    expect(v).toBe(hmac(sim.account.apiKey, `${t}.${callback?.rawBody ?? ''}`, 'base64'));
  });

  it('per-send overrides: encoding, unit, skew, wrong secret, raw header, omitted header', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const payload = p.doorState({ lockId: 'L1', state: 'closed' });
    await sim.send(payload, { lockId: 'L1', signature: { encoding: 'base64', timestampUnit: 'ms', skewMs: -600_000 } });
    await sim.send(payload, { lockId: 'L1', signature: { secret: 'not-the-key' } });
    await sim.send(payload, { lockId: 'L1', signature: { header: 't=1,v=abc' } });
    await sim.send(payload, { lockId: 'L1', signature: { omit: true } });
    const [skewed, wrong, raw, none] = receiver.received;
    const s = parseSignature(skewed?.headers['x-svc-signature']);
    expect(s.t).toBe(String(clock.now() - 600_000));
    expect(s.v).toBe(hmac(sim.account.apiKey, `${s.t}.${skewed?.rawBody ?? ''}`, 'base64'));
    const w = parseSignature(wrong?.headers['x-svc-signature']);
    expect(w.v).toBe(hmac('not-the-key', `${w.t}.${wrong?.rawBody ?? ''}`, 'hex'));
    expect(raw?.headers['x-svc-signature']).toBe('t=1,v=abc');
    expect(none?.headers['x-svc-signature']).toBeUndefined();
  });

  it('the body sent is exactly the JSON of the payload, with content-type application/json', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['battery']);
    const payload = p.keypadBattery({ lockId: 'L1', event: 'keypad_battery_warning', serialNumber: 'K9' });
    await sim.send(payload, { lockId: 'L1' });
    expect(receiver.received[0]?.rawBody).toBe(JSON.stringify(payload));
    expect(receiver.received[0]?.headers['content-type']).toBe('application/json');
    expect(receiver.received[0]?.method).toBe('POST');
  });

  it('the registered method is used (PUT)', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation'], 'PUT');
    await sim.fire('lock');
    expect(receiver.received[0]?.method).toBe('PUT');
  });
});

describe('spec Callback authentication: custom header', () => {
  it('each callback carries the registered header with the registered token', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt']);
    await hook('/webhook/doorbell/D1', `${receiver.url}/bell`, ['buttonpush']);
    for (const event of ['unlock', 'door-open', 'privacy-mode', 'keypad-battery', 'bridge-offline', 'lock-user-add', 'doorbell-press']) await sim.fire(event);
    expect(receiver.received).toHaveLength(7);
    for (const callback of receiver.received) expect(callback.headers['x-lock-access-token']).toBe('hook-token');
  });

  it('not sent on PIN management and remote operate callbacks', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation', 'configuration']);
    await sim.fire('pin-managed', { state: 'load' });
    await sim.fire('master-pin-changed');
    await sim.fire('status');
    await api(sim, token, 'PUT', '/remoteoperate/L1/unlock');
    await sim.idle();
    expect(receiver.received.map((r) => (r.body as { Event: string }).Event)).toEqual(['keypad_pin_managed', 'keypad_pin_managed', 'lock', 'unlock']);
    for (const callback of receiver.received) {
      expect(callback.headers['x-lock-access-token']).toBeUndefined();
      expect(callback.headers['x-svc-signature']).toBeDefined();
    }
  });

  it('only registrations whose notificationTypes select the event get it', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['battery']);
    expect(await sim.fire('unlock')).toEqual([]);
    expect(await sim.fire('lock-battery', { level: '2day' })).toHaveLength(1);
    expect(receiver.received.map((r) => r.body)).toEqual([expect.objectContaining({ EventType: 'system', warningLevel: 'lock_state_battery_warning_2day' })]);
  });
});

describe('Delivery: one call per event, no redirects (spec: Events)', () => {
  it('a 302 is not followed and counts as failed', async () => {
    await setup();
    receiver.redirectTo = `${receiver.url}/elsewhere`;
    await hook('/webhook/L1', `${receiver.url}/redirect`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(result?.status).toBe(302);
    expect(result?.willRetry).toBe(true);
    expect(receiver.received.map((r) => r.path)).toEqual(['/redirect']);
  });

  it('deliveries of one event to a lock registration and a user registration are independent', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['accessmgmt']);
    await hook('/webhook/user', `${receiver.url}/user`, ['lockmembership']);
    receiver.replies.push(500, 200);
    const results = await sim.fire('lock-usertype-changed', { subject: 'me', userType: 'superuser' });
    expect(results.map((r) => [r.kind, r.status, r.willRetry])).toEqual([['lock', 500, true], ['user', 200, false]]);
    expect(sim.pendingRetries()).toBe(1);
    clock.advance(30_000);
    await sim.idle();
    expect(await results[0]?.done).toBe('delivered');
    expect(receiver.received.map((r) => r.path)).toEqual(['/lock', '/user', '/lock']);
  });

  it('the delivery log records every attempt and reply (url, event, attempt number, status or error, time)', async () => {
    await setup();
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    receiver.replies.push(503);
    await sim.fire('door-closed');
    clock.advance(30_000);
    await sim.idle();
    expect(sim.deliveries.map(({ url, event, attempt, status, at, outcome }) => ({ url, event, attempt, status, at, outcome }))).toEqual([
      { url: `${receiver.url}/lock`, event: 'operation/closed', attempt: 1, status: 503, at: clock.now() - 30_000, outcome: 'failed' },
      { url: `${receiver.url}/lock`, event: 'operation/closed', attempt: 2, status: 200, at: clock.now(), outcome: 'delivered' },
    ]);
  });
});

describe('Retries (spec: Limits > Retry schedule)', () => {
  it('failed replies are retried after exactly 30 s, 60 s, 2, 4, 8, 16, 32 min, 1 h, 8 h, 24 h, then given up', async () => {
    await setup();
    receiver.defaultStatus = 500;
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(RETRY_DELAYS_MS).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 28_800_000, 86_400_000]);
    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      expect(clock.nextDelay()).toBe(delay);
      clock.advance(delay - 1);
      await sim.idle();
      expect(receiver.received, `no retry ${i + 1} before its delay`).toHaveLength(i + 1);
      clock.advance(1);
      await sim.idle();
      expect(receiver.received, `retry ${i + 1}`).toHaveLength(i + 2);
    }
    expect(sim.pendingRetries()).toBe(0);
    expect(clock.nextDelay()).toBeUndefined();
    expect(await result?.done).toBe('exhausted');
    const times = sim.deliveries.map((d) => d.at);
    expect(times.slice(1).map((t, i) => t - (times[i] ?? 0))).toEqual([...RETRY_DELAYS_MS]);
    expect(sim.deliveries.map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it.each([400, 401, 403])('a %i reply is not retried', async (status) => {
    await setup();
    receiver.defaultStatus = status;
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(result).toMatchObject({ status, outcome: 'rejected', willRetry: false });
    expect(await result?.done).toBe('rejected');
    expect(sim.pendingRetries()).toBe(0);
    clock.advance(48 * 3_600_000);
    await sim.idle();
    expect(receiver.received).toHaveLength(1);
  });

  it.each([404, 408, 409, 413, 429, 500, 502, 503])('a %i reply (outside 200-299 and not 400/401/403) is retried', async (status) => {
    await setup();
    receiver.replies.push(status);
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(result).toMatchObject({ status, outcome: 'failed', willRetry: true });
    clock.advance(30_000);
    await sim.idle();
    expect(await result?.done).toBe('delivered');
    expect(receiver.received).toHaveLength(2);
  });

  it('any 2xx counts as delivered', async () => {
    await setup();
    receiver.replies.push(204);
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(result).toMatchObject({ status: 204, outcome: 'delivered', willRetry: false });
  });

  it('a network error counts as failed and is retried', async () => {
    await setup();
    const gone = await startTestReceiver();
    const url = gone.url;
    await gone.close();
    await hook('/webhook/L1', `${url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(result?.status).toBeUndefined();
    expect(result?.error).toBeTruthy();
    expect(result?.willRetry).toBe(true);
    expect(sim.deliveries[0]?.error).toBeTruthy();
    expect(clock.nextDelay()).toBe(30_000);
  });

  it('a retry is the same delivery: the same bytes with the t it was first signed with', async () => {
    await setup();
    receiver.replies.push(500);
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    await sim.fire('unlock');
    clock.advance(30_000);
    await sim.idle();
    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received.map((r) => r.headers['x-svc-signature']);
    expect(second).toBe(first);
    expect(Number(parseSignature(second).t)).toBeGreaterThan(0);
    expect(receiver.received[1]?.rawBody).toBe(receiver.received[0]?.rawBody);
  });

  it('close() cancels pending retries', async () => {
    await setup();
    receiver.defaultStatus = 500;
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    const [result] = await sim.fire('unlock');
    expect(sim.pendingRetries()).toBe(1);
    await sim.close();
    expect(await result?.done).toBe('cancelled');
    expect(clock.pending()).toBe(0);
  });
});

describe('spec Retries under vitest fake timers (default clock)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the real clock follows vi fake timers installed after start', async () => {
    sim = await startSimulator({ locks: [{ id: 'L1' }] });
    token = (await grant(sim)).accessToken;
    await hook('/webhook/L1', `${receiver.url}/lock`, ['operation']);
    receiver.replies.push(500);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const [result] = await sim.fire('unlock');
    expect(result?.willRetry).toBe(true);
    await vi.advanceTimersByTimeAsync(29_999);
    await sim.idle();
    expect(receiver.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await sim.idle();
    expect(receiver.received).toHaveLength(2);
    expect(await result?.done).toBe('delivered');
  });
});
