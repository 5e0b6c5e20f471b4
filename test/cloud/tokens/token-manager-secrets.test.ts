// "No secrets in logs": the whole token lifecycle with debug logging on, every secret
// that crossed the wire recorded, and not one of them in any log line, error message or status.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { Storage } from '../../../src/storage.js';
import { startSimulator, type Simulator } from '../../sim/index.js';
import { captureLog, managerFor, readTokens, tempDir, type CapturedLog } from '../../fixtures/token-harness.js';

let sim: Simulator;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  sim = await startSimulator({ port: 0, locks: [{ id: 'LOCK-1', name: 'Front Door' }] });
});

afterEach(async () => {
  await sim.close();
  await cleanup();
});

/** A fetch that records every secret it carries in either direction (and changes nothing). */
function recordingFetch(secrets: Set<string>): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const name of ['x-svc-api-key', 'x-svc-access-token']) {
      const value = headers.get(name);
      if (value) secrets.add(value);
    }
    if (typeof init?.body === 'string' && init.body.includes('client_secret=')) {
      for (const [key, value] of new URLSearchParams(init.body)) if (key !== 'grant_type' && key !== 'client_id' && key !== 'redirect_uri') secrets.add(value);
    }
    const response = await fetch(input, init);
    const rotated = response.headers.get('x-svc-access-token');
    if (rotated) secrets.add(rotated);
    if (response.url.endsWith('/access_token') && response.ok) {
      const body = (await response.clone().json()) as Record<string, unknown>;
      for (const key of ['access_token', 'refresh_token']) if (typeof body[key] === 'string') secrets.add(body[key]);
    }
    return response;
  };
}

describe('"no API key, client secret, token or webhook token appears in any log line or error message"', () => {
  it('the whole lifecycle with debug logging on', async () => {
    const secrets = new Set<string>([sim.account.apiKey, sim.account.clientSecret]);
    const messages: string[] = [];
    const log: CapturedLog = captureLog();
    const fetchSpy = recordingFetch(secrets);
    const capture = async (work: () => Promise<unknown>): Promise<void> => {
      try {
        await work();
      } catch (error) {
        messages.push(error instanceof Error ? `${error.name} ${error.message} ${error.cause instanceof Error ? error.cause.message : ''}` : String(error));
      }
    };
    const storage = new Storage(join(dir, 'lock-access'));
    const seed = sim.issueRefreshToken();
    secrets.add(seed);
    const tokens = managerFor(sim, storage, log, { seeds: { refreshToken: seed }, fetch: fetchSpy });
    const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens, log, fetch: fetchSpy });
    await tokens.start();
    tokens.stop();

    await capture(() => client.request('GET', '/users/me'));
    await capture(() => client.request('PUT', '/remoteoperate/LOCK-1/lock'));
    await capture(() => tokens.refreshNow());
    sim.faults.failNext(1, 503, '/users/me');
    await capture(() => tokens.refreshNow());
    messages.push(JSON.stringify((await tokens.testConnection()).message));
    sim.revokeAccessTokens();
    await capture(() => client.request('GET', '/users/me'));
    sim.faults.rateLimitNext(1, 3);
    await capture(() => client.request('GET', '/users/me'));
    sim.faults.failNext(1, 500);
    await capture(() => client.request('GET', '/users/me'));
    sim.faults.dropNext(1);
    await capture(() => client.request('GET', '/users/me'));
    await capture(() => client.request('PUT', '/remoteoperate/NOPE/lock'));
    sim.setBridge('LOCK-1', 'offline');
    await capture(() => client.request('PUT', '/remoteoperate/LOCK-1/lock'));
    await capture(() => new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: 'wrong-api-key-value', tokens, log, fetch: fetchSpy }).request('GET', '/users/me'));
    sim.faults.rotateThenFail('drop');
    await capture(() => tokens.refreshNow());
    await capture(() => tokens.refreshNow());
    sim.revokeAccessTokens();
    await capture(() => client.request('GET', '/users/me'));
    await capture(() => client.request('GET', '/users/me'));
    messages.push(JSON.stringify((await tokens.testConnection()).message));
    await capture(() => tokens.linkWithRefreshToken('rt_this-one-was-never-issued-by-the-service'));
    secrets.add('rt_this-one-was-never-issued-by-the-service');
    await capture(() => tokens.exchangeAuthorizationCode({ code: 'ac_made-up-authorization-code-value', redirectUri: 'http://127.0.0.1:1/cb' }));
    secrets.add('ac_made-up-authorization-code-value');
    const pasted = sim.issueRefreshToken();
    secrets.add(pasted);
    await capture(() => tokens.linkWithRefreshToken(pasted));
    await capture(() => client.request('GET', '/users/me'));
    // Wrong client secret: the token endpoint refuses the client.
    const wrongSecret = 'wrong-client-secret-value';
    secrets.add(wrongSecret);
    const wrong = managerFor(sim, new Storage(join(dir, 'other')), log, { seeds: { refreshToken: sim.issueRefreshToken() }, clientSecret: wrongSecret, fetch: fetchSpy });
    await wrong.start();
    wrong.stop();
    await capture(() => wrong.refreshNow());
    messages.push(wrong.status().message ?? '', tokens.status().message ?? '');
    const record = await readTokens(storage);
    await tokens.settled();
    await tokens.unlink();

    // The run really exercised the paths it claims to.
    expect(log.lines.filter((line) => line.level === 'debug').length).toBeGreaterThan(10);
    expect(log.text('error').some((line) => line.includes('link your account again'))).toBe(true);
    expect(messages.length).toBeGreaterThan(12);
    expect(record?.refreshToken).toBeDefined();
    expect(secrets.size).toBeGreaterThan(15);

    const leaks: string[] = [];
    for (const secret of secrets) {
      if (secret.length < 8) continue;
      for (const line of [...log.lines.map((l) => l.message), ...messages]) if (line.includes(secret)) leaks.push(`${secret.slice(0, 6)}… in: ${line.slice(0, 120)}`);
    }
    expect(leaks).toEqual([]);
  });

  it('tokens.json is mode 0600 inside a 0700 folder', async () => {
    const storage = new Storage(join(dir, 'lock-access'));
    const tokens = managerFor(sim, storage, captureLog(), { seeds: { refreshToken: sim.issueRefreshToken() } });
    await tokens.start();
    tokens.stop();
    await tokens.settled();
    expect((await stat(storage.file('tokens.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(storage.dir)).mode & 0o777).toBe(0o700);
  });
});
