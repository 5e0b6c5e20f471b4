// The one shape of every authenticated call to the service (spec "Authentication": x-svc-api-key
// and x-svc-access-token on every call; the token never goes anywhere else).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { nodeFetch } from '../../../src/cloud/http/node-fetch.js';
import { sendServiceRequest, serviceUrl } from '../../../src/cloud/http/service-request.js';
import { startLocalServer, type LocalServer } from '../local-server.js';

let server: LocalServer;

beforeEach(async () => {
  server = await startLocalServer();
});

afterEach(async () => {
  await server.close();
});

describe('spec Authentication: every call carries the API key and the access token, as JSON', () => {
  it('builds {baseUrl}{path}?{query}, with or without the leading slash', () => {
    expect(serviceUrl('https://api.example.com/v1', '/webhook/L 1')).toBe('https://api.example.com/v1/webhook/L%201');
    expect(serviceUrl('https://api.example.com/v1', 'users/me', { dvrID: 'a&b' })).toBe('https://api.example.com/v1/users/me?dvrID=a%26b');
    expect(() => serviceUrl('not a url', '/x')).toThrow(TypeError);
  });

  it('sends method, both headers and a JSON body; the answer comes back whatever its status', async () => {
    server.handle((_request, _body, response) => {
      response.writeHead(422);
      response.end('{}');
    });
    const response = await sendServiceRequest(
      { baseUrl: server.base, apiKey: 'key-1', fetch: nodeFetch },
      { method: 'PUT', url: serviceUrl(server.base, '/remoteoperate/L1/lock'), token: 'token-1', body: { a: 1 }, timeoutMs: 1_000 },
    );
    expect(response.status).toBe(422);
    expect(server.seen[0]).toMatchObject({ method: 'PUT', url: '/remoteoperate/L1/lock', body: '{"a":1}' });
    expect(server.seen[0]?.headers).toMatchObject({ 'x-svc-api-key': 'key-1', 'x-svc-access-token': 'token-1', 'content-type': 'application/json', accept: 'application/json' });
  });

  it('a redirect is refused, so the token is never sent to another address', async () => {
    const elsewhere = await startLocalServer();
    try {
      server.handle((_request, _body, response) => {
        response.writeHead(307, { location: `${elsewhere.base}/users/me` });
        response.end();
      });
      const call = sendServiceRequest({ baseUrl: server.base, apiKey: 'key-1', fetch: nodeFetch }, { method: 'GET', url: serviceUrl(server.base, '/users/me'), token: 'token-1', timeoutMs: 1_000 });
      await expect(call).rejects.toThrow('fetch failed');
      expect(elsewhere.seen).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});
