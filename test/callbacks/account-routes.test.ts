// An extra account's routes (`{prefix}/a/<id>/…`): each callback is verified with its path's
// account alone (its API key, its header secret); an account that is not enabled is 404 before
// the body is read.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { AccountGate } from '../../src/callbacks/listener-options.js';
import { buildReceiverApp, type ReceiverApp } from '../../src/callbacks/receiver.js';
import { CALLBACK_TOKEN_HEADER } from '../../src/settings.js';
import { signatureHeader } from '../../src/callbacks/signature.js';
import { LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, afterReplies, makeHarness, type Harness } from './helpers.js';

const CABIN_KEY = 'cabin-api-key-77';
const CABIN_TOKEN = 'c'.repeat(20) + 'cabin-header';
/** Shares the main account's key (one integration), with a header secret of its own. */
const SHARED_TOKEN = 's'.repeat(20) + 'shared-header';

/** Signed with `key`, carrying `token` as the custom header (none when null). */
function as(key: string, token: string | null, body: unknown) {
  const raw = Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { 'x-svc-signature': signatureHeader(key, Math.floor(NOW / 1000), raw), 'content-type': 'application/json' };
  if (token !== null) headers[CALLBACK_TOKEN_HEADER] = token;
  return { payload: raw, headers };
}

let h: Harness;
let app: ReceiverApp;
const gates = new Map<string, AccountGate>();

beforeEach(async () => {
  gates.clear();
  gates.set('cabin', { apiKey: CABIN_KEY, callbackToken: () => CABIN_TOKEN });
  gates.set('shared', { apiKey: API_KEY, callbackToken: () => SHARED_TOKEN });
  h = await makeHarness({ accounts: (id) => gates.get(id) });
  app = buildReceiverApp(h.options);
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await h.cleanup();
});

const post = (url: string, request: { payload: Buffer; headers: Record<string, string> }, method: 'POST' | 'PUT' = 'POST') => app.inject({ method, url, ...request });
let n = 0;
const event = () => ({ ...fixtures.appUnlock, EventID: `e-${++n}` });

describe('an extra account\'s routes', () => {
  it('take POST and PUT on lock, doorbell and user with the account\'s key and header, and say which account', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      expect((await post(`/lock-access/a/cabin/lock/${LOCK_ID}`, as(CABIN_KEY, CABIN_TOKEN, event()), method)).statusCode).toBe(200);
      expect((await post('/lock-access/a/cabin/doorbell/DB-1', as(CABIN_KEY, CABIN_TOKEN, { ...fixtures.press, DoorbellID: 'DB-1', EventID: `d-${++n}` }), method)).statusCode).toBe(200);
      expect((await post('/lock-access/a/cabin/user', as(CABIN_KEY, CABIN_TOKEN, { ...fixtures.membershipAdd, EventID: `u-${++n}` }), method)).statusCode).toBe(200);
    }
    await afterReplies();
    expect(h.sunk.map((s) => s.context.account)).toEqual(Array(6).fill('cabin'));
  });

  it('another account\'s signature on X\'s path is 401, and X\'s signature on the main path is 401', async () => {
    expect((await post(`/lock-access/a/cabin/lock/${LOCK_ID}`, as(API_KEY, CABIN_TOKEN, event()))).statusCode).toBe(401);
    expect((await post(`/lock-access/lock/${LOCK_ID}`, as(CABIN_KEY, TOKEN, event()))).statusCode).toBe(401);
    expect((await post('/lock-access/a/cabin/user', as(API_KEY, TOKEN, { ...fixtures.membershipAdd, EventID: 'u-x' }))).statusCode).toBe(401);
    await afterReplies();
    expect(h.sunk).toEqual([]);
  });

  it('with a shared key, another account\'s header on X\'s path is 401 (the main one\'s on X, X\'s on main)', async () => {
    expect((await post(`/lock-access/a/shared/lock/${LOCK_ID}`, as(API_KEY, TOKEN, event()))).statusCode).toBe(401);
    expect((await post(`/lock-access/lock/${LOCK_ID}`, as(API_KEY, SHARED_TOKEN, event()))).statusCode).toBe(401);
    expect((await post(`/lock-access/a/shared/lock/${LOCK_ID}`, as(API_KEY, SHARED_TOKEN, event()))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk.map((s) => s.context.account)).toEqual(['shared']);
  });

  it('a well-signed status or remote-operate callback without the header is accepted on X\'s path', async () => {
    expect((await post(`/lock-access/a/cabin/lock/${LOCK_ID}`, as(CABIN_KEY, null, fixtures.status))).statusCode).toBe(200);
    expect((await post(`/lock-access/a/cabin/lock/${LOCK_ID}`, as(CABIN_KEY, null, event()))).statusCode).toBe(200);
    // Any other kind without the header is refused, as on the main path.
    expect((await post('/lock-access/a/cabin/user', as(CABIN_KEY, null, { ...fixtures.membershipAdd, EventID: 'u-no-header' }))).statusCode).toBe(401);
    await afterReplies();
    expect(h.sunk.map((s) => [s.context.account, s.context.eventType])).toEqual([['cabin', 'status'], ['cabin', 'operation']]);
  });

  it('an unknown, disabled or unlinked account\'s path is 404, without reading the body', async () => {
    for (const url of [`/lock-access/a/beach/lock/${LOCK_ID}`, '/lock-access/a/beach/user', '/lock-access/a/main/user', '/lock-access/a//user']) {
      const res = await post(url, as(CABIN_KEY, CABIN_TOKEN, event()));
      expect(res.statusCode, url).toBe(404);
    }
    // Unlinked while running: its paths go at once.
    gates.delete('cabin');
    expect((await post(`/lock-access/a/cabin/lock/${LOCK_ID}`, as(CABIN_KEY, CABIN_TOKEN, event()))).statusCode).toBe(404);
    // A body far over the size limit is never read: the answer is still 404, not 400.
    const huge = { payload: Buffer.alloc(2 * 1024 * 1024, 0x7b), headers: { 'content-type': 'application/json' } };
    expect((await post('/lock-access/a/beach/lock/L', huge)).statusCode).toBe(404);
    await afterReplies();
    expect(h.sunk).toEqual([]);
    expect(h.options.accounts).toBeDefined();
  });

  it('without extra accounts every /a/ path is 404', async () => {
    const plain = await makeHarness();
    const bare = buildReceiverApp(plain.options);
    try {
      expect((await bare.inject({ method: 'POST', url: `/lock-access/a/cabin/lock/${LOCK_ID}`, ...as(CABIN_KEY, CABIN_TOKEN, event()) })).statusCode).toBe(404);
    } finally {
      await bare.close();
      await plain.cleanup();
    }
  });
});

