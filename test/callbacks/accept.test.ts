// The acceptance pipeline without Fastify: every status-code rule as a verdict.
// The duplicate store is the real one (loaded from an empty folder); accept() only reads it, so the
// tests record accepted keys the way the adapter does.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { accept } from '../../src/callbacks/accept.js';
import type { AcceptEnv, CallbackRequest, Verdict } from '../../src/callbacks/accept.js';
import { DedupeStore } from '../../src/callbacks/dedupe.js';
import type { CallbackRoute } from '../../src/callbacks/callback-kinds.js';
import { MAX_CALLBACK_BYTES } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';
import { DOORBELL_ID, LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, signed } from './helpers.js';

const T = Math.floor(NOW / 1000);

let dir: string;
let clock: { now: number };
let store: DedupeStore;
let stored: string | undefined;
let sinkReady: boolean;
let env: AcceptEnv;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-accept-'));
  clock = { now: NOW };
  store = await DedupeStore.open({ storage: new Storage(dir), now: () => clock.now, debounceMs: 60_000 });
  stored = TOKEN;
  sinkReady = true;
  env = { apiKey: API_KEY, toleranceSeconds: 300, storedToken: () => stored, sinkReady: () => sinkReady, dedupe: store };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Signing = Parameters<typeof signed>[1];

/** The request parts the adapter would hand over for a body signed like the service signs it. */
function requestFor(route: CallbackRoute, body: unknown, signing: Signing = {}, pathId?: string): CallbackRequest {
  const { body: raw, headers } = signed(body, signing);
  const defaultId = route === 'lock' ? LOCK_ID : route === 'doorbell' ? DOORBELL_ID : undefined;
  return { route, pathId: pathId ?? defaultId, body: raw, signature: headers['x-svc-signature'], token: headers['x-lock-access-token'], receivedAt: clock.now };
}

const lock = (body: unknown, signing?: Signing, pathId?: string) => accept(requestFor('lock', body, signing, pathId), env);

/** What the adapter does with an accepted verdict: claim its dedupe key. */
function recordAccepted(verdict: Verdict): void {
  if (verdict.kind === 'accepted' && verdict.record.claim !== undefined) store.checkAndSet(verdict.record.claim.key);
}

function expectRejected(verdict: Verdict, status: number, reason: string): void {
  expect(verdict).toMatchObject({ kind: 'rejected', status, reason });
}

describe('200 accepted', () => {
  it('a genuine callback is accepted with its device events, context and what to record', () => {
    const verdict = lock(fixtures.appUnlock);
    expect(verdict).toMatchObject({ kind: 'accepted', status: 200, reason: 'accepted' });
    if (verdict.kind !== 'accepted') return;
    expect(verdict.events).toEqual([expect.objectContaining({ kind: 'lockState', lockId: LOCK_ID, state: 'unlocked', at: fixtures.appUnlock.Timestamp, eventId: 'e-app-unlock' })]);
    expect(verdict.context).toEqual({ route: 'lock', pathId: LOCK_ID, receivedAt: NOW, signedAt: T * 1000, toleranceMs: 300_000, dedupeKey: `lock/${LOCK_ID}:id:e-app-unlock`, eventType: 'operation', event: 'unlock' });
    const lastCallback = { key: `lock:${LOCK_ID}`, at: NOW };
    // The key to claim, and the answer when a redelivery claimed it first: the adapter only carries it out.
    expect(verdict.record).toEqual({ claim: { key: `lock/${LOCK_ID}:id:e-app-unlock`, taken: { kind: 'duplicate', status: 200, reason: 'duplicate', record: { lastCallback } } }, lastCallback });
  });
  it('every route: lock, doorbell and user callbacks are accepted', () => {
    expect(lock(fixtures.privacy).kind).toBe('accepted');
    const doorbell = accept(requestFor('doorbell', fixtures.press), env);
    expect(doorbell).toMatchObject({ kind: 'accepted', context: { route: 'doorbell', pathId: DOORBELL_ID }, record: { lastCallback: { key: `doorbell:${DOORBELL_ID}` } } });
    const user = accept(requestFor('user', fixtures.membershipAdd), env);
    expect(user).toMatchObject({ kind: 'accepted', record: { lastCallback: { key: 'user' } } });
    if (user.kind === 'accepted') expect(user.context).not.toHaveProperty('pathId');
  });
  it('accept() records nothing itself: the same request stays accepted until the adapter records it', () => {
    const request = requestFor('lock', fixtures.appUnlock);
    expect(accept(request, env).kind).toBe('accepted');
    expect(accept(request, env).kind).toBe('accepted');
    expect(store.size).toBe(0);
  });
  it('the signature t may be seconds or milliseconds; signedAt is milliseconds', () => {
    const verdict = lock(fixtures.privacy, { t: NOW - 1234 });
    expect(verdict).toMatchObject({ kind: 'accepted', context: { signedAt: NOW - 1234 } });
  });
  it('a late doorbell press is still accepted with its times (the model decides not to ring)', () => {
    const pressedAt = NOW - 120_000;
    const verdict = accept(requestFor('doorbell', { ...fixtures.press, Timestamp: pressedAt }, { t: T - 90 }), env);
    expect(verdict).toMatchObject({ kind: 'accepted', events: [{ kind: 'doorbellPress', at: pressedAt }], context: { signedAt: (T - 90) * 1000, receivedAt: NOW } });
  });
});

