import { request as httpRequest } from 'node:http';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { buildReceiverApp, startReceiver } from '../../src/callbacks/receiver.js';
import type { Receiver, ReceiverApp } from '../../src/callbacks/receiver.js';
import { keyDigest } from '../../src/callbacks/dedupe-file.js';
import { MAX_CALLBACK_BYTES } from '../../src/settings.js';
import { DOORBELL_ID, LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, afterReplies, makeHarness, signed } from './helpers.js';
import type { Harness } from './helpers.js';

let h: Harness;
let app: ReceiverApp;

beforeEach(async () => {
  h = await makeHarness();
  app = buildReceiverApp(h.options);
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await h.cleanup();
});

const post = (url: string, req: { body: Buffer; headers: Record<string, string> }, method: 'POST' | 'PUT' = 'POST') =>
  app.inject({ method, url, payload: req.body, headers: req.headers });
const lockUrl = `/lock-access/lock/${LOCK_ID}`;
const doorbellUrl = `/lock-access/doorbell/${DOORBELL_ID}`;
const userUrl = '/lock-access/user';

describe('routes', () => {
  it('GET {prefix}/health answers 200 {"ok":true,"instance":nonce} and nothing secret', async () => {
    const res = await app.inject({ method: 'GET', url: '/lock-access/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, instance: 'nonce-123' });
    expect(res.body).not.toContain(API_KEY);
    expect(res.body).not.toContain(TOKEN);
  });
  it('POST and PUT are served on lock, doorbell and user routes', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      expect((await post(lockUrl, signed({ ...fixtures.privacy, EventID: `p-${method}` }), method)).statusCode).toBe(200);
      expect((await post(doorbellUrl, signed({ ...fixtures.press, EventID: `d-${method}` }), method)).statusCode).toBe(200);
      expect((await post(userUrl, signed({ ...fixtures.membershipAdd, EventID: `u-${method}` }), method)).statusCode).toBe(200);
    }
  });
  it('anything else is 404', async () => {
    for (const [method, url] of [
      ['GET', lockUrl], ['DELETE', lockUrl], ['POST', '/lock/LOCK-1'], ['POST', '/lock-access/other'],
      ['GET', '/'], ['POST', '/lock-access/lock/'], ['GET', '/health'],
    ] as const) {
      const res = await app.inject({ method, url, payload: method === 'GET' ? undefined : '{}' });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
  });
  it('an unknown path is 404 even with an invalid JSON body', async () => {
    const res = await app.inject({ method: 'POST', url: '/elsewhere', payload: '{broken', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(404);
  });
  it('error replies carry no stack trace', async () => {
    const res = await post(lockUrl, signed('{"LockID": '));
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toMatch(/\bat \S+ \(|node_modules|\.ts:/);
  });
  it('a publicUrl without a path serves at the root', async () => {
    const root = buildReceiverApp({ ...h.options, webhook: { ...h.options.webhook, publicUrl: 'https://home.example.net/' } });
    try {
      expect((await root.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      const res = await root.inject({ method: 'POST', url: `/lock/${LOCK_ID}`, ...toInject(signed(fixtures.privacy)) });
      expect(res.statusCode).toBe(200);
    } finally {
      await root.close();
    }
  });
});

function toInject(req: { body: Buffer; headers: Record<string, string> }) {
  return { payload: req.body, headers: req.headers };
}

describe('200 accepted, then the sink', () => {
  it('a genuine lock callback is 200 and its events reach the sink after the reply', async () => {
    const res = await post(lockUrl, signed(fixtures.appUnlock));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
    const [first] = h.sunk;
    expect(first?.events).toEqual([expect.objectContaining({ kind: 'lockState', lockId: LOCK_ID, state: 'unlocked', at: fixtures.appUnlock.Timestamp, eventId: 'e-app-unlock' })]);
    expect(first?.context).toMatchObject({ route: 'lock', pathId: LOCK_ID, receivedAt: NOW, signedAt: NOW, eventType: 'operation', event: 'unlock' });
    expect(app.receiverStats.accepted).toBe(1);
    expect(app.receiverStats.lastCallbackAt[`lock:${LOCK_ID}`]).toBe(NOW);
  });
  it('the sink is not called before the reply is produced', async () => {
    let calledDuringInject = false;
    let injecting = true;
    const local = buildReceiverApp({ ...h.options, onEvents: () => { calledDuringInject = injecting; } });
    try {
      const res = await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.keypadLock)) });
      injecting = false;
      expect(res.statusCode).toBe(200);
      await afterReplies();
      expect(calledDuringInject).toBe(false);
    } finally {
      await local.close();
    }
  });
  it('callbacks answered together are all delivered after their replies, in the order they were answered; a failing one costs the others nothing', async () => {
    const seen: string[] = [];
    const local = buildReceiverApp({ ...h.options, onEvents: (events) => {
      const [event] = events;
      if (event?.kind === 'doorState' && event.state === 'ajar') throw new Error('sink failed once');
      seen.push(event?.kind === 'doorState' ? event.state : String(event?.kind));
    } });
    try {
      const bodies = [fixtures.doorOpen, fixtures.doorAjar, fixtures.doorClosed];
      const replies = await Promise.all(bodies.map((body) => local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(body)) })));
      expect(replies.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      await afterReplies();
      expect(seen).toEqual(['open', 'closed']);
      expect(local.receiverStats.sinkErrors).toBe(1);
    } finally {
      await local.close();
    }
  });
  it('a throwing sink never changes the reply nor crashes, and is logged without secrets', async () => {
    const local = buildReceiverApp({ ...h.options, onEvents: () => { throw new Error('reducer exploded'); } });
    try {
      const res = await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.doorOpen)) });
      expect(res.statusCode).toBe(200);
      await afterReplies();
      expect(local.receiverStats.sinkErrors).toBe(1);
      expect(h.lines.some((l) => l.startsWith('error') && l.includes('reducer exploded'))).toBe(true);
      expect(h.lines.join('\n')).not.toContain(API_KEY);
      // Still serving.
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.doorClosed)) })).statusCode).toBe(200);
    } finally {
      await local.close();
    }
  });
  it('a sink returning a rejected promise is logged, not left unhandled', async () => {
    const local = buildReceiverApp({ ...h.options, onEvents: () => Promise.reject(new Error('async sink failed')) as unknown as undefined });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.doorAjar)) })).statusCode).toBe(200);
      await afterReplies();
      await new Promise((resolve) => setImmediate(resolve));
      expect(local.receiverStats.sinkErrors).toBe(1);
      expect(h.lines.some((l) => l.includes('async sink failed'))).toBe(true);
    } finally {
      await local.close();
    }
  });
  it('a late doorbell press is passed to the sink with its times (the model decides not to ring)', async () => {
    const pressedAt = NOW - 120_000;
    const t = Math.floor((NOW - 90_000) / 1000);
    const res = await post(doorbellUrl, signed({ ...fixtures.press, Timestamp: pressedAt }, { t }));
    expect(res.statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk[0]?.events).toEqual([{ kind: 'doorbellPress', doorbellId: DOORBELL_ID, at: pressedAt, dvrId: fixtures.press.dvrID }]);
    expect(h.sunk[0]?.context).toMatchObject({ route: 'doorbell', pathId: DOORBELL_ID, signedAt: t * 1000, receivedAt: NOW });
  });
  it('a well-signed payload of an unknown kind is 200, logged once per kind and ignored', async () => {
    for (const id of ['u1', 'u2']) {
      const res = await post(lockUrl, signed({ LockID: LOCK_ID, EventType: 'operation', Event: 'jammed', EventID: id }));
      expect(res.statusCode).toBe(200);
    }
    await afterReplies();
    expect(h.sunk).toHaveLength(0);
    expect(app.receiverStats.ignoredUnknown).toBe(2);
    expect(h.lines.filter((l) => l.startsWith('info') && l.includes('operation/jammed'))).toHaveLength(1);
  });
});

