import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from './index.js';
import { api, grant, registration } from './test-helpers.js';
import { testReceiverForFile } from './test-receiver.js';

let sim: Simulator;
let token: string;
const receiver = testReceiverForFile();

beforeEach(async () => {
  sim = await startSimulator({
    locks: [
      { id: 'L1', name: 'Front Door', doorSensor: true, keypad: true },
      { id: 'L2', name: 'Back Door', bridge: 'offline' },
    ],
    doorbells: [{ id: 'D1', name: 'Front Doorbell' }],
  });
  token = (await grant(sim)).accessToken;
});
afterEach(async () => {
  await sim.close();
});

const lockTypes = ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'];

describe('spec Referred-to reads: /users/me and device discovery', () => {
  it('GET /users/me returns UserID, FirstName, LastName, Email', async () => {
    const reply = await api(sim, token, 'GET', '/users/me');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ UserID: sim.account.userId, FirstName: expect.any(String) as string, LastName: expect.any(String) as string, Email: expect.any(String) as string });
  });

  it('GET /users/locks/mine: object keyed by lock id with LockName, UserType, macAddress, HouseName', async () => {
    const reply = await api(sim, token, 'GET', '/users/locks/mine');
    const body = reply.body as Record<string, Record<string, unknown>>;
    expect(Object.keys(body)).toEqual(['L1', 'L2']);
    expect(body.L1).toEqual({ LockName: 'Front Door', UserType: 'superuser', macAddress: expect.stringMatching(/^([0-9A-F]{2}:){5}[0-9A-F]{2}$/) as string, HouseName: expect.any(String) as string });
    sim.addLock({ id: 'L3', name: 'Garage' });
    sim.removeLock('L2');
    expect(Object.keys((await api(sim, token, 'GET', '/users/locks/mine')).body as object)).toEqual(['L1', 'L3']);
  });

  it('GET /users/doorbells/mine: object keyed by doorbell id with name, serialNumber, status', async () => {
    const body = (await api(sim, token, 'GET', '/users/doorbells/mine')).body as Record<string, Record<string, unknown>>;
    expect(body).toEqual({ D1: { name: 'Front Doorbell', serialNumber: expect.any(String) as string, status: 'online' } });
  });
});