describe('200 for a well-signed callback of a known kind with a value the spec does not list', () => {
  it('a battery warningLevel not in the table is acknowledged, changes nothing, and is named once for the log', () => {
    const verdict = lock({ ...fixtures.lockBattery, warningLevel: 'lock_state_battery_warning_3day' });
    expect(verdict).toMatchObject({ kind: 'ignored', status: 200, kindName: 'system/lock_battery_alert with a value this plugin does not know (warningLevel lock_state_battery_warning_3day)' });
  });
  it('a clock-drift notice whose LockID is a one-element array is accepted', () => {
    const verdict = lock({ ...fixtures.drift, LockID: [LOCK_ID] });
    expect(verdict).toMatchObject({ kind: 'accepted', status: 200, events: [{ kind: 'clockDrift', lockId: LOCK_ID }] });
  });
  it('a door event not in the table is acknowledged and ignored', () => {
    expect(lock({ ...fixtures.doorOpen, Event: 'tampered' })).toMatchObject({ kind: 'ignored', status: 200 });
  });
});

describe('200 duplicate', () => {
  it('a redelivery of a recorded callback is a duplicate, answered 200, with only the last-callback time to record', () => {
    recordAccepted(lock(fixtures.manualUnlock));
    clock.now += 30_000;
    const again = lock(fixtures.manualUnlock, { t: T + 30 });
    expect(again).toEqual({ kind: 'duplicate', status: 200, reason: 'duplicate', record: { lastCallback: { key: `lock:${LOCK_ID}`, at: NOW + 30_000 } } });
  });
  it('the EventID is the key, so a redelivery with other bytes is still a duplicate', () => {
    recordAccepted(lock(fixtures.appUnlock));
    expect(lock({ ...fixtures.appUnlock, timeStamp: fixtures.appUnlock.timeStamp + 1 }).kind).toBe('duplicate');
  });
  it('without EventID a body that carries its own event time is the key, without t: a retry signed afresh is a duplicate', () => {
    const first = lock(fixtures.keypadLock);
    expect(first).toMatchObject({ kind: 'accepted', record: { claim: { key: expect.stringMatching(new RegExp(`^lock/${LOCK_ID}:sha256:[0-9a-f]{64}$`)) as unknown } } });
    recordAccepted(first);
    // An exact replay, and the service's retry of the same event signed again minutes later.
    expect(lock(fixtures.keypadLock).kind).toBe('duplicate');
    clock.now += 240_000;
    expect(lock(fixtures.keypadLock, { t: T + 240 }).kind).toBe('duplicate');
    // Another event: another event time.
    expect(lock({ ...fixtures.keypadLock, Timestamp: fixtures.keypadLock.Timestamp + 1 }, { t: T + 240 }).kind).toBe('accepted');
  });
  it('press A, press B, then A re-signed: A is a duplicate, so the phones do not ring for A again', () => {
    const press = (dvrID: string, t: number) => accept(requestFor('doorbell', { ...fixtures.press, dvrID }, { t }), env);
    recordAccepted(press('dvr-a', T));
    clock.now += 20_000;
    recordAccepted(press('dvr-b', T + 20));
    clock.now += 40_000;
    expect(press('dvr-a', T + 60).kind).toBe('duplicate');
    expect(press('dvr-b', T + 61).kind).toBe('duplicate');
    expect(press('dvr-c', T + 62).kind).toBe('accepted');
  });
  it('a recording shares its press\'s dvrID and is still its own event', () => {
    recordAccepted(accept(requestFor('doorbell', { ...fixtures.press, dvrID: 'dvr-a' }), env));
    const video = accept(requestFor('doorbell', { ...fixtures.video, dvrID: 'dvr-a' }), env);
    expect(video.kind).toBe('accepted');
    recordAccepted(video);
    expect(accept(requestFor('doorbell', { ...fixtures.video, dvrID: 'dvr-a', startTime: fixtures.video.startTime }, { t: T + 90 }), env).kind).toBe('duplicate');
  });
  it('a motion is known by its still: re-signed, it is a duplicate; another still is another motion', () => {
    recordAccepted(accept(requestFor('doorbell', fixtures.motion), env));
    expect(accept(requestFor('doorbell', fixtures.motion, { t: T + 30 }), env).kind).toBe('duplicate');
    expect(accept(requestFor('doorbell', { ...fixtures.motion, Url: 'http://img/m2.jpg', SecureURL: 'https://img/m2.jpg' }, { t: T + 31 }), env).kind).toBe('accepted');
  });
  it('an exact replay of a delivery recorded by the previous version (body and t) is still a duplicate after the upgrade', () => {
    const raw = signed(fixtures.keypadLock, {}).body;
    store.checkAndSet(`lock/${LOCK_ID}:sha256t:${createHash('sha256').update(`${T * 1000}.`).update(raw).digest('hex')}`);
    expect(lock(fixtures.keypadLock).kind).toBe('duplicate');
  });
  it('the same body signed at a new t is a new operation: the same person locking, unlocking and locking again ends locked', () => {
    const lockBody = { ...fixtures.appUnlock, Event: 'lock' } as Record<string, unknown>;
    delete lockBody.EventID;
    delete lockBody.Timestamp;
    delete lockBody.timeStamp;
    const unlockBody = { ...lockBody, Event: 'unlock' };
    const first = lock(lockBody, { t: T });
    recordAccepted(first);
    recordAccepted(lock(unlockBody, { t: T + 5 }));
    const third = lock(lockBody, { t: T + 10 });
    expect(third.kind).toBe('accepted');
    if (third.kind === 'accepted') expect(third.events[0]).toMatchObject({ kind: 'lockState', state: 'locked' });
    recordAccepted(third);
    // Its redelivery (same bytes, same t) still changes nothing.
    expect(lock(lockBody, { t: T + 10 }).kind).toBe('duplicate');
  });
  it('a door report is safe against redelivery: a closed without an event time, redelivered after a newer open, is a duplicate; a new closed is applied', () => {
    const closedBody = { ...fixtures.doorClosed } as Record<string, unknown>;
    delete closedBody.Timestamp;
    const openBody = { ...closedBody, Event: 'open' };
    recordAccepted(lock(closedBody, { t: T }));
    recordAccepted(lock(openBody, { t: T + 5 }));
    // The service retries the first delivery (same bytes, the t it was signed with).
    expect(lock(closedBody, { t: T }).kind).toBe('duplicate');
    const closedAgain = lock(closedBody, { t: T + 20 });
    expect(closedAgain.kind).toBe('accepted');
    if (closedAgain.kind === 'accepted') expect(closedAgain.events[0]).toMatchObject({ kind: 'doorState', state: 'closed', at: undefined });
  });
  it('two one-touch locks without an event time around a keypad unlock: both locks apply', () => {
    const oneTouch = { ...fixtures.oneTouch } as Record<string, unknown>;
    delete oneTouch.Timestamp;
    recordAccepted(lock(oneTouch, { t: T }));
    recordAccepted(lock({ ...fixtures.keypadLock, Event: 'unlock' }, { t: T + 20 }));
    expect(lock(oneTouch, { t: T + 40 }).kind).toBe('accepted');
  });
  it('"state reports are applied every time": no key to record, so the same body is accepted again', () => {
    for (const body of [fixtures.offline, fixtures.online, fixtures.offline, fixtures.privacy, fixtures.lockBattery, fixtures.drift]) {
      const verdict = lock(body);
      expect(verdict.kind).toBe('accepted');
      if (verdict.kind !== 'accepted') return;
      expect(verdict.record).not.toHaveProperty('claim');
      expect(verdict.context).not.toHaveProperty('dedupeKey');
      recordAccepted(verdict);
    }
    expect(lock(fixtures.offline).kind).toBe('accepted');
    expect(store.size).toBe(0);
  });
  it('a redelivery recorded by an earlier version under its EventID (no device in the key) is still a duplicate after the upgrade', () => {
    const withId = fixtures.appUnlock as { EventID: string };
    store.checkAndSet(`lock:id:${withId.EventID}`);
    expect(lock(fixtures.appUnlock).kind).toBe('duplicate');
    expect(lock(fixtures.manualUnlock).kind).toBe('accepted');
  });
  it('an earlier version\'s body-only key is not looked up: it cannot tell a redelivery from a repeated operation', () => {
    const raw = signed(fixtures.keypadLock, {}).body;
    store.checkAndSet(`lock:sha256:${createHash('sha256').update(raw).digest('hex')}`);
    expect(lock(fixtures.keypadLock).kind).toBe('accepted');
  });
  it('the same EventID on another route is not a duplicate', () => {
    recordAccepted(lock({ ...fixtures.userAdd, EventID: 'shared' }));
    expect(accept(requestFor('user', { ...fixtures.membershipAdd, EventID: 'shared' }), env).kind).toBe('accepted');
  });
  it('a rejected delivery records nothing, so it does not poison the key', () => {
    expectRejected(lock(fixtures.appUnlock, {}, 'OTHER'), 400, 'path-id-mismatch');
    expect(lock(fixtures.appUnlock).kind).toBe('accepted');
  });
});