describe('401 signature and custom header', () => {
  it('a missing or empty signature header is 401', async () => {
    const req = signed(fixtures.appUnlock);
    delete req.headers['x-svc-signature'];
    expect((await post(lockUrl, req)).statusCode).toBe(401);
    expect((await post(lockUrl, { ...req, headers: { ...req.headers, 'x-svc-signature': '' } })).statusCode).toBe(401);
    expect(app.receiverStats.rejected['missing-signature']).toBe(2);
  });
  it('a garbage signature header is 400 (malformed header)', async () => {
    const req = signed(fixtures.appUnlock);
    expect((await post(lockUrl, { ...req, headers: { ...req.headers, 'x-svc-signature': 'garbage' } })).statusCode).toBe(400);
  });
  it('the signature header name is read in any case', async () => {
    const req = signed(fixtures.appUnlock);
    const value = req.headers['x-svc-signature'] ?? '';
    delete req.headers['x-svc-signature'];
    expect((await post(lockUrl, { ...req, headers: { ...req.headers, 'X-SVC-Signature': value } })).statusCode).toBe(200);
  });
  it('a wrong signature is 401 and nothing reaches the sink', async () => {
    const req = signed(fixtures.appUnlock);
    const res = await post(lockUrl, { ...req, body: Buffer.from(JSON.stringify({ ...fixtures.appUnlock, Event: 'lock' })) });
    expect(res.statusCode).toBe(401);
    await afterReplies();
    expect(h.sunk).toHaveLength(0);
  });
  it('a stale timestamp is 401', async () => {
    expect((await post(lockUrl, signed(fixtures.appUnlock, { t: Math.floor(NOW / 1000) - 301 }))).statusCode).toBe(401);
    expect(app.receiverStats.rejected['stale-timestamp']).toBe(1);
  });
  it('a replay after the tolerance is 401 (fake clock)', async () => {
    const req = signed(fixtures.appUnlock);
    expect((await post(lockUrl, req)).statusCode).toBe(200);
    h.clock.now += 301_000;
    expect((await post(lockUrl, req)).statusCode).toBe(401);
  });
  it('a custom header that is present and wrong is 401', async () => {
    const res = await post(lockUrl, signed(fixtures.appUnlock, { token: 'wrong-token' }));
    expect(res.statusCode).toBe(401);
    expect(app.receiverStats.rejected['bad-token']).toBe(1);
  });
  it('the custom header follows the stored token when it changes at run time', async () => {
    let current = 'first-token';
    const local = buildReceiverApp({ ...h.options, callbackToken: () => current });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.privacy, { token: 'first-token' })) })).statusCode).toBe(200);
      current = 'second-token';
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.vacation, { token: 'first-token' })) })).statusCode).toBe(401);
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.vacation, { token: 'second-token' })) })).statusCode).toBe(200);
    } finally {
      await local.close();
    }
  });
  it('a custom header absent on a kind that needs it is 401', async () => {
    for (const body of [fixtures.privacy, fixtures.keypadBattery, fixtures.online, fixtures.userAdd]) {
      expect((await post(lockUrl, signed(body, { token: null }))).statusCode).toBe(401);
    }
    expect((await post(doorbellUrl, signed(fixtures.press, { token: null }))).statusCode).toBe(401);
    expect((await post(userUrl, signed(fixtures.lifecycle, { token: null }))).statusCode).toBe(401);
    expect(app.receiverStats.rejected['missing-token']).toBe(6);
  });
  it('a custom header absent on status, operation or keypad_pin_managed is accepted', async () => {
    for (const body of [fixtures.status, fixtures.appUnlock, fixtures.pinManaged, fixtures.masterPin]) {
      expect((await post(lockUrl, signed(body, { token: null }))).statusCode).toBe(200);
    }
    await afterReplies();
    expect(h.sunk).toHaveLength(4);
  });
});

