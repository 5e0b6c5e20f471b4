// The simulator's stills that misbehave: what the plugin's retry and redirect
// rules are tested against end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startSimulator, type Simulator } from './index.js';
import { api, grant, registration } from './test-helpers.js';
import { startTestReceiver, type TestReceiver } from './test-receiver.js';

let sim: Simulator;
let receiver: TestReceiver;

beforeAll(async () => {
  receiver = await startTestReceiver();
  sim = await startSimulator({ doorbells: [{ id: 'D1', name: 'Front Doorbell' }] });
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});

const isJpeg = (bytes: Buffer): boolean => bytes[0] === 0xff && bytes[1] === 0xd8;

describe('a still that fails for a moment, and one that changes scheme', () => {
  it('/media/flaky fails its first N requests with the given 5xx, then serves the JPEG; counted per URL', async () => {
    const path = '/media/flaky/D1/a.jpg?fail=2&status=502';
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${sim.url}${path}`)).status);
    expect(statuses).toEqual([502, 502, 200]);
    const image = Buffer.from(await (await fetch(`${sim.url}${path}`)).arrayBuffer());
    expect(isJpeg(image)).toBe(true);
    expect(sim.imageRequests(path)).toBe(4);
    // another URL has a count of its own, 503 by default
    expect((await fetch(`${sim.url}/media/flaky/D1/b.jpg?fail=1`)).status).toBe(503);
    expect(sim.imageRequests('/media/flaky/D1/b.jpg?fail=1')).toBe(1);
    expect((await fetch(`${sim.url}/media/flaky/D1/c.jpg?status=404`)).status).toBe(400);
  });

  it('/media/redirect answers 302 to the same still under another scheme (https by default)', async () => {
    const reply = await fetch(`${sim.url}/media/redirect/D1/a.jpg`, { redirect: 'manual' });
    expect(reply.status).toBe(302);
    expect(reply.headers.get('location')).toBe(`${sim.url.replace(/^http:/, 'https:')}/media/motion/D1/a.jpg`);
    const ftp = await fetch(`${sim.url}/media/redirect/D1/a.jpg?scheme=ftp`, { redirect: 'manual' });
    expect(ftp.headers.get('location')).toMatch(/^ftp:\/\/127\.0\.0\.1:\d+\/media\/motion\/D1\/a\.jpg$/);
  });

  it('motion with imageUrl carries that address as both Url and SecureURL', async () => {
    const token = (await grant(sim)).accessToken;
    await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/bell`, sim.account.clientId, ['motiondetected']));
    const imageUrl = `${sim.url}/media/flaky/D1/m.jpg?fail=3`;
    await sim.fire('motion', { doorbellId: 'D1', imageUrl });
    const body = receiver.received[0]?.body as { Url: string; SecureURL: string };
    expect(body).toMatchObject({ Url: imageUrl, SecureURL: imageUrl });
  });
});