describe('200 for a well-signed event of an unknown kind', () => {
  it('is ignored: no events, no dedupe key, only the last-callback time to record', () => {
    const verdict = lock({ LockID: LOCK_ID, EventType: 'operation', Event: 'jammed', EventID: 'u1' });
    expect(verdict).toEqual({ kind: 'ignored', status: 200, reason: 'unknown-kind', kindName: 'operation/jammed', record: { lastCallback: { key: `lock:${LOCK_ID}`, at: NOW } } });
  });
  it('its kind name is made safe to log', () => {
    const verdict = lock({ EventType: 'new\nline kind', Event: 'x'.repeat(100) });
    expect(verdict.kind).toBe('ignored');
    if (verdict.kind === 'ignored') expect(verdict.kindName).toBe(`new?line?kind/${'x'.repeat(60)}`);
  });
  it('is acknowledged even while the sink is not ready (there is nothing to deliver)', () => {
    sinkReady = false;
    expect(lock({ LockID: LOCK_ID, EventType: 'mystery' }).kind).toBe('ignored');
  });
  it('still needs a valid signature', () => {
    const request = requestFor('lock', { LockID: LOCK_ID, EventType: 'mystery' });
    expectRejected(accept({ ...request, body: Buffer.from('{"EventType":"other"}') }, env), 401, 'bad-signature');
  });
});

