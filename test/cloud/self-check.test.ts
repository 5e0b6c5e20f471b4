import { createServer, type RequestListener, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { DedupeStore } from '../../src/callbacks/dedupe.js';
import { type Receiver, startReceiver } from '../../src/callbacks/receiver.js';
import { checkPublicUrl, selfCheckMessages } from '../../src/cloud/self-check.js';
import { Storage } from '../../src/storage.js';
import { captureLog } from './cloud-fixture.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(handler: RequestListener): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => {
      resolve();
    });
  }));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The plugin's real callback receiver, listening on a free port, answering health with `nonce`. */
async function realReceiver(nonce: string): Promise<Receiver> {
  const dir = await mkdtemp(join(tmpdir(), 'self-check-'));
  const storage = new Storage(dir);
  const receiver = await startReceiver({
    webhook: { publicUrl: 'https://home.example.net/lock-access', listenHost: '127.0.0.1', listenPort: 0, toleranceSeconds: 300, deliveryCheckMinutes: 360, deliverySensor: true },
    apiKey: 'test-api-key',
    callbackToken: () => 'token',
    instanceNonce: nonce,
    dedupe: await DedupeStore.open({ storage }),
    log: captureLog(),
    onEvents: () => undefined,
  });
  cleanups.push(async () => {
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });
  return receiver;
}

describe('self-check of the public URL (GET {publicUrl}/health, same instance)', () => {
  it('"right nonce ok": the plugin\'s own listener answers with our instance', async () => {
    const receiver = await realReceiver('nonce-1');
    const result = await checkPublicUrl({ publicUrl: `http://127.0.0.1:${receiver.port}/lock-access/`, instanceNonce: 'nonce-1' });
    expect(result).toMatchObject({ ok: true, url: `http://127.0.0.1:${receiver.port}/lock-access/health` });
    expect(result.message).toEqual(selfCheckMessages.ok(`http://127.0.0.1:${receiver.port}/lock-access/health`));
  });

  it('"wrong nonce": another process (or a stale proxy target) answers', async () => {
    const receiver = await realReceiver('someone-else');
    const result = await checkPublicUrl({ publicUrl: `http://127.0.0.1:${receiver.port}/lock-access`, instanceNonce: 'nonce-1' });
    expect(result).toMatchObject({ ok: false, problem: 'other-instance' });
    expect(result.message.text).toMatch(/another listener, not this Homebridge's/);
  });

  it('"nothing listening": nothing answered at the address', async () => {
    const host = await serve(() => undefined);
    await cleanups.pop()?.(); // the port is now closed
    const result = await checkPublicUrl({ publicUrl: `http://${host}/lock-access`, instanceNonce: 'n' });
    expect(result).toMatchObject({ ok: false, problem: 'unreachable' });
    expect(result.message).toEqual({ code: 'selfCheck.unreachable', params: { url: `http://${host}/lock-access/health`, errorCode: 'ECONNREFUSED' }, text: expect.stringMatching(/^Nothing answered at http:\/\/127\.0\.0\.1:\d+\/lock-access\/health \(ECONNREFUSED\)\. Check that webhook\.publicUrl/) as unknown });
  });

  it('a listener that never answers: timeout, in plain words', async () => {
    const host = await serve(() => undefined);
    const result = await checkPublicUrl({ publicUrl: `http://${host}`, instanceNonce: 'n', timeoutMs: 200 });
    expect(result).toMatchObject({ ok: false, problem: 'timeout' });
    expect(result.message.text).toMatch(/^Nothing answered at http:\/\/127\.0\.0\.1:\d+\/health within 0\.2 seconds/);
    expect(result.message).toMatchObject({ code: 'selfCheck.timeout', params: { seconds: 0.2 } });
  });

  it('"redirect": the service does not follow redirects', async () => {
    const host = await serve((_request, response) => response.writeHead(302, { location: 'https://elsewhere.example.net/health' }).end());
    const result = await checkPublicUrl({ publicUrl: `http://${host}/lock-access`, instanceNonce: 'n' });
    expect(result).toMatchObject({ ok: false, problem: 'redirect', status: 302 });
    expect(result.message.text).toContain('does not follow redirects');
    expect(result.message.text).toContain('to https://elsewhere.example.net/health');
    expect(result.message).toMatchObject({ code: 'selfCheck.redirectTo', params: { status: 302, location: 'https://elsewhere.example.net/health' } });
  });

  it('"non-JSON": a proxy page answers 200 with HTML', async () => {
    const host = await serve((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>Welcome to nginx</html>'));
    const result = await checkPublicUrl({ publicUrl: `http://${host}`, instanceNonce: 'n' });
    expect(result).toMatchObject({ ok: false, problem: 'not-json' });
  });

  it('"non-200": a 502 from the proxy', async () => {
    const host = await serve((_request, response) => response.writeHead(502).end('Bad Gateway'));
    const result = await checkPublicUrl({ publicUrl: `http://${host}`, instanceNonce: 'n' });
    expect(result).toMatchObject({ ok: false, problem: 'http-status', status: 502 });
    expect(result.message.text).toMatch(/answered HTTP 502 instead of 200/);
    expect(result.message).toMatchObject({ code: 'selfCheck.httpStatus', params: { status: 502 } });
  });

  it('"TLS error": https to something that does not speak TLS', async () => {
    const host = await serve((_request, response) => response.end('{}'));
    const result = await checkPublicUrl({ publicUrl: `https://${host}`, instanceNonce: 'n' });
    expect(result).toMatchObject({ ok: false, problem: 'tls' });
    expect(result.message.text).toMatch(/^The secure connection to https:\/\/127\.0\.0\.1:\d+\/health failed \(/);
    // The page gets the error's code, never a library's sentence.
    expect(result.message).toMatchObject({ code: 'selfCheck.tls', params: { errorCode: expect.stringMatching(/^[A-Z0-9_]+$/) as unknown } });
  });

  it('never throws, and never shows a user name or password from the URL', async () => {
    expect(await checkPublicUrl({ publicUrl: 'not a url', instanceNonce: 'n' })).toMatchObject({ ok: false, problem: 'invalid-url' });
    const throwing = (() => {
      throw new Error('sync failure');
    }) as unknown as typeof fetch;
    const result = await checkPublicUrl({ publicUrl: 'https://user:secret@home.example.net/x', instanceNonce: 'n', fetch: throwing });
    expect(result).toMatchObject({ ok: false, problem: 'unreachable', url: 'https://home.example.net/x/health' });
    expect(JSON.stringify(result.message)).not.toContain('secret');
  });
});
