import { createHmac } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { SIGNATURE_FAILURE_STATUS, parseSignatureHeader, signatureHeader, timestampToMs, verifySignature } from '../../src/callbacks/signature.js';

const KEY = 'test-api-key-0123456789';
const NOW = 1_767_225_600_000;
const T = String(NOW / 1000);
const BODY = '{"LockID":"L1","EventType":"operation","Event":"lock"}';

const mac = (t: string, body: Buffer | string, key = KEY) =>
  createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${t}.`), typeof body === 'string' ? Buffer.from(body) : body])).digest();
const hex = (t = T, body: Buffer | string = BODY) => mac(t, body).toString('hex');
const verify = (header: string | string[] | undefined, body: Buffer | string = BODY, now = NOW) =>
  verifySignature({ header, body, apiKey: KEY, toleranceSeconds: 300, now });

describe('X-Svc-Signature encodings', () => {
  it('accepts a valid hex v', () => {
    expect(verify(`t=${T},v=${hex()}`)).toEqual({ ok: true, timestampMs: NOW });
  });
  it('accepts uppercase hex', () => {
    expect(verify(`t=${T},v=${hex().toUpperCase()}`).ok).toBe(true);
  });
  it('accepts base64 with padding', () => {
    const v = mac(T, BODY).toString('base64');
    expect(v.endsWith('=')).toBe(true);
    expect(verify(`t=${T},v=${v}`).ok).toBe(true);
  });
  it('accepts base64 without padding', () => {
    expect(verify(`t=${T},v=${mac(T, BODY).toString('base64').replace(/=+$/, '')}`).ok).toBe(true);
  });
  it('accepts the signatureHeader helper in both encodings', () => {
    expect(verify(signatureHeader(KEY, T, BODY)).ok).toBe(true);
    expect(verify(signatureHeader(KEY, T, BODY, 'base64')).ok).toBe(true);
  });
});

describe('missing (401) versus malformed (400) headers', () => {
  it('a missing header is missing-signature (401)', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'missing-signature' });
    expect(SIGNATURE_FAILURE_STATUS['missing-signature']).toBe(401);
  });
  it('an empty or blank header is missing-signature (401)', () => {
    for (const header of ['', '   ', ' , ']) expect(verify(header)).toEqual({ ok: false, reason: 'missing-signature' });
  });
  it('a garbage header is malformed (400)', () => {
    expect(verify('garbage')).toEqual({ ok: false, reason: 'malformed-signature' });
    expect(SIGNATURE_FAILURE_STATUS['malformed-signature']).toBe(400);
  });
  it('a header with only unknown prefixes is malformed', () => {
    expect(verify(`x=${T},v1=${hex()}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });
  it('no v element is malformed', () => {
    expect(verify(`t=${T}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });
  it('two t elements are malformed', () => {
    expect(verify(`t=${T},t=${T},v=${hex()}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });
  it.each([
    ['non-numeric', 'abc'],
    ['empty', ''],
    ['negative', `-${T}`],
    ['fractional', `${T}.5`],
    ['exponent form', '1.7e9'],
    ['signed', `+${T}`],
    ['11 digits', '17672256000'],
    ['14 digits', '17672256000000'],
  ])('t %s is rejected as malformed', (_name, t) => {
    expect(verify(`t=${t},v=${hex(t)}`)).toEqual({ ok: false, reason: 'malformed-signature' });
  });
});