describe('401 bad or missing signature, stale timestamp', () => {
  it('a missing signature header is 401', () => {
    expectRejected(accept({ ...requestFor('lock', fixtures.appUnlock), signature: undefined }, env), 401, 'missing-signature');
  });
  it('an empty signature header is 401', () => {
    expectRejected(accept({ ...requestFor('lock', fixtures.appUnlock), signature: ' , ' }, env), 401, 'missing-signature');
  });
  it('a signature over other bytes is 401', () => {
    const request = requestFor('lock', fixtures.appUnlock);
    expectRejected(accept({ ...request, body: Buffer.from(JSON.stringify({ ...fixtures.appUnlock, Event: 'lock' })) }, env), 401, 'bad-signature');
  });
  it('a signature made with another key is 401', () => {
    expectRejected(accept(requestFor('lock', fixtures.appUnlock), { ...env, apiKey: 'another-key' }), 401, 'bad-signature');
  });
  it('the signature is checked before the body is parsed: a badly signed broken body is 401, not 400', () => {
    const request = requestFor('lock', '{"broken');
    expectRejected(accept({ ...request, body: Buffer.from('{"broken!') }, env), 401, 'bad-signature');
  });
  it('|now - t| up to the tolerance is accepted on both sides', () => {
    expect(lock(fixtures.privacy, { t: T - 300 }).kind).toBe('accepted');
    expect(lock(fixtures.vacation, { t: T + 300 }).kind).toBe('accepted');
  });
  it('a stale t is 401', () => {
    expectRejected(lock(fixtures.appUnlock, { t: T - 301 }), 401, 'stale-timestamp');
  });
  it('a future t is 401', () => {
    expectRejected(lock(fixtures.appUnlock, { t: T + 301 }), 401, 'stale-timestamp');
  });
  it('the injected clock decides: the same request turns stale once the clock moves past the tolerance', () => {
    const request = requestFor('lock', fixtures.appUnlock);
    expect(accept(request, env).kind).toBe('accepted');
    expectRejected(accept({ ...request, receivedAt: NOW + 301_000 }, env), 401, 'stale-timestamp');
  });
  it('the tolerance comes from the environment', () => {
    expectRejected(accept(requestFor('lock', fixtures.privacy, { t: T - 61 }), { ...env, toleranceSeconds: 60 }), 401, 'stale-timestamp');
  });
});

