// Property tests: whatever arrives, the receiver answers 2xx only to a correctly signed request,
// never answers 5xx, and never throws.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildReceiverApp } from '../../src/callbacks/receiver.js';
import type { ReceiverApp } from '../../src/callbacks/receiver.js';
import { signatureHeader } from '../../src/callbacks/signature.js';
import { LOCK_ID, fixtures } from './fixtures.js';
import { API_KEY, NOW, TOKEN, makeHarness } from './helpers.js';
import type { Harness } from './helpers.js';

let h: Harness;
let app: ReceiverApp;

beforeAll(async () => {
  h = await makeHarness();
  app = buildReceiverApp(h.options);
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await h.cleanup();
});

const T = Math.floor(NOW / 1000);
const paths = fc.constantFrom(`/lock-access/lock/${LOCK_ID}`, '/lock-access/doorbell/DB-1', '/lock-access/user', '/lock-access/lock/x');
const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 400 }).map((bytes) => Buffer.from(bytes)),
  fc.json().map((text) => Buffer.from(text)),
  fc.constantFrom(...Object.values(fixtures)).map((body) => Buffer.from(JSON.stringify(body))),
  fc.object().map((value) => Buffer.from(JSON.stringify(value))),
);
const headerValues = fc.oneof(
  fc.string(),
  fc.tuple(fc.oneof(fc.constant(String(T)), fc.string()), fc.string()).map(([t, v]) => `t=${t},v=${v}`),
  fc.string({ unit: fc.constantFrom(...Array.from('0123456789abcdefABCDEF')), minLength: 64, maxLength: 64 }).map((v) => `t=${T},v=${v}`),
);

describe('property: random requests', () => {
  it('random signature headers and bodies are never 2xx, never 5xx, never throw', async () => {
    await fc.assert(
      fc.asyncProperty(paths, bodies, headerValues, fc.option(fc.string(), { nil: undefined }), async (url, body, header, contentType) => {
        const headers: Record<string, string> = { 'x-svc-signature': header, 'x-lock-access-token': TOKEN };
        if (contentType !== undefined && /^[\x20-\x7e]*$/.test(contentType)) headers['content-type'] = contentType;
        const res = await app.inject({ method: 'POST', url, payload: body, headers });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
  });

  it('correctly signed random bodies are answered 200 or 4xx, never 5xx, never throw', async () => {
    await fc.assert(
      fc.asyncProperty(paths, bodies, fc.boolean(), async (url, body, withToken) => {
        const headers: Record<string, string> = { 'x-svc-signature': signatureHeader(API_KEY, T, body), 'content-type': 'application/json' };
        if (withToken) headers['x-lock-access-token'] = TOKEN;
        const res = await app.inject({ method: 'POST', url, payload: body, headers });
        expect([200, 400, 401, 404]).toContain(res.statusCode);
      }),
      { numRuns: 300 },
    );
  });

  it('a signed body changed in one byte is never 2xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.values(fixtures)), fc.nat(), fc.integer({ min: 1, max: 255 }), async (fixture, index, flip) => {
        const body = Buffer.from(JSON.stringify(fixture));
        const header = signatureHeader(API_KEY, T, body);
        const changed = Buffer.from(body);
        const i = index % changed.length;
        changed[i] = (changed[i] ?? 0) ^ flip;
        const res = await app.inject({ method: 'POST', url: `/lock-access/lock/${LOCK_ID}`, payload: changed, headers: { 'x-svc-signature': header, 'x-lock-access-token': TOKEN } });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
      }),
      { numRuns: 200 },
    );
  });
});