describe('400 malformed body, schema violation, path id', () => {
  it('invalid JSON with a valid signature is 400', async () => {
    expect((await post(lockUrl, signed('{"LockID": "LOCK-1",'))).statusCode).toBe(400);
    expect(app.receiverStats.rejected['invalid-json']).toBe(1);
  });
  it('an empty body with a valid signature is 400', async () => {
    expect((await post(lockUrl, signed(Buffer.alloc(0)))).statusCode).toBe(400);
  });
  it('JSON that is not an object is 400', async () => {
    for (const body of ['[]', '42', '"x"', 'null']) expect((await post(lockUrl, signed(body))).statusCode).toBe(400);
  });
  it('__proto__ keys are 400 and never pollute', async () => {
    const nested = `{"LockID":"${LOCK_ID}","EventType":"configuration","Event":"privacy_mode","Value":true,"User":{"__proto__":{"polluted":1}}}`;
    const top = `{"__proto__":{"polluted":1},"LockID":"${LOCK_ID}","EventType":"configuration","Event":"privacy_mode","Value":true}`;
    const ctor = `{"constructor":{"prototype":{"polluted":1}},"LockID":"${LOCK_ID}","EventType":"configuration","Event":"privacy_mode","Value":true}`;
    for (const body of [nested, top, ctor]) expect((await post(lockUrl, signed(body))).statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(app.receiverStats.rejected['prototype-key']).toBe(3);
  });
  it('a schema violation of a known kind is 400', async () => {
    expect((await post(lockUrl, signed({ ...fixtures.privacy, Value: 'maybe' }))).statusCode).toBe(400);
    expect((await post(lockUrl, signed({ ...fixtures.appUnlock, LockID: 42 }))).statusCode).toBe(400);
    expect((await post(doorbellUrl, signed({ EventType: 'buttonpush' }))).statusCode).toBe(400);
  });
  it('a path id contradicting the body is 400', async () => {
    expect((await post('/lock-access/lock/OTHER', signed(fixtures.appUnlock))).statusCode).toBe(400);
    expect((await post('/lock-access/doorbell/OTHER', signed(fixtures.press))).statusCode).toBe(400);
    expect(app.receiverStats.rejected['path-id-mismatch']).toBe(2);
  });
  it('a percent-encoded path id is compared decoded', async () => {
    const body = { ...fixtures.privacy, LockID: 'A B/C' };
    expect((await post(`/lock-access/lock/${encodeURIComponent('A B/C')}`, signed(body))).statusCode).toBe(200);
  });
  it('a known payload on the wrong route is 400', async () => {
    expect((await post(doorbellUrl, signed(fixtures.appUnlock))).statusCode).toBe(400);
    expect((await post(lockUrl, signed(fixtures.press))).statusCode).toBe(400);
    expect((await post(userUrl, signed(fixtures.privacy))).statusCode).toBe(400);
    expect((await post(lockUrl, signed(fixtures.lifecycle))).statusCode).toBe(400);
  });
  it('a body over 256 KiB is 400, never 413', async () => {
    const big = { ...fixtures.privacy, padding: 'x'.repeat(MAX_CALLBACK_BYTES) };
    const res = await post(lockUrl, signed(big));
    expect(res.statusCode).toBe(400);
    expect(app.receiverStats.rejected['too-large']).toBe(1);
  });
  it('a body of exactly 256 KiB is read', async () => {
    const base = JSON.stringify({ ...fixtures.privacy, padding: '' });
    const body = JSON.stringify({ ...fixtures.privacy, padding: 'x'.repeat(MAX_CALLBACK_BYTES - Buffer.byteLength(base)) });
    expect(Buffer.byteLength(body)).toBe(MAX_CALLBACK_BYTES);
    expect((await post(lockUrl, signed(body))).statusCode).toBe(200);
  });
});

describe('content types and bytes', () => {
  it.each([
    ['application/json; charset=utf-8', 'application/json; charset=utf-8'],
    ['text/plain', 'text/plain'],
    ['none', null],
    ['application/octet-stream', 'application/octet-stream'],
  ])('content type %s is read as raw bytes', async (_name, contentType) => {
    const res = await post(lockUrl, signed(fixtures.keypadBattery, { contentType }));
    expect(res.statusCode).toBe(200);
  });
  it('a pretty-printed body with a trailing newline is accepted', async () => {
    expect((await post(lockUrl, signed(`${JSON.stringify(fixtures.vacation, null, 2)}\n`))).statusCode).toBe(200);
  });
  it('a body with a UTF-8 BOM is verified on its bytes and accepted', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(fixtures.vacation))]);
    expect((await post(lockUrl, signed(body))).statusCode).toBe(200);
  });
  it('a body with non-UTF-8 bytes in a string is verified on its bytes and accepted', async () => {
    const body = Buffer.concat([Buffer.from(`{"LockID":"${LOCK_ID}","EventType":"configuration","Event":"lock_name_changed","Lock":{"Name":"Caf`), Buffer.from([0xe9]), Buffer.from('"}}')]);
    expect((await post(lockUrl, signed(body))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk[0]?.events[0]).toMatchObject({ kind: 'lockName', name: 'Caf\uFFFD' });
  });
  it('an emoji body is accepted', async () => {
    expect((await post(lockUrl, signed({ ...fixtures.nameChanged, Lock: { Name: 'Front 🚪🔒' } }))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk[0]?.events[0]).toMatchObject({ kind: 'lockName', name: 'Front 🚪🔒' });
  });
  it('a re-serialised body fails the signature', async () => {
    const body = `{"LockID":"${LOCK_ID}","EventType":"configuration","Event":"vacation_mode","Value":false}`;
    const req = signed(body);
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body), null, 1));
    expect((await post(lockUrl, { ...req, body: reserialised })).statusCode).toBe(401);
  });
});

