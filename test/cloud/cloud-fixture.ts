// Shared set-up of the cloud tests (registrar, discovery, remote operate, self-check): a simulator
// as the service, the real token manager and HTTP client against it, a temporary storage folder,
// a callback target that records what reaches it, and a log that captures lines.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { ApiClient, HttpMethod, RequestOptions } from '../../src/cloud/http/api.js';
import { CloudHttpClient } from '../../src/cloud/http/http-client.js';
import { TokenManager } from '../../src/cloud/tokens/token-manager.js';
import { Storage } from '../../src/storage.js';
import { captureLog, type CapturedLog } from '../fixtures/token-harness.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../sim/index.js';

// One captured log for all cloud tests: the token tests' helper.
export { captureLog, type CapturedLog };

export interface CallbackTarget {
  url: string;
  received: { path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** A plain HTTP server standing in for the public URL: answers 200 and records each callback. */
export async function startCallbackTarget(): Promise<CallbackTarget> {
  const received: CallbackTarget['received'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/lock-access`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    }),
  };
}

export interface CloudFixture {
  sim: Simulator;
  storage: Storage;
  tokenStorage: Storage;
  tokens: TokenManager;
  client: ApiClient;
  target: CallbackTarget;
  log: CapturedLog;
  close(): Promise<void>;
}

/** Starts everything a registrar needs; `close()` stops it all and removes the folders. */
export async function startCloudFixture(options: SimulatorOptions = {}): Promise<CloudFixture> {
  const sim = await startSimulator(options);
  const dir = await mkdtemp(join(tmpdir(), 'registrar-'));
  const storage = new Storage(join(dir, 'plugin'));
  const tokenStorage = new Storage(join(dir, 'tokens'));
  const log = captureLog();
  const tokens = new TokenManager({
    storage: tokenStorage,
    authUrl: sim.authUrl,
    baseUrl: sim.baseUrl,
    apiKey: sim.account.apiKey,
    clientId: sim.account.clientId,
    clientSecret: sim.account.clientSecret,
    seeds: { refreshToken: sim.issueRefreshToken() },
    log,
  });
  await tokens.start();
  const client = new CloudHttpClient({ baseUrl: sim.baseUrl, apiKey: sim.account.apiKey, tokens });
  const target = await startCallbackTarget();
  return {
    sim,
    storage,
    tokenStorage,
    tokens,
    client,
    target,
    log,
    close: async () => {
      tokens.stop();
      await tokens.settled();
      await target.close();
      await sim.close();
      // A registrar's last ledger write may still be landing after stop(): retry instead of racing it.
      await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}

export interface ClientEvent {
  type: 'start' | 'ok' | 'error';
  method: HttpMethod;
  path: string;
  error?: unknown;
}

/** The real client, with every call's start and outcome written to `events` (in order). */
export function observedClient(inner: ApiClient, events: (ClientEvent | { type: 'sleep-start' | 'sleep-end'; ms: number })[]): ApiClient {
  return {
    async request<T>(method: HttpMethod, path: string, options?: RequestOptions<T>): Promise<T> {
      events.push({ type: 'start', method, path });
      try {
        const result = await inner.request(method, path, options);
        events.push({ type: 'ok', method, path });
        return result;
      } catch (error) {
        events.push({ type: 'error', method, path, error });
        throw error;
      }
    },
  };
}