describe('v must match (401 bad-signature)', () => {
  it.each([
    ['empty', ''],
    ['truncated', hex().slice(0, 63)],
    ['8 characters', hex().slice(0, 8)],
    ['too long', `${hex()}00`],
  ])('an %s v is bad-signature', (_name, v) => {
    expect(verify(`t=${T},v=${v}`)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(SIGNATURE_FAILURE_STATUS['bad-signature']).toBe(401);
  });
  it('a 64-character v with a multibyte character is bad-signature, no exception', () => {
    const v = `é${hex().slice(1)}`;
    expect(v.length).toBe(64);
    expect(() => verify(`t=${T},v=${v}`)).not.toThrow();
    expect(verify(`t=${T},v=${v}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });
  it('several v with one valid are accepted, in any position', () => {
    const wrong = hex(T, `${BODY} `);
    expect(verify(`t=${T},v=${wrong},v=${hex()}`).ok).toBe(true);
    expect(verify(`v=${hex()},t=${T},v=${wrong}`).ok).toBe(true);
  });
  it('several v with none valid are rejected', () => {
    expect(verify(`t=${T},v=${hex(T, 'x')},v=${hex(T, 'y')}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });
  it('a v made with another key is rejected', () => {
    expect(verify(`t=${T},v=${mac(T, BODY, 'other-key').toString('hex')}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });
  it('a valid v with t changed by one is rejected', () => {
    const t2 = String(Number(T) + 1);
    expect(verify(`t=${t2},v=${hex()}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });
  it('a non-canonical base64 spelling (stray low bits) is rejected', () => {
    const v = mac(T, BODY).toString('base64').replace(/=$/, '');
    const last = v.at(-1) ?? 'A';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const tweaked = v.slice(0, -1) + (alphabet[(alphabet.indexOf(last) ^ 1)] ?? 'A');
    expect(Buffer.from(tweaked, 'base64').equals(mac(T, BODY))).toBe(true);
    expect(verify(`t=${T},v=${tweaked}`).ok).toBe(false);
  });
});

describe('header parsing', () => {
  it('spaces around separators are trimmed', () => {
    expect(verify(` t = ${T} ,  v = ${hex()} `).ok).toBe(true);
  });
  it('each element is split on the first "=" only', () => {
    const v = mac(T, BODY).toString('base64');
    expect(parseSignatureHeader(`t=${T},v=${v}`)).toEqual({ t: T, v: [v] });
  });
  it('elements without "=" and unknown prefixes are ignored', () => {
    expect(verify(`t=${T},junk,v1=abc,v=${hex()}`).ok).toBe(true);
  });
  it('duplicate headers (an array) are read as one list', () => {
    expect(verify([`t=${T}`, `v=${hex()}`]).ok).toBe(true);
  });
});

describe('two-sided tolerance |now - t| <= toleranceSeconds', () => {
  it('t at now-299 s is accepted', () => {
    const t = String(NOW / 1000 - 299);
    expect(verify(`t=${t},v=${hex(t)}`).ok).toBe(true);
  });
  it('t at now-300 s and now+300 s are accepted (the bound is inclusive)', () => {
    for (const t of [String(NOW / 1000 - 300), String(NOW / 1000 + 300)]) expect(verify(`t=${t},v=${hex(t)}`).ok).toBe(true);
  });
  it('t at now-301 s is stale, with this clock 301 s ahead', () => {
    const t = String(NOW / 1000 - 301);
    expect(verify(`t=${t},v=${hex(t)}`)).toEqual({ ok: false, reason: 'stale-timestamp', offsetMs: 301_000 });
  });
  it('t at now+301 s is stale, with this clock 301 s behind', () => {
    const t = String(NOW / 1000 + 301);
    expect(verify(`t=${t},v=${hex(t)}`)).toEqual({ ok: false, reason: 'stale-timestamp', offsetMs: -301_000 });
  });
  it('a millisecond t (13 digits) is accepted', () => {
    const t = String(NOW - 1234);
    expect(verify(`t=${t},v=${hex(t)}`)).toEqual({ ok: true, timestampMs: NOW - 1234 });
  });
  it('a millisecond t beyond the tolerance is stale', () => {
    const t = String(NOW - 300_001);
    expect(verify(`t=${t},v=${hex(t)}`)).toEqual({ ok: false, reason: 'stale-timestamp', offsetMs: 300_001 });
  });
  it('t is seconds up to 10 digits and milliseconds at 13', () => {
    expect(timestampToMs('1')).toBe(1000);
    expect(timestampToMs('1767225600')).toBe(1_767_225_600_000);
    expect(timestampToMs('1767225600123')).toBe(1_767_225_600_123);
    expect(timestampToMs('176722560012')).toBeUndefined();
  });
});

describe('verification over the exact raw bytes', () => {
  it('a Buffer body and the same string verify alike', () => {
    const header = `t=${T},v=${hex()}`;
    expect(verify(header, Buffer.from(BODY)).ok).toBe(true);
    expect(verify(header, BODY).ok).toBe(true);
  });
  it('a re-serialised body fails', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(verify(`t=${T},v=${hex()}`, pretty)).toEqual({ ok: false, reason: 'bad-signature' });
  });
  it('a pretty-printed body with a trailing newline passes when signed as sent', () => {
    const pretty = `${JSON.stringify(JSON.parse(BODY), null, 2)}\n`;
    expect(verify(`t=${T},v=${hex(T, pretty)}`, pretty).ok).toBe(true);
    expect(verify(`t=${T},v=${hex(T, pretty)}`, pretty.trimEnd()).ok).toBe(false);
  });
  it('a body with a BOM is verified on its bytes', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BODY)]);
    expect(verify(`t=${T},v=${hex(T, bytes)}`, bytes).ok).toBe(true);
    expect(verify(`t=${T},v=${hex(T, bytes)}`, BODY).ok).toBe(false);
  });
  it('non-UTF-8 bytes are verified on their bytes, not on a decoded string', () => {
    const bytes = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0xff, 0x22, 0x7d]);
    expect(verify(`t=${T},v=${hex(T, bytes)}`, bytes).ok).toBe(true);
    expect(verify(`t=${T},v=${hex(T, bytes)}`, bytes.toString('utf8')).ok).toBe(false);
  });
  it('an emoji body verifies', () => {
    const body = '{"LockID":"🔒","Event":"lock 🚪"}';
    expect(verify(`t=${T},v=${hex(T, body)}`, body).ok).toBe(true);
  });
  it('an empty body verifies against t + "."', () => {
    expect(verify(`t=${T},v=${hex(T, '')}`, Buffer.alloc(0)).ok).toBe(true);
  });
});

describe('property: only a correct signature is accepted, nothing throws', () => {
  it('random headers never verify and never throw', () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ maxLength: 200 }), (header, body) => {
        const result = verifySignature({ header, body: Buffer.from(body), apiKey: KEY, toleranceSeconds: 300, now: NOW });
        expect(result.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
  it('a correct signature over random bytes verifies; one flipped byte does not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.nat(), (body, index) => {
        const bytes = Buffer.from(body);
        const header = `t=${T},v=${hex(T, bytes)}`;
        expect(verify(header, bytes).ok).toBe(true);
        const changed = Buffer.from(bytes);
        const i = index % changed.length;
        changed[i] = (changed[i] ?? 0) ^ 0x01;
        expect(verify(header, changed).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