describe('dedupe', () => {
  it('duplicate deliveries one after another: both 200, one effect', async () => {
    const first = await post(lockUrl, signed(fixtures.manualUnlock));
    const second = await post(lockUrl, signed(fixtures.manualUnlock, { t: Math.floor(NOW / 1000) + 30 }));
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
    expect(app.receiverStats.duplicates).toBe(1);
  });
  it('duplicate deliveries at the same moment: both 200, one effect', async () => {
    const req = signed(fixtures.keypadLock);
    const results = await Promise.all([post(lockUrl, req), post(lockUrl, req), post(lockUrl, req)]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
  });
  it('without EventID a body with its own event time is the key: a redelivery and a retry signed afresh are dropped, another event is applied', async () => {
    const delivery = signed(fixtures.keypadLock);
    await post(lockUrl, delivery);
    await post(lockUrl, delivery);
    await post(lockUrl, signed(fixtures.keypadLock, { t: Math.floor(NOW / 1000) + 7 }));
    await post(lockUrl, signed({ ...fixtures.keypadLock, Timestamp: fixtures.keypadLock.Timestamp + 1 }));
    await afterReplies();
    expect(h.sunk).toHaveLength(2);
    expect(h.sunk[0]?.context.dedupeKey).toMatch(new RegExp(`^lock/${LOCK_ID}:sha256:[0-9a-f]{64}$`));
  });
  it('"state reports are applied every time": the same offline, online, offline, online bodies all reach the sink, none remembered', async () => {
    for (const body of [fixtures.offline, fixtures.online, fixtures.offline, fixtures.online, fixtures.privacy, fixtures.privacy]) {
      expect((await post(lockUrl, signed(body))).statusCode).toBe(200);
    }
    await afterReplies();
    expect(h.sunk.map((s) => s.events[0]?.kind)).toEqual(['online', 'online', 'online', 'online', 'configFlag', 'configFlag']);
    expect(h.sunk.at(3)?.events[0]).toMatchObject({ online: true });
    expect(h.sunk.every((s) => s.context.dedupeKey === undefined)).toBe(true);
    expect(app.receiverStats.duplicates).toBe(0);
    expect(h.options.dedupe.size).toBe(0);
  });
  it('a state report is accepted while the dedupe store still loads; a one-shot event waits (503)', async () => {
    const { DedupeStore } = await import('../../src/callbacks/dedupe.js');
    const { Storage } = await import('../../src/storage.js');
    const local = buildReceiverApp({ ...h.options, dedupe: new DedupeStore({ storage: new Storage(h.dir) }) });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.offline)) })).statusCode).toBe(200);
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.appUnlock)) })).statusCode).toBe(503);
    } finally {
      await local.close();
    }
  });
  it('the sink learns the tolerance the signature was checked with (event times beyond it count as now)', async () => {
    await post(lockUrl, signed(fixtures.appUnlock));
    await afterReplies();
    expect(h.sunk[0]?.context).toMatchObject({ signedAt: NOW, toleranceMs: 300_000 });
  });
  it('every answer is JSON and says so: accepted, duplicate and refused alike', async () => {
    const replies = [await post(lockUrl, signed(fixtures.appUnlock)), await post(lockUrl, signed(fixtures.appUnlock)), await post('/lock-access/lock/OTHER', signed(fixtures.manualUnlock))];
    expect(replies.map((r) => [r.statusCode, r.headers['content-type'], r.json<unknown>()])).toEqual([
      [200, 'application/json; charset=utf-8', { ok: true }],
      [200, 'application/json; charset=utf-8', { ok: true, duplicate: true }],
      [400, 'application/json; charset=utf-8', { error: 'path-id-mismatch' }],
    ]);
  });
  it('the store\'s check-and-set has the last word over the lookup accept() made', async () => {
    const { DedupeStore } = await import('../../src/callbacks/dedupe.js');
    const { Storage } = await import('../../src/storage.js');
    // A lookup that never remembers: only recording the key can stop the second delivery.
    class ForgetfulLookup extends DedupeStore {
      override has(): boolean {
        return false;
      }
    }
    const dedupe = new ForgetfulLookup({ storage: new Storage(h.dir), now: () => h.clock.now });
    await dedupe.load();
    const local = buildReceiverApp({ ...h.options, dedupe });
    try {
      const replies = [];
      for (let i = 0; i < 2; i++) replies.push(await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.manualUnlock)) }));
      expect(replies.map((r) => r.json<unknown>())).toEqual([{ ok: true }, { ok: true, duplicate: true }]);
      await afterReplies();
      expect(h.sunk).toHaveLength(1);
      expect(local.receiverStats.duplicates).toBe(1);
    } finally {
      await local.close();
    }
  });
  it('a rejected delivery does not poison the key', async () => {
    expect((await post('/lock-access/lock/OTHER', signed(fixtures.appUnlock))).statusCode).toBe(400);
    expect((await post(lockUrl, signed(fixtures.appUnlock))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
  });
});

