// The listener's limits, on a real server with real sockets on 127.0.0.1: unroutable paths are
// 404, the keep-alive timeout outlives a proxy's 60 s, slow senders are cut off within a second or
// two, and the number of open connections is capped.
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';

import { afterEach, describe, expect, it } from 'vitest';

import { LISTENER_LIMITS } from '../../src/callbacks/listener-options.js';
import { buildReceiverApp, startReceiver, type Receiver } from '../../src/callbacks/receiver.js';
import { tsChildArgs } from '../harness/ts-child.js';
import { makeHarness, type Harness } from './helpers.js';

let harness: Harness | undefined;
let receiver: Receiver | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await receiver?.close();
  receiver = undefined;
  await harness?.cleanup();
  harness = undefined;
});

/** Opens a raw connection; resolves once connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      resolve(socket);
    });
    socket.on('error', reject);
    sockets.push(socket);
  });
}

/** Resolves with what the server wrote before it closed the connection, and how long that took. */
function untilClosed(socket: Socket): Promise<{ text: string; afterMs: number }> {
  const started = performance.now();
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  return new Promise((resolve) => {
    socket.on('close', () => {
      resolve({ text, afterMs: performance.now() - started });
    });
  });
}

describe('listener limits', () => {
  it('the listener is built without a Fastify warning, which Homebridge would print in the user\'s log', async () => {
    // A fresh process: Node prints each warning once per process, so only a new one shows it for sure.
    const script = new URL('./fixtures/build-listener.ts', import.meta.url).pathname;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, await tsChildArgs(script), { encoding: 'utf8' });
    expect(stdout).toBe('built\n');
    expect(stderr).not.toMatch(/Warning|DEP\d/);
  });

  it('a path too long for any device id answers 404 like any unknown path, never 414', async () => {
    harness = await makeHarness();
    const app = buildReceiverApp(harness.options);
    for (const url of [`/lock-access/lock/${'a'.repeat(300)}`, `/lock-access/doorbell/${'b'.repeat(5_000)}`, `/${'x'.repeat(20_000)}`]) {
      const response = await app.inject({ method: 'POST', url, payload: '{}', headers: { 'content-type': 'application/json' } });
      expect(response.statusCode).toBe(404);
    }
    const malformed = await app.inject({ method: 'POST', url: '/lock-access/lock/%E0%A4%A', payload: '{}' });
    expect(malformed.statusCode).toBe(404);
    expect(app.receiverStats.lastUnknownPath?.path).toBe('/lock-access/lock/%E0%A4%A');
    await app.close();
  });

  it('the real server keeps idle connections 75 s, wants headers within 10 s and the body 10 s later, checks every second, and takes at most 256 connections', async () => {
    harness = await makeHarness();
    receiver = await startReceiver(harness.options);
    const app = buildReceiverApp(harness.options);
    expect(LISTENER_LIMITS).toEqual({ headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000, checkEveryMs: 1_000, maxConnections: 256 });
    expect(app.server.keepAliveTimeout).toBe(75_000);
    expect(app.server.headersTimeout).toBe(10_000);
    expect(app.server.requestTimeout).toBe(20_000);
    expect(app.server.maxConnections).toBe(256);
    await app.close();
  });

  it('a sender whose headers do not arrive in time is cut off within the check interval', async () => {
    harness = await makeHarness({ limits: { headersTimeoutMs: 400, bodyTimeoutMs: 400, keepAliveTimeoutMs: 5_000, checkEveryMs: 200, maxConnections: 256 } });
    receiver = await startReceiver(harness.options);
    const socket = await open(receiver.port);
    const closed = untilClosed(socket);
    socket.write('POST /lock-access/lock/L1 HTTP/1.1\r\nHost: x\r\n');
    const { text, afterMs } = await closed;
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(afterMs).toBeLessThan(5_000);
  });

  it('a body that does not arrive in time after its headers is cut off', async () => {
    harness = await makeHarness({ limits: { headersTimeoutMs: 400, bodyTimeoutMs: 400, keepAliveTimeoutMs: 5_000, checkEveryMs: 200, maxConnections: 256 } });
    receiver = await startReceiver(harness.options);
    const socket = await open(receiver.port);
    const closed = untilClosed(socket);
    socket.write('POST /lock-access/lock/L1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Lock');
    const { text } = await closed;
    expect(text).toMatch(/^HTTP\/1\.1 408/);
  });

  describe('the body must arrive within the body time after its headers, not within the sum after the request starts', () => {
    // Headers may take long here and the body very little, so the two rules give different answers.
    const limits = { headersTimeoutMs: 3_000, bodyTimeoutMs: 300, keepAliveTimeoutMs: 5_000, checkEveryMs: 200, maxConnections: 256 };
    const head = (length: number) => `POST /lock-access/lock/L1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

    it('headers sent at once, then the body stalls: cut off with 408, though the sum of both times is far from over', async () => {
      harness = await makeHarness({ limits });
      receiver = await startReceiver(harness.options);
      const socket = await open(receiver.port);
      const closed = untilClosed(socket);
      socket.write(`${head(2)}{`);
      // Past the body's time, well within headers + body: the rest would still be read if the sum counted.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      if (!socket.destroyed) socket.write('}');
      expect((await closed).text).toMatch(/^HTTP\/1\.1 408/);
    });

    it('a body that comes slowly but steadily is cut off when its time after the headers is over', async () => {
      harness = await makeHarness({ limits });
      receiver = await startReceiver(harness.options);
      const socket = await open(receiver.port);
      const closed = untilClosed(socket);
      socket.write(head(15));
      // One byte every 100 ms: never idle, and done after 1.5 s, well within headers + body time.
      let sent = 0;
      const trickle = setInterval(() => {
        if (sent < 15 && !socket.destroyed) socket.write('x');
        sent += 1;
      }, 100);
      const { text } = await closed;
      clearInterval(trickle);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expect(sent).toBeLessThan(15);
    });

    it('slow headers do not shorten the body\'s time: a body sent right after them is answered', async () => {
      harness = await makeHarness({ limits });
      receiver = await startReceiver(harness.options);
      const socket = await open(receiver.port);
      const closed = untilClosed(socket);
      socket.write('POST /lock-access/lock/L1 HTTP/1.1\r\n');
      // Longer than the body's time, well within the headers' time.
      await new Promise((resolve) => setTimeout(resolve, 600));
      socket.end(`Host: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
      // Unsigned, so refused: what matters is that it was read and answered, not cut off.
      expect((await closed).text).toMatch(/^HTTP\/1\.1 401/);
    });
  });

  it('connections over the cap are closed at once; the ones within it are served', async () => {
    harness = await makeHarness({ limits: { ...LISTENER_LIMITS, maxConnections: 2 } });
    receiver = await startReceiver(harness.options);
    const first = await open(receiver.port);
    await open(receiver.port);
    const third = await open(receiver.port);
    const refused = await untilClosed(third);
    expect(refused.text).toBe('');
    const served = new Promise<string>((resolve) => {
      first.setEncoding('utf8');
      first.once('data', (chunk: string) => {
        resolve(chunk);
      });
    });
    first.write('GET /lock-access/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await served).toMatch(/^HTTP\/1\.1 200/);
  });
});