describe('401 wrong or missing custom header, except for the listed kinds', () => {
  it('a custom header that is present and wrong is 401', () => {
    expectRejected(lock(fixtures.appUnlock, { token: 'wrong-token' }), 401, 'bad-token');
    expectRejected(lock(fixtures.appUnlock, { token: `${TOKEN}x` }), 401, 'bad-token');
    expectRejected(lock(fixtures.appUnlock, { token: '' }), 401, 'bad-token');
  });
  it('a doubled custom header is read as Node joins it, so it does not match', () => {
    expectRejected(accept({ ...requestFor('lock', fixtures.privacy), token: [TOKEN, TOKEN] }, env), 401, 'bad-token');
    expect(accept({ ...requestFor('lock', fixtures.privacy), token: [TOKEN] }, env).kind).toBe('accepted');
  });
  it('the custom header is checked before the body is parsed', () => {
    expectRejected(lock('{"broken', { token: 'wrong-token' }), 401, 'bad-token');
  });
  it('the custom header follows the stored token when it changes at run time', () => {
    stored = 'first-token';
    expect(lock(fixtures.privacy, { token: 'first-token' }).kind).toBe('accepted');
    stored = 'second-token';
    expectRejected(lock(fixtures.vacation, { token: 'first-token' }), 401, 'bad-token');
    expect(lock(fixtures.vacation, { token: 'second-token' }).kind).toBe('accepted');
  });
  it('a custom header absent on a kind that needs it is 401', () => {
    for (const body of [fixtures.privacy, fixtures.keypadBattery, fixtures.online, fixtures.userAdd, fixtures.nameChanged, fixtures.drift]) {
      expectRejected(lock(body, { token: null }), 401, 'missing-token');
    }
    expectRejected(accept(requestFor('doorbell', fixtures.press, { token: null }), env), 401, 'missing-token');
    expectRejected(accept(requestFor('user', fixtures.lifecycle, { token: null }), env), 401, 'missing-token');
    expectRejected(lock({ LockID: LOCK_ID, EventType: 'mystery' }, { token: null }), 401, 'missing-token');
  });
  it('a custom header absent on status, operation or keypad_pin_managed is accepted', () => {
    for (const body of [fixtures.status, fixtures.appUnlock, fixtures.doorOpen, fixtures.pinManaged, fixtures.masterPin]) {
      expect(lock(body, { token: null }).kind).toBe('accepted');
    }
  });
  it('without the header the stored token is not needed', () => {
    stored = undefined;
    expect(lock(fixtures.appUnlock, { token: null }).kind).toBe('accepted');
  });
});