describe('503 only for a transient failure of ours', () => {
  it('a sink that is not ready yet answers 503 and records nothing', async () => {
    let ready = false;
    const local = buildReceiverApp({ ...h.options, isReady: () => ready });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.appUnlock)) })).statusCode).toBe(503);
      ready = true;
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.appUnlock)) })).statusCode).toBe(200);
      await afterReplies();
      expect(h.sunk).toHaveLength(1);
    } finally {
      await local.close();
    }
  });
  it('a dedupe store that has not loaded answers 503', async () => {
    const { DedupeStore } = await import('../../src/callbacks/dedupe.js');
    const { Storage } = await import('../../src/storage.js');
    const local = buildReceiverApp({ ...h.options, dedupe: new DedupeStore({ storage: new Storage(h.dir) }) });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.appUnlock)) })).statusCode).toBe(503);
    } finally {
      await local.close();
    }
  });
  it('no stored token yet answers 503 to a callback that carries the header', async () => {
    const local = buildReceiverApp({ ...h.options, callbackToken: () => undefined });
    try {
      expect((await local.inject({ method: 'POST', url: lockUrl, ...toInject(signed(fixtures.privacy)) })).statusCode).toBe(503);
    } finally {
      await local.close();
    }
  });
});

describe('start-up', () => {
  it.each([['empty', ''], ['leading space', ` ${API_KEY}`], ['trailing newline', `${API_KEY}\n`]])('an %s API key is refused with a clear error that does not contain it', async (_name, apiKey) => {
    const attempt = startReceiver({ ...h.options, apiKey });
    await expect(attempt).rejects.toThrow(/apiKey/);
    await attempt.catch((error: unknown) => {
      expect((error as Error).message).not.toContain(API_KEY);
    });
  });
  it('a port in use gives a readable error', async () => {
    const first = await startReceiver(h.options);
    try {
      await expect(startReceiver({ ...h.options, webhook: { ...h.options.webhook, listenPort: first.port } })).rejects.toThrow(/already in use/);
    } finally {
      await first.close();
    }
  });
  it('unreadable TLS files give a readable error', async () => {
    await expect(startReceiver({ ...h.options, webhook: { ...h.options.webhook, tlsCertFile: '/nonexistent/cert.pem', tlsKeyFile: '/nonexistent/key.pem' } })).rejects.toThrow(/tlsCertFile/);
  });
});

