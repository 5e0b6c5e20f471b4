import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { fetchImage, MAX_SNAPSHOT_BYTES } from '../../src/runtime/image-fetch.js';

describe('design 7: the motion still is downloaded with a size cap', () => {
  let server: Server;
  let base: string;

  beforeEach(async () => {
    server = createServer((request, response) => {
      if (request.url === '/still.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from('jpeg-bytes'));
      else if (request.url === '/moved.jpg') response.writeHead(302, { location: '/still.jpg' }).end();
      else if (request.url === '/empty.jpg') response.writeHead(200, { 'content-type': 'image/jpeg' }).end();
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
});