describe('the duplicate net across paths', () => {
  /** A press that carries nothing identifying it (no dvrID, no time): the duplicate filter keys it by its `t`. */
  const bare = { DoorbellID: 'DB-9', EventType: 'buttonpush' };
  const at = (key: string, token: string | null, body: unknown, seconds: number) => {
    const raw = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'x-svc-signature': signatureHeader(key, seconds, raw), 'content-type': 'application/json' };
    if (token !== null) headers[CALLBACK_TOKEN_HEADER] = token;
    return { payload: raw, headers };
  };
  const t0 = Math.floor(NOW / 1000);

  it('the same bytes for the same device on another account\'s path within 60 s are a duplicate: 200, not applied', async () => {
    expect((await post('/lock-access/doorbell/DB-9', at(API_KEY, TOKEN, bare, t0))).statusCode).toBe(200);
    h.clock.now = NOW + 1_000;
    expect((await post('/lock-access/a/cabin/doorbell/DB-9', at(CABIN_KEY, CABIN_TOKEN, bare, t0 + 1))).statusCode).toBe(200);
    h.clock.now = NOW + 59_000;
    expect((await post('/lock-access/a/shared/doorbell/DB-9', at(API_KEY, SHARED_TOKEN, bare, t0 + 59))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk.map((s) => s.context.account)).toEqual([undefined]);
    expect(app.receiverStats.duplicates).toBe(2);
  });

  it('on one path section 6 alone decides: the same identity-less body with a new t applies again', async () => {
    expect((await post('/lock-access/a/cabin/doorbell/DB-9', at(CABIN_KEY, CABIN_TOKEN, bare, t0))).statusCode).toBe(200);
    h.clock.now = NOW + 2_000;
    expect((await post('/lock-access/a/cabin/doorbell/DB-9', at(CABIN_KEY, CABIN_TOKEN, bare, t0 + 2))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk).toHaveLength(2);
    expect(app.receiverStats.duplicates).toBe(0);
  });

  it('after 60 s, or for another device, the same bytes on another path apply', async () => {
    expect((await post('/lock-access/doorbell/DB-9', at(API_KEY, TOKEN, bare, t0))).statusCode).toBe(200);
    h.clock.now = NOW + 60_000;
    expect((await post('/lock-access/a/cabin/doorbell/DB-9', at(CABIN_KEY, CABIN_TOKEN, bare, t0 + 60))).statusCode).toBe(200);
    const other = { DoorbellID: 'DB-8', EventType: 'buttonpush' };
    expect((await post('/lock-access/doorbell/DB-8', at(API_KEY, TOKEN, other, t0 + 60))).statusCode).toBe(200);
    await afterReplies();
    expect(h.sunk.map((s) => s.context.account)).toEqual([undefined, 'cabin', undefined]);
    expect(app.receiverStats.duplicates).toBe(0);
  });
});