describe('400 malformed header or body', () => {
  it.each([
    ['no v element', `t=${T}`],
    ['no t element', 'v=abc'],
    ['two t elements', `t=${T},t=${T},v=abc`],
    ['a t that is not digits', 't=12a,v=abc'],
    ['a t of 12 digits', 't=123456789012,v=abc'],
    ['garbage', 'garbage'],
  ])('a signature header with %s is 400', (_name, header) => {
    expectRejected(accept({ ...requestFor('lock', fixtures.appUnlock), signature: header }, env), 400, 'malformed-signature');
  });
  it('invalid JSON with a valid signature is 400', () => {
    expectRejected(lock('{"LockID": "LOCK-1",'), 400, 'invalid-json');
  });
  it('an empty body with a valid signature is 400', () => {
    expectRejected(lock(Buffer.alloc(0)), 400, 'invalid-json');
  });
  it('JSON that is not an object is 400', () => {
    for (const body of ['[]', '42', '"x"', 'null']) expectRejected(lock(body), 400, 'not-an-object');
  });
  it('__proto__ and constructor.prototype keys are 400 and never pollute', () => {
    const top = `{"__proto__":{"polluted":1},"LockID":"${LOCK_ID}","EventType":"configuration","Event":"privacy_mode","Value":true}`;
    const ctor = `{"constructor":{"prototype":{"polluted":1}},"LockID":"${LOCK_ID}","EventType":"configuration","Event":"privacy_mode","Value":true}`;
    for (const body of [top, ctor]) expectRejected(lock(body), 400, 'prototype-key');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
  it('a body over 256 KiB is 400, never 413, and is refused before its signature is computed', () => {
    const big = Buffer.alloc(MAX_CALLBACK_BYTES + 1, 0x20);
    expectRejected(lock(big), 400, 'too-large');
    expectRejected(accept({ ...requestFor('lock', fixtures.privacy), body: big, signature: undefined }, env), 400, 'too-large');
  });
  it('a body of exactly 256 KiB is read', () => {
    const base = JSON.stringify({ ...fixtures.privacy, padding: '' });
    const body = JSON.stringify({ ...fixtures.privacy, padding: 'x'.repeat(MAX_CALLBACK_BYTES - Buffer.byteLength(base)) });
    expect(Buffer.byteLength(body)).toBe(MAX_CALLBACK_BYTES);
    expect(lock(body).kind).toBe('accepted');
  });
  it('a BOM, non-UTF-8 bytes or pretty printing are verified on their bytes and accepted', () => {
    expect(lock(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(fixtures.vacation))])).kind).toBe('accepted');
    expect(lock(`${JSON.stringify(fixtures.keypadEnabled, null, 2)}\n`).kind).toBe('accepted');
    const latin1 = Buffer.concat([Buffer.from(`{"LockID":"${LOCK_ID}","EventType":"configuration","Event":"lock_name_changed","Lock":{"Name":"Caf`), Buffer.from([0xe9]), Buffer.from('"}}')]);
    expect(lock(latin1)).toMatchObject({ kind: 'accepted', events: [{ kind: 'lockName', name: 'Caf\uFFFD' }] });
  });
});

