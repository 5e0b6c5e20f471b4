// A callback receiver for tests of the simulator (and anyone else's): records every request with
// its raw body, and answers with a status chosen per request.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  body: unknown;
}

export interface TestReceiver {
  url: string;
  received: ReceivedCallback[];
  /** Status for the next requests, in order; afterwards `defaultStatus`. */
  replies: number[];
  defaultStatus: number;
  /** Extra route answering with a redirect (to check redirects are not followed). */
  redirectTo: string | undefined;
  close(): Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const app: FastifyInstance = Fastify();
  const state: Omit<TestReceiver, 'url' | 'close'> = { received: [], replies: [], defaultStatus: 200, redirectTo: undefined };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => { done(null, body); });
  const handle = (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply): void => {
    const rawBody = typeof request.body === 'string' ? request.body : '';
    let body: unknown;
    try {
      body = JSON.parse(rawBody) as unknown;
    } catch {
      body = undefined;
    }
    state.received.push({ method: request.method, path: request.url, headers: request.headers, rawBody, body });
    if (request.url.startsWith('/redirect') && state.redirectTo) {
      void reply.redirect(state.redirectTo, 302);
      return;
    }
    void reply.code(state.replies.shift() ?? state.defaultStatus).send({ ok: true });
  };
  app.post('/*', handle);
  app.put('/*', handle);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return Object.assign(state, { url: `http://127.0.0.1:${port}`, close: () => app.close() });
}

/**
 * One receiver for the whole test file where it is called (registers its own beforeAll and afterAll),
 * emptied and reset to its defaults before each test.
 */
export function testReceiverForFile(): TestReceiver {
  let current: TestReceiver | undefined;
  const receiver = (): TestReceiver => {
    if (!current) throw new Error('the test receiver runs only while the file\'s tests do');
    return current;
  };
  beforeAll(async () => {
    current = await startTestReceiver();
  });
  afterAll(async () => {
    await current?.close();
  });
  beforeEach(() => {
    const r = receiver();
    r.received.length = 0;
    r.replies.length = 0;
    r.defaultStatus = 200;
    r.redirectTo = undefined;
  });
  return {
    get url() { return receiver().url; },
    get received() { return receiver().received; },
    get replies() { return receiver().replies; },
    get defaultStatus() { return receiver().defaultStatus; },
    set defaultStatus(status) { receiver().defaultStatus = status; },
    get redirectTo() { return receiver().redirectTo; },
    set redirectTo(url) { receiver().redirectTo = url; },
    close: () => receiver().close(),
  };
}
