// CloudHttpClient against the simulator: headers, JSON, rotated header tokens, error mapping,
// timeouts and the one refresh-and-retry after a 401.
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod/v3';

import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import {
  AuthorizationLostError,
  BridgeError,
  NotLinkedError,
  RateLimitedError,
  RequestRejectedError,
  TransientError,
  UnexpectedResponseError,
} from '../../../src/cloud/http/errors.js';
import type { TokenManager } from '../../../src/cloud/tokens/token-manager.js';
import { Storage } from '../../../src/storage.js';
import { startSimulator, type Simulator } from '../../sim/index.js';
import { captureLog, managerFor, tempDir, type CapturedLog } from '../../fixtures/token-harness.js';

let sim: Simulator;
let dir: string;
let cleanup: () => Promise<void>;
let log: CapturedLog;
let tokens: TokenManager;

function client(extra: Partial<ConstructorParameters<typeof CloudHttpClient>[0]> = {}): CloudHttpClient {
  return new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens, log, ...extra });
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  log = captureLog();
  sim = await startSimulator({ port: 0, locks: [{ id: 'LOCK-1', name: 'Front Door' }], doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }] });
  tokens = managerFor(sim, new Storage(join(dir, 'lock-access')), log, { seeds: { refreshToken: sim.issueRefreshToken() } });
  await tokens.start();
  tokens.stop();
});

afterEach(async () => {
  tokens.stop();
  await tokens.settled();
  await sim.close();
  await cleanup();
});

describe('spec Authentication: x-svc-api-key, x-svc-access-token, JSON bodies', () => {
  it('calls {baseUrl}{path} with both headers and a JSON body, and returns the parsed JSON', async () => {
    const registration = {
      url: 'https://home.example.net/lock-access/lock/LOCK-1', method: 'POST', clientID: sim.account.clientId,
      header: 'x-lock-access-token', token: 'w'.repeat(43), notificationTypes: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'],
    };
    const answer = await client().request('POST', '/webhook/LOCK-1', { body: registration, schema: z.object({ message: z.literal('success') }) });
    expect(answer).toEqual({ message: 'success' });
    expect(sim.registrations()).toEqual([expect.objectContaining({ kind: 'lock', scope: 'LOCK-1', url: registration.url })]);
  });

  it('passes query parameters', async () => {
    const answer = await client().request('GET', '/doorbells/BELL-1/videoevent', { query: { dvrID: 'abc-123' }, schema: z.object({ url: z.string() }) });
    // The dvrID reached the simulator: its recording's playlist comes back (a signed link).
    expect(new URL(answer.url).pathname).toBe('/hls/abc-123/index.m3u8');
  });

  it('"every successful API response includes x-svc-access-token": it is used for the next call at once', async () => {
    const seen: string[] = [];
    const spy: typeof fetch = async (input, init) => {
      seen.push(new Headers(init?.headers).get('x-svc-access-token') ?? '');
      return fetch(input, init);
    };
    const c = client({ fetch: spy });
    await c.request('GET', '/users/me');
    await c.request('GET', '/users/me');
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(seen[0]);
    expect(await tokens.getAccessToken()).not.toBe(seen[1]);
  });

  it('a 2xx body that fails the caller schema gives UnexpectedResponseError', async () => {
    await expect(client().request('GET', '/users/me', { schema: z.object({ nothing: z.string() }) })).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it('without a link: NotLinkedError before any network call', async () => {
    const unlinked = managerFor(sim, new Storage(join(dir, 'empty')), log);
    await unlinked.start();
    const calls = sim.stats.apiCalls;
    await expect(new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens: unlinked }).request('GET', '/users/me')).rejects.toBeInstanceOf(NotLinkedError);
    expect(sim.stats.apiCalls).toBe(calls);
    unlinked.stop();
  });
});

