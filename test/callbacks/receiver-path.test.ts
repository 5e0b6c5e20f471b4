// A public address whose path has letters of any language or a space: the service calls the
// percent-encoded path, and the real listener (Fastify on a port) must route it, health included.
import { afterEach, describe, expect, it } from 'vitest';

import { startReceiver, type Receiver } from '../../src/callbacks/receiver.js';
import { callbackUrls } from '../../src/config.js';
import { checkPublicUrl } from '../../src/cloud/self-check.js';
import { LOCK_ID, fixtures } from './fixtures.js';
import { afterReplies, makeHarness, signed, type Harness } from './helpers.js';

const running: { receiver: Receiver; h: Harness }[] = [];

afterEach(async () => {
  for (const { receiver, h } of running.splice(0)) {
    await receiver.close();
    await h.cleanup();
  }
});

/** The real listener for a public address with `path`, and the address the service would call it at. */
async function listenerFor(path: string): Promise<{ h: Harness; local: string }> {
  const h = await makeHarness({}, { publicUrl: `https://home.example.net${path}` });
  const receiver = await startReceiver(h.options);
  running.push({ receiver, h });
  return { h, local: `http://127.0.0.1:${receiver.port}${path}` };
}

describe('a public path with letters of any language or a space is routed as the service calls it', () => {
  it.each([['/Haustür', '/Haust%C3%BCr'], ['/lock access', '/lock%20access']])('%s: registered percent-encoded, and a callback to that path is accepted', async (path, encoded) => {
    const { h, local } = await listenerFor(path);
    const url = callbackUrls(local).lock(LOCK_ID);
    expect(url).toBe(`${local.replace(path, encoded)}/lock/${LOCK_ID}`);
    const request = signed(fixtures.privacy);
    const response = await fetch(url, { method: 'POST', body: request.body.toString(), headers: request.headers });
    expect(response.status).toBe(200);
    await afterReplies();
    expect(h.sunk).toHaveLength(1);
  });

  it('a callback to /Haust%C3%BCr/lock/ID, as written, is accepted', async () => {
    const { h, local } = await listenerFor('/Haustür');
    const port = new URL(local).port;
    const request = signed(fixtures.privacy);
    const response = await fetch(`http://127.0.0.1:${port}/Haust%C3%BCr/lock/${LOCK_ID}`, { method: 'POST', body: request.body.toString(), headers: request.headers });
    expect(response.status).toBe(200);
    await afterReplies();
    expect(h.sunk.map((s) => s.context.route)).toEqual(['lock']);
  });

  it('health answers under that path, so the public-address self-check passes', async () => {
    const { local } = await listenerFor('/Haustür');
    const result = await checkPublicUrl({ publicUrl: local, instanceNonce: 'nonce-123' });
    expect(result).toMatchObject({ ok: true, url: `${local.replace('/Haustür', '/Haust%C3%BCr')}/health` });
  });
});