describe('real listener on 127.0.0.1:0', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  const send = (port: number, path: string, req: { body: Buffer; headers: Record<string, string> }, method = 'POST') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = httpRequest({ host: '127.0.0.1', port, path, method, headers: { ...req.headers, 'content-length': String(req.body.length) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => { chunks.push(c); });
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }); });
      });
      r.on('error', reject);
      r.end(req.body);
    });

  it('accepts a genuine callback over HTTP and answers health', async () => {
    receiver = await startReceiver(h.options);
    expect(receiver.url).toBe(`http://127.0.0.1:${receiver.port}/lock-access`);
    const res = await send(receiver.port, lockUrl, signed(fixtures.appUnlock));
    expect(res.status).toBe(200);
    const health = await fetch(`${receiver.url}/health`);
    expect(await health.json()).toEqual({ ok: true, instance: 'nonce-123' });
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
    expect(receiver.stats.accepted).toBe(1);
  });
  it('refuses an oversize body over HTTP with 400', async () => {
    receiver = await startReceiver(h.options);
    const res = await send(receiver.port, lockUrl, signed({ ...fixtures.privacy, padding: 'x'.repeat(MAX_CALLBACK_BYTES + 10) }));
    expect(res.status).toBe(400);
    expect(res.body).not.toMatch(/at .*\.js/);
  });
  it('two identical deliveries at the same moment over HTTP: both 200, one effect', async () => {
    receiver = await startReceiver(h.options);
    const req = signed(fixtures.video);
    const port = receiver.port;
    const results = await Promise.all([send(port, doorbellUrl, req), send(port, doorbellUrl, req)]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
  });
  it('close flushes the dedupe store to its journal', async () => {
    receiver = await startReceiver(h.options);
    await send(receiver.port, lockUrl, signed(fixtures.appUnlock));
    await receiver.close();
    receiver = undefined;
    const { readFile } = await import('node:fs/promises');
    const saved = (await readFile(`${h.dir}/dedupe.journal`, 'utf8')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as [string, number]);
    expect(saved.map(([key]) => key)).toContain(keyDigest(`lock/${LOCK_ID}:id:e-app-unlock`).toString('base64url'));
  });
});