describe('400 schema violation', () => {
  it('a known kind whose body breaks its schema is 400 with a detail naming the field', () => {
    const verdict = lock({ ...fixtures.privacy, Value: 'maybe' });
    expectRejected(verdict, 400, 'schema-violation');
    if (verdict.kind === 'rejected') expect(verdict.detail).toContain('Value');
    expectRejected(lock({ ...fixtures.appUnlock, LockID: 42 }), 400, 'schema-violation');
    expectRejected(accept(requestFor('doorbell', { EventType: 'buttonpush' }), env), 400, 'schema-violation');
  });
  it('a known payload on the wrong route is 400', () => {
    expectRejected(accept(requestFor('doorbell', fixtures.appUnlock), env), 400, 'wrong-route');
    expectRejected(lock(fixtures.press), 400, 'wrong-route');
    expectRejected(accept(requestFor('user', fixtures.privacy), env), 400, 'wrong-route');
    expectRejected(lock(fixtures.lifecycle), 400, 'wrong-route');
  });
});

describe('400 path id contradicting the body', () => {
  it('a lock or doorbell id in the path that is not the body\'s is 400', () => {
    expectRejected(lock(fixtures.appUnlock, {}, 'OTHER'), 400, 'path-id-mismatch');
    expectRejected(accept(requestFor('doorbell', fixtures.press, {}, 'OTHER'), env), 400, 'path-id-mismatch');
  });
  it('the array form of LockID (systemstatus) is compared by its one element', () => {
    expect(lock(fixtures.online).kind).toBe('accepted');
    expectRejected(lock(fixtures.online, {}, 'OTHER'), 400, 'path-id-mismatch');
  });
  it('the user route has no path id; the body may name any lock', () => {
    expect(accept(requestFor('user', { ...fixtures.membershipAdd, LockID: 'ANY-LOCK' }), env).kind).toBe('accepted');
  });
});

describe('503 only for a transient failure of ours', () => {
  it('a sink that is not ready yet is 503 and nothing is to be recorded', () => {
    sinkReady = false;
    expect(lock(fixtures.appUnlock)).toEqual({ kind: 'rejected', status: 503, reason: 'not-ready' });
    sinkReady = true;
    expect(lock(fixtures.appUnlock).kind).toBe('accepted');
  });
  it('a duplicate store that has not loaded is 503 for a one-shot event; a state report needs no store', () => {
    const unloaded = new DedupeStore({ storage: new Storage(dir) });
    expectRejected(accept(requestFor('lock', fixtures.appUnlock), { ...env, dedupe: unloaded }), 503, 'dedupe-not-ready');
    expect(accept(requestFor('lock', fixtures.offline), { ...env, dedupe: unloaded }).kind).toBe('accepted');
  });
  it('no stored token yet is 503 for a callback that carries the header', () => {
    for (const missing of [undefined, '']) {
      stored = missing;
      expectRejected(lock(fixtures.privacy), 503, 'token-not-ready');
    }
  });
  it('bad requests are refused before readiness matters: they stay 4xx while not ready', () => {
    sinkReady = false;
    expectRejected(lock(fixtures.appUnlock, {}, 'OTHER'), 400, 'path-id-mismatch');
    expectRejected(lock(fixtures.appUnlock, { token: 'wrong-token' }), 401, 'bad-token');
  });
});

describe('verdicts never carry a secret', () => {
  it('no verdict holds the API key, the stored token or the signature', () => {
    const request = requestFor('lock', fixtures.appUnlock);
    const verdicts = [
      accept(request, env),
      accept({ ...request, token: 'wrong-token' }, env),
      accept({ ...request, receivedAt: NOW + 301_000 }, env),
      accept({ ...request, body: Buffer.from('{}') }, env),
      lock({ ...fixtures.privacy, Value: 'maybe' }),
    ];
    const text = JSON.stringify(verdicts);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(String(request.signature).slice(-64));
  });
});
