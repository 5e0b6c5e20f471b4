import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ImageFetchError } from '../../src/cloud/image-fetch.js';
import { imageFetcher, MAX_SNAPSHOT_BYTES } from '../../src/cloud/image-fetch.js';

/** Beside a plain-http service address (the simulator's), plain http stills are fetched. */
const fetchImage = imageFetcher(true);

describe('the motion still is downloaded with a size cap', () => {
  let server: Server;
  let base: string;

  beforeEach(async () => {
    server = createServer((request, response) => {
      if (request.url === '/still.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from('jpeg-bytes'));
      else if (request.url === '/moved.jpg') response.writeHead(302, { location: '/still.jpg' }).end();
      else if (request.url === '/empty.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end();
      else if (request.url === '/to-ftp.jpg') response.writeHead(302, { location: 'ftp://127.0.0.1/still.jpg' }).end();
      else if (request.url === '/to-https.jpg') response.writeHead(302, { location: `https://127.0.0.1:1/still.jpg` }).end();
      else if (request.url === '/loop.jpg') response.writeHead(302, { location: '/loop.jpg' }).end();
      else if (request.url === '/busy.jpg') response.writeHead(503).end();
      else if (request.url === '/hang.jpg') return; // never answers
      else if (request.url === '/huge.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(MAX_SNAPSHOT_BYTES + 1));
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('serves the image as it came, following a redirect', async () => {
    expect((await fetchImage(`${base}/still.jpg`)).toString()).toBe('jpeg-bytes');
    expect((await fetchImage(`${base}/moved.jpg`)).toString()).toBe('jpeg-bytes');
  });

  it('an error status, an empty body and an oversize body are refused in words', async () => {
    await expect(fetchImage(`${base}/missing.jpg`)).rejects.toThrow('the image server answered 404');
    await expect(fetchImage(`${base}/empty.jpg`)).rejects.toThrow('the image is empty');
    await expect(fetchImage(`${base}/huge.jpg`)).rejects.toThrow('the image is too large');
  });

  it('only http(s), and no redirect to another scheme or without end', async () => {
    for (const address of ['file:///etc/passwd', 'ftp://127.0.0.1/still.jpg', 'data:image/jpeg;base64,AAAA', 'not a url']) {
      await expect(fetchImage(address)).rejects.toMatchObject({ transient: false });
    }
    await expect(fetchImage(`${base}/to-ftp.jpg`)).rejects.toThrow(/not http\(s\)/);
    await expect(fetchImage(`${base}/to-https.jpg`)).rejects.toThrow('the image server redirected from http: to https:');
    await expect(fetchImage(`${base}/loop.jpg`)).rejects.toThrow('the image server redirected too often');
  });

  it('a 5xx or no answer in time is transient, a 404 is not; no message names the address or its credentials', async () => {
    const withCredentials = base.replace('http://', 'http://user:s3cret-pass@');
    const busy = await fetchImage(`${withCredentials}/busy.jpg`).catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(ImageFetchError);
    expect(busy).toMatchObject({ transient: true, message: 'the image server answered 503' });
    await expect(fetchImage(`${base}/missing.jpg`)).rejects.toMatchObject({ transient: false });
    const refused = await fetchImage('http://user:s3cret-pass@127.0.0.1:1/still.jpg').catch((error: unknown) => error);
    expect(refused).toMatchObject({ transient: true });
    expect((refused as Error).message).not.toMatch(/s3cret|user/);
  });

  it('the whole download has one deadline', async () => {
    const error = await imageFetcher(true, 200)(`${base}/hang.jpg`).catch((error: unknown) => error);
    expect(error).toMatchObject({ transient: true, message: 'the image server did not answer within 0.2 s' });
  });
});

describe('where a still may come from', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function serve(host: string, handler: (url: string, respond: (status: number, headers?: Record<string, string>, body?: Buffer) => void) => void): Promise<{ base: string; seen: string[] }> {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(request.url ?? '');
      handler(request.url ?? '', (status, headers = {}, body) => response.writeHead(status, headers).end(body));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return { base: `http://${host}:${(server.address() as AddressInfo).port}`, seen };
  }

  it('a redirect to another host (an address in the home network) is not followed: that host sees no request', async () => {
    const inside = await serve('127.0.0.2', (_url, respond) => {
      respond(200, { 'content-type': 'image/jpeg' }, Buffer.from('router-page'));
    });
    const outside = await serve('127.0.0.1', (url, respond) => {
      if (url === '/away.jpg') respond(302, { location: `${inside.base}/admin?token=abc` });
      else if (url === '/near.jpg') respond(301, { location: '/here.jpg' });
      else respond(200, { 'content-type': 'image/jpeg' }, Buffer.from('jpeg-bytes'));
    });
    await expect(fetchImage(`${outside.base}/away.jpg`)).rejects.toMatchObject({ transient: false, message: 'the image server redirected to another host' });
    expect(inside.seen).toEqual([]);
    // On the same host (and port) a redirect is still followed.
    expect((await fetchImage(`${outside.base}/near.jpg`)).toString()).toBe('jpeg-bytes');
  });

  it('beside an https service address, a plain http still is refused unfetched', async () => {
    const plain = await serve('127.0.0.1', (_url, respond) => {
      respond(200, { 'content-type': 'image/jpeg' }, Buffer.from('jpeg-bytes'));
    });
    await expect(imageFetcher(false)(`${plain.base}/still.jpg`)).rejects.toMatchObject({ transient: false, message: expect.stringMatching(/plain http/) as unknown });
    expect(plain.seen).toEqual([]);
  });
});
