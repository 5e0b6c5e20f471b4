import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { grantFetch, MAX_RESPONSE_BYTES, nodeFetch } from '../../../src/cloud/http/node-fetch.js';
import { networkErrorCode } from '../../../src/cloud/http/network-error.js';
import { closedPort, startLocalServer, type LocalServer } from '../local-server.js';

let server: LocalServer;
let base: string;

beforeEach(async () => {
  server = await startLocalServer();
  base = server.base;
});

afterEach(async () => {
  await server.close();
});

describe('nodeFetch, the fetch of every call to the service (node:http, a POST never sent twice)', () => {
  it('sends method, headers and body, and answers with a standard Response', async () => {
    server.handle((_request, body, response) => {
      response.writeHead(201, { 'content-type': 'application/json', 'x-svc-access-token': 'next' });
      response.end(JSON.stringify({ echo: body }));
    });
    const response = await nodeFetch(`${base}/path?x=1`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams({ a: '1', b: 'two' }) });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get('x-svc-access-token')).toBe('next');
    expect(await response.json()).toEqual({ echo: 'a=1&b=two' });
    expect(server.seen[0]).toMatchObject({ method: 'POST', url: '/path?x=1', body: 'a=1&b=two' });
    expect(server.seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(server.seen[0]?.headers['content-length']).toBe('9');
  });

  it('gives error statuses and empty answers as they are', async () => {
    server.handle((request, _body, response) => {
      response.writeHead(request.url === '/gone' ? 404 : 204);
      response.end(request.url === '/gone' ? 'not here' : undefined);
    });
    const missing = await nodeFetch(`${base}/gone`);
    expect(missing.status).toBe(404);
    expect(missing.ok).toBe(false);
    expect(await missing.text()).toBe('not here');
    const empty = await nodeFetch(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('follows redirects like fetch (303 and a POST behind 302 become GET; 307 keeps the method), or refuses them', async () => {
    server.handle((request, _body, response) => {
      if (request.url === '/see-other') response.writeHead(303, { location: '/target' }).end();
      else if (request.url === '/temporary') response.writeHead(307, { location: `${base}/target` }).end();
      else response.end(`${request.method ?? ''} target`);
    });
    expect(await (await nodeFetch(`${base}/see-other`, { method: 'POST', body: 'x' })).text()).toBe('GET target');
    expect(await (await nodeFetch(`${base}/temporary`, { method: 'PUT', body: 'x' })).text()).toBe('PUT target');
    expect(server.seen.at(-1)?.body).toBe('x');
    const refused = await nodeFetch(`${base}/see-other`, { method: 'POST', body: 'x', redirect: 'error' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(networkErrorCode(refused)).toBe('ERR_REDIRECT');
  });

  it('a refused connection rejects with the system error code in the cause, as fetch does', async () => {
    const error = await nodeFetch(`${await closedPort()}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(networkErrorCode(error)).toBe('ECONNREFUSED');
  });

  it('a deadline rejects with a TimeoutError and the request is cut', async () => {
    server.handle(() => undefined); // never answers
    const error = await nodeFetch(`${base}/slow`, { signal: AbortSignal.timeout(50) }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    const already = await nodeFetch(`${base}/slow`, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((already as Error).name).toBe('AbortError');
  });

  it('refuses an answer too big to hold', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 1);
    server.handle((_request, _body, response) => {
      let sent = 0;
      const more = () => {
        while (sent <= MAX_RESPONSE_BYTES) {
          sent += chunk.length;
          if (!response.write(chunk)) {
            response.once('drain', more);
            return;
          }
        }
        response.end();
      };
      more();
    });
    const error = await nodeFetch(`${base}/huge`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(networkErrorCode(error)).toBe('ERR_RESPONSE_TOO_LARGE');
  });

  it('reuses kept connections for calls in a row, POSTs (registrations) too; the token grant goes on a new one each time', async () => {
    const ports: Record<string, Set<number>> = { GET: new Set(), PUT: new Set(), POST: new Set(), grant: new Set() };
    server.handle((request, _body, response) => {
      ports[request.url === '/grant' ? 'grant' : (request.method ?? '')]?.add(request.socket.remotePort ?? 0);
      response.end('ok');
    });
    for (let i = 0; i < 5; i += 1) expect(await (await nodeFetch(`${base}/again`)).text()).toBe('ok');
    for (let i = 0; i < 3; i += 1) expect(await (await nodeFetch(`${base}/again`, { method: 'PUT', body: '{}' })).text()).toBe('ok');
    for (let i = 0; i < 5; i += 1) expect(await (await nodeFetch(`${base}/webhook/L${String(i)}`, { method: 'POST', body: '{}' })).text()).toBe('ok');
    for (let i = 0; i < 3; i += 1) expect(await (await grantFetch(`${base}/grant`, { method: 'POST', body: 'a=1' })).text()).toBe('ok');
    expect(ports.GET?.size).toBe(1);
    expect(ports.PUT?.size).toBe(1);
    expect(ports.POST?.size).toBe(1);
    expect(ports.grant?.size).toBe(3);
  });
});