describe('rejections are never silent (the listener)', () => {
  it('a callback 10 minutes old: 401, one warning with the offset and time sync, and the rejection listener runs at once', async () => {
    let told = 0;
    const local = buildReceiverApp({ ...h.options, onRejected: () => (told += 1) });
    const old = signed(fixtures.appUnlock, { t: Math.floor(NOW / 1000) - 600 });
    for (let i = 0; i < 2; i++) expect((await local.inject({ method: 'POST', url: lockUrl, payload: old.body, headers: old.headers })).statusCode).toBe(401);
    expect(told).toBe(2);
    const warnings = h.lines.filter((line) => line.startsWith('warn '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/clock is 10 min 0 s ahead of.*time sync/);
    expect(local.receiverStats.lastRejection).toMatchObject({ reason: 'stale-timestamp', clockOffsetMs: 600_000 });
    await local.close();
  });

  it('a throwing rejection listener changes no answer', async () => {
    const local = buildReceiverApp({ ...h.options, onRejected: () => { throw new Error('boom'); } });
    const req = signed(fixtures.appUnlock, { token: 'wrong-token-value' });
    expect((await local.inject({ method: 'POST', url: lockUrl, payload: req.body, headers: req.headers })).statusCode).toBe(401);
    expect(h.lines.some((line) => line.startsWith('warn ') && line.includes('x-lock-access-token'))).toBe(true);
    await local.close();
  });
});

describe('every verified callback is told to the delivery watch', () => {
  it('accepted, duplicate and unknown-kind callbacks are verified (each proves the way in); a refused one is not', async () => {
    const keys: string[] = [];
    const local = buildReceiverApp({ ...h.options, onVerified: (key) => keys.push(key) });
    const unlock = signed(fixtures.appUnlock);
    const inject = (req: { body: Buffer; headers: Record<string, string> }) => local.inject({ method: 'POST', url: lockUrl, payload: req.body, headers: req.headers });
    expect((await inject(unlock)).statusCode).toBe(200);
    expect((await inject(unlock)).json()).toMatchObject({ duplicate: true });
    expect((await inject(signed({ EventType: 'operation', Event: 'teleport', LockID: LOCK_ID }))).json()).toMatchObject({ ignored: true });
    expect((await inject(signed(fixtures.appUnlock, { token: 'wrong-token-value' }))).statusCode).toBe(401);
    expect(keys).toEqual([`lock:${LOCK_ID}`, `lock:${LOCK_ID}`, `lock:${LOCK_ID}`]);
    await local.close();
  });

  it('a throwing listener changes no answer', async () => {
    const local = buildReceiverApp({ ...h.options, onVerified: () => { throw new Error('boom'); } });
    const req = signed(fixtures.appUnlock);
    expect((await local.inject({ method: 'POST', url: lockUrl, payload: req.body, headers: req.headers })).statusCode).toBe(200);
    await local.close();
  });
});