describe('spec Errors: failures map to typed errors so callers decide without parsing text', () => {
  it('401: one refresh and one retry, then success', async () => {
    sim.revokeAccessTokens();
    const grants = sim.stats.grants;
    await expect(client().request('GET', '/users/me')).resolves.toBeDefined();
    expect(sim.stats.grants).toBe(grants + 1);
  });

  it('401 again after the refresh: AuthorizationLostError, and only one grant', async () => {
    // The simulator accepts a fresh token everywhere, so this one route is made to refuse every token.
    const refusing: typeof fetch = async (input, init) =>
      (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).endsWith('/users/locks/mine')
        ? new Response('{"message":"Unauthorized"}', { status: 401 })
        : fetch(input, init);
    const grants = sim.stats.grants;
    await expect(client({ fetch: refusing }).request('GET', '/users/locks/mine')).rejects.toBeInstanceOf(AuthorizationLostError);
    expect(sim.stats.grants).toBe(grants + 1);
  });

  // Seen in a full run: an answer's header brought a newer token while a command was under way, then
  // the account's tokens were taken away. The retry with that newer token was refused too, and the
  // command failed without any renewal, so the link stayed "linked" until some later call.
  /** A client whose first answer comes with a newer token noted meanwhile (another request's header); the tokens each send carried. */
  async function headerCameMeanwhile(): Promise<{ client: CloudHttpClient; sent: string; newer: string; carried: string[] }> {
    const sent = await tokens.getAccessToken();
    const answer = await fetch(`${sim.baseUrl}/users/me`, { headers: { 'x-svc-api-key': sim.account.apiKey, 'x-svc-access-token': sent } });
    const newer = answer.headers.get('x-svc-access-token') ?? '';
    expect(newer).not.toBe(sent);
    const carried: string[] = [];
    const meanwhile: typeof fetch = async (input, init) => {
      carried.push(new Headers(init?.headers).get('x-svc-access-token') ?? '');
      const response = await fetch(input, init);
      if (carried.length === 1) tokens.noteResponseToken(newer, sent);
      return response;
    };
    return { client: client({ fetch: meanwhile }), sent, newer, carried };
  }

  it('401, and a newer token that came meanwhile in an answer\'s header is refused too: that refusal gets the one refresh, then success', async () => {
    const { client: racing, sent, newer, carried } = await headerCameMeanwhile();
    sim.revokeAccessTokens();
    const grants = sim.stats.grants;
    await expect(racing.request('GET', '/users/me')).resolves.toBeDefined();
    expect(sim.stats.grants).toBe(grants + 1);
    expect(carried.slice(0, 2)).toEqual([sent, newer]);
    expect(carried).toHaveLength(3);
  });

  it('the same with the account\'s authorization gone: the refresh meets invalid_grant and the link says "re-authorization needed"', async () => {
    const { client: racing } = await headerCameMeanwhile();
    sim.revokeAccount('main');
    await expect(racing.request('GET', '/users/me')).rejects.toBeInstanceOf(AuthorizationLostError);
    expect(tokens.state).toBe('reauthorizationNeeded');
  });

  it('429: RateLimitedError with the Retry-After delay', async () => {
    sim.faults.rateLimitNext(1, 7, '/users/me');
    const error = await client().request('GET', '/users/me').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(7000);
    expect((error as RateLimitedError).retryable).toBe(true);
  });

  it('408/409/422/423 from remote operate: BridgeError with their meaning', async () => {
    const cases = [['timeout', 408, 'timeout'], ['none', 409, 'noBridge'], ['offline', 422, 'offline'], ['busy', 423, 'busy']] as const;
    for (const [bridge, status, problem] of cases) {
      sim.setBridge('LOCK-1', bridge);
      const error = await client().request('PUT', '/remoteoperate/LOCK-1/lock').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BridgeError);
      expect(error).toMatchObject({ status, problem, retryable: false });
    }
  });

  it('5xx: TransientError with the status', async () => {
    sim.faults.failNext(1, 502, '/users/me');
    const error = await client().request('GET', '/users/me').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({ status: 502, retryable: true });
  });

  it('a dropped connection and a refused connection: TransientError', async () => {
    sim.faults.dropNext(1, '/users/me');
    await expect(client().request('GET', '/users/me')).rejects.toBeInstanceOf(TransientError);
    await expect(client({ baseUrl: 'http://127.0.0.1:1/api' }).request('GET', '/users/me')).rejects.toBeInstanceOf(TransientError);
  });

  it('a timeout (AbortSignal): TransientError', async () => {
    sim.faults.latencyMs = 400;
    await expect(client().request('GET', '/users/me', { timeoutMs: 100 })).rejects.toBeInstanceOf(TransientError);
    sim.faults.latencyMs = 0;
  });

  it('other 4xx: RequestRejectedError with the status and a short reason', async () => {
    const error = await client().request('PUT', '/remoteoperate/NO-SUCH-LOCK/lock').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestRejectedError);
    expect(error).toMatchObject({ status: 404, retryable: false });
    expect((error as Error).message).toContain('unknown lock NO-SUCH-LOCK');
    const forbidden = await client({ apiKey: 'wrong-key' }).request('GET', '/users/me').catch((e: unknown) => e);
    expect(forbidden).toMatchObject({ status: 403 });
    expect(forbidden).toBeInstanceOf(RequestRejectedError);
  });
});

describe('the doorbell still image (other absolute URLs) is downloaded without credentials', () => {
  it('fetchBinary downloads without sending the API key or a token', async () => {
    const sent: Headers[] = [];
    const spy: typeof fetch = async (input, init) => {
      sent.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    const image = await client({ fetch: spy }).fetchBinary(`${sim.url}/media/motion/BELL-1/still.jpg`);
    expect(image.contentType).toBe('image/jpeg');
    expect(image.body.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(sent[0]?.has('x-svc-api-key')).toBe(false);
    expect(sent[0]?.has('x-svc-access-token')).toBe(false);
    await expect(client().fetchBinary(`${sim.url}/media/motion/BELL-1/still.png`)).rejects.toBeInstanceOf(RequestRejectedError);
  });
});