describe('Webhook registration (spec: Endpoints, Resources > Webhook registration, Limits)', () => {
  it('none + POST registration -> registered; response {message: success}', async () => {
    for (const [path, types] of [['/webhook/L1', lockTypes], ['/webhook/doorbell/D1', ['motiondetected', 'videoavailable', 'buttonpush']], ['/webhook/user', ['lockmembership', 'lifecycle']]] as const) {
      const reply = await api(sim, token, 'POST', path, registration(`${receiver.url}/x`, sim.account.clientId, [...types]));
      expect(reply.status, path).toBe(200);
      expect(reply.body).toEqual({ message: 'success' });
      expect(reply.headerToken).toBeTruthy();
    }
    expect(sim.registrations().map((r) => [r.kind, r.scope])).toEqual([['lock', 'L1'], ['doorbell', 'D1'], ['user', sim.account.userId]]);
  });

  it('registered + POST for the same scope -> registered; previous values replaced, last call wins (one per user per device)', async () => {
    await api(sim, token, 'POST', '/webhook/L1', registration(`${receiver.url}/first`, sim.account.clientId, ['operation'], 't1'));
    await api(sim, token, 'POST', '/webhook/L1', registration(`${receiver.url}/second`, sim.account.clientId, ['battery'], 't2'));
    const regs = sim.registrations();
    expect(regs).toHaveLength(1);
    expect(regs[0]).toMatchObject({ kind: 'lock', scope: 'L1', url: `${receiver.url}/second`, token: 't2', notificationTypes: ['battery'] });
    await api(sim, token, 'POST', '/webhook/user', registration(`${receiver.url}/u1`, sim.account.clientId, ['lifecycle']));
    await api(sim, token, 'POST', '/webhook/user', registration(`${receiver.url}/u2`, sim.account.clientId, ['lifecycle']));
    await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/d1`, sim.account.clientId, ['buttonpush']));
    await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/d2`, sim.account.clientId, ['buttonpush']));
    expect(sim.registrations().map((r) => r.url).sort()).toEqual([`${receiver.url}/d2`, `${receiver.url}/second`, `${receiver.url}/u2`]);
  });

  it('registered + DELETE -> none: callbacks stop; deletion answers 200 {message: success}', async () => {
    await api(sim, token, 'POST', '/webhook/L1', registration(`${receiver.url}/lock`, sim.account.clientId, lockTypes));
    await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/bell`, sim.account.clientId, ['buttonpush']));
    await api(sim, token, 'POST', '/webhook/user', registration(`${receiver.url}/user`, sim.account.clientId, ['lifecycle']));
    expect(await sim.fire('unlock')).toHaveLength(1);
    for (const path of [`/webhook/L1/${sim.account.clientId}`, `/webhook/doorbell/D1/${sim.account.clientId}`, `/webhook/user/${sim.account.clientId}`]) {
      const reply = await api(sim, token, 'DELETE', path);
      expect(reply.status, path).toBe(200);
      expect(reply.body).toEqual({ message: 'success' });
    }
    expect(sim.registrations()).toEqual([]);
    expect(await sim.fire('unlock')).toEqual([]);
    expect(await sim.fire('doorbell-press')).toEqual([]);
    expect(await sim.fire('user-deleted')).toEqual([]);
    expect(receiver.received).toHaveLength(1);
  });

  it('deleting with another clientID leaves the registration in place (404)', async () => {
    await api(sim, token, 'POST', '/webhook/L1', registration(`${receiver.url}/lock`, sim.account.clientId, lockTypes));
    expect((await api(sim, token, 'DELETE', '/webhook/L1/other-client')).status).toBe(404);
    expect(sim.registrations()).toHaveLength(1);
  });

  it('deleting what is not registered is idempotent (200); an unknown lock or doorbell gets 404', async () => {
    expect((await api(sim, token, 'DELETE', `/webhook/L1/${sim.account.clientId}`)).status).toBe(200);
    expect((await api(sim, token, 'DELETE', `/webhook/NOPE/${sim.account.clientId}`)).status).toBe(404);
    expect((await api(sim, token, 'DELETE', `/webhook/doorbell/NOPE/${sim.account.clientId}`)).status).toBe(404);
  });

  it('a registration whose lock left the account can still be deleted', async () => {
    await api(sim, token, 'POST', '/webhook/L2', registration(`${receiver.url}/lock`, sim.account.clientId, lockTypes));
    sim.removeLock('L2');
    expect((await api(sim, token, 'DELETE', `/webhook/L2/${sim.account.clientId}`)).status).toBe(200);
    expect(sim.registrations()).toEqual([]);
  });

  it('404 for an unknown lock or doorbell of the account', async () => {
    expect((await api(sim, token, 'POST', '/webhook/NOPE', registration(receiver.url, sim.account.clientId, ['operation']))).status).toBe(404);
    expect((await api(sim, token, 'POST', '/webhook/doorbell/NOPE', registration(receiver.url, sim.account.clientId, ['buttonpush']))).status).toBe(404);
  });

  it('400 on a missing field of the six', async () => {
    const full = registration(`${receiver.url}/x`, sim.account.clientId, ['operation']);
    for (const field of ['url', 'method', 'clientID', 'header', 'token', 'notificationTypes']) {
      const { [field]: _dropped, ...partial } = full;
      const reply = await api(sim, token, 'POST', '/webhook/L1', partial);
      expect(reply.status, field).toBe(400);
      expect((reply.body as { message: string }).message).toContain(field);
    }
    expect((await api(sim, token, 'POST', '/webhook/L1')).status).toBe(400);
    expect(sim.registrations()).toEqual([]);
  });

  it('400 on a non-absolute URL', async () => {
    for (const url of ['/relative/path', 'example.com/hook', 'ftp://example.com/hook', '']) {
      expect((await api(sim, token, 'POST', '/webhook/L1', registration(url, sim.account.clientId, ['operation']))).status, url).toBe(400);
    }
  });

  it('400 on a method other than POST or PUT; PUT is accepted', async () => {
    for (const method of ['GET', 'DELETE', 'PATCH', 'post']) {
      expect((await api(sim, token, 'POST', '/webhook/L1', { ...registration(receiver.url, sim.account.clientId, ['operation']), method })).status, method).toBe(400);
    }
    expect((await api(sim, token, 'POST', '/webhook/L1', { ...registration(receiver.url, sim.account.clientId, ['operation']), method: 'PUT' })).status).toBe(200);
  });

  it('400 on a notification type outside the kind\'s allowed set (or an empty set)', async () => {
    expect((await api(sim, token, 'POST', '/webhook/L1', registration(receiver.url, sim.account.clientId, ['buttonpush']))).status).toBe(400);
    expect((await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(receiver.url, sim.account.clientId, ['operation']))).status).toBe(400);
    expect((await api(sim, token, 'POST', '/webhook/user', registration(receiver.url, sim.account.clientId, ['accessmgmt']))).status).toBe(400);
    expect((await api(sim, token, 'POST', '/webhook/L1', registration(receiver.url, sim.account.clientId, []))).status).toBe(400);
  });

  it('request bodies over 1 MiB are refused (413) and register nothing', async () => {
    const big = { ...registration(receiver.url, sim.account.clientId, ['operation']), token: 'x'.repeat(1024 * 1024 + 1) };
    expect((await api(sim, token, 'POST', '/webhook/L1', big)).status).toBe(413);
    expect(sim.registrations()).toEqual([]);
  });

  it('the user hook derives the user from the access token', async () => {
    await api(sim, token, 'POST', '/webhook/user', registration(receiver.url, sim.account.clientId, ['lockmembership']));
    expect(sim.registrations()[0]).toMatchObject({ kind: 'user', scope: sim.account.userId, owner: sim.account.userId });
  });
});

describe('Remote operate (design: HomeKit mapping; bridge states)', () => {
  beforeEach(async () => {
    await api(sim, token, 'POST', '/webhook/L1', registration(`${receiver.url}/lock`, sim.account.clientId, lockTypes, 'hook-token'));
  });

  it('lock/unlock change the lock state and deliver an operation callback without the custom header', async () => {
    const reply = await api(sim, token, 'PUT', '/remoteoperate/L1/unlock');
    expect(reply.status).toBe(200);
    expect(sim.lock('L1')?.lockState).toBe('unlocked');
    await sim.idle();
    expect(receiver.received).toHaveLength(1);
    const [callback] = receiver.received;
    expect(callback?.body).toMatchObject({ EventType: 'operation', Event: 'unlock', Device: 'lock', LockID: 'L1', User: { UserID: sim.account.userId } });
    expect(callback?.headers['x-lock-access-token']).toBeUndefined();
    expect(callback?.headers['x-svc-signature']).toMatch(/^t=\d+,v=[0-9a-f]{64}$/);
    await api(sim, token, 'PUT', '/remoteoperate/L1/lock');
    expect(sim.lock('L1')?.lockState).toBe('locked');
  });

  it('status sends status callbacks (Event = current state, User = the caller) to every listener on the lock', async () => {
    await api(sim, token, 'PUT', '/remoteoperate/L1/unlock');
    await sim.idle();
    receiver.received.length = 0;
    expect((await api(sim, token, 'PUT', '/remoteoperate/L1/status')).status).toBe(200);
    await sim.idle();
    expect(receiver.received.map((r) => r.body)).toEqual([expect.objectContaining({ EventType: 'status', Event: 'unlock', LockID: 'L1', User: expect.objectContaining({ UserID: sim.account.userId }) as unknown })]);
    expect(receiver.received[0]?.headers['x-lock-access-token']).toBeUndefined();
  });

  it('bridge offline -> 422, busy -> 423, timeout -> 408, no bridge -> 409; the state does not change', async () => {
    for (const [bridge, status] of [['offline', 422], ['busy', 423], ['timeout', 408], ['none', 409]] as const) {
      sim.setBridge('L1', bridge);
      const reply = await api(sim, token, 'PUT', '/remoteoperate/L1/unlock');
      expect(reply.status, bridge).toBe(status);
      expect(reply.headerToken).toBeNull();
      expect(sim.lock('L1')?.lockState).toBe('locked');
    }
    expect(receiver.received).toEqual([]);
  });

  it('an unknown lock gets 404', async () => {
    expect((await api(sim, token, 'PUT', '/remoteoperate/NOPE/lock')).status).toBe(404);
  });
});

describe('Video event lookup and media (spec: Endpoints > Video event lookup)', () => {
  it('video faults by dvrID: lookup-404/401/500 answer that status; playlist-empty, playlist-text and playlist-gap serve a broken recording', async () => {
    for (const status of [404, 401, 500]) expect((await api(sim, token, 'GET', `/doorbells/D1/videoevent?dvrID=lookup-${status}`)).status).toBe(status);
    const url = (dvrId: string) => `${sim.url}/hls/${dvrId}/index.m3u8`;
    expect(await (await fetch(url('playlist-empty'))).text()).toBe('');
    expect(await (await fetch(url('playlist-text'))).text()).not.toContain('#EXTM3U');
    expect((await fetch(`${sim.url}/hls/playlist-gap/seg0.ts`)).status).toBe(200);
    expect((await fetch(`${sim.url}/hls/playlist-gap/seg1.ts`)).status).toBe(404);
  });

  it('GET /doorbells/:id/videoevent?dvrID= returns {url} of an .m3u8 playlist the simulator serves', async () => {
    const reply = await api(sim, token, 'GET', '/doorbells/D1/videoevent?dvrID=0b8f5b1e-1d3c-4a8e-9d76-3f1f6c1a2b3c');
    expect(reply.status).toBe(200);
    const { url } = reply.body as { url: string };
    expect(Object.keys(reply.body as object)).toEqual(['url']);
    expect(url).toBe(`${sim.url}/hls/0b8f5b1e-1d3c-4a8e-9d76-3f1f6c1a2b3c/index.m3u8?signature=SIM-SECRET-SIGNATURE`);
    const playlist = await fetch(url);
    expect(playlist.headers.get('content-type')).toContain('mpegurl');
    expect(playlist.headers.get('access-control-allow-origin')).toBe('*');
    const text = await playlist.text();
    expect(text.startsWith('#EXTM3U')).toBe(true);
    expect(text).toContain('#EXT-X-ENDLIST');
    const segments = text.split('\n').filter((line) => line.endsWith('.ts'));
    expect(segments.length).toBeGreaterThanOrEqual(2);
    for (const segment of segments) {
      const data = Buffer.from(await (await fetch(new URL(segment, url))).arrayBuffer());
      expect(data.length % 188).toBe(0);
      expect(data[0]).toBe(0x47);
    }
  });

  it('a missing dvrID gets 400; an unknown doorbell gets 404', async () => {
    expect((await api(sim, token, 'GET', '/doorbells/D1/videoevent')).status).toBe(400);
    expect((await api(sim, token, 'GET', '/doorbells/NOPE/videoevent?dvrID=x')).status).toBe(404);
  });

  it('the motion callback\'s Url points at a JPEG the simulator serves', async () => {
    await api(sim, token, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/bell`, sim.account.clientId, ['motiondetected']));
    await sim.fire('motion');
    const body = receiver.received[0]?.body as { Url: string; SecureURL: string; Width: number; Height: number };
    expect(body.SecureURL).toBe(body.Url.replace(/^http:/, 'https:'));
    const image = await fetch(body.Url);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await image.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
    expect([body.Width, body.Height]).toEqual([320, 240]);
  });
});

describe('Counters', () => {
  it('stats count API calls per route pattern and successful refresh grants', async () => {
    await api(sim, token, 'GET', '/users/me');
    await api(sim, token, 'GET', '/users/me');
    await api(sim, token, 'PUT', '/remoteoperate/L1/status');
    expect(sim.stats.apiCalls).toBe(3);
    expect(sim.stats.grants).toBe(1);
    expect(sim.stats.byRoute['GET /api/users/me']).toBe(2);
    expect(sim.stats.byRoute['PUT /api/remoteoperate/:lockID/:operation']).toBe(1);
    expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(1);
  });
});
