// A renewed certificate needs no restart: the listener serving https reads its certificate and key
// again when they change on disk. Two certificates are generated with openssl; a real TLS client
// sees which one the listener presents.
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startReceiver, type Receiver } from '../../src/callbacks/receiver.js';
import { makeHarness, type Harness } from './helpers.js';

let dir: string;
let harness: Harness | undefined;
let receiver: Receiver | undefined;

/** A self-signed certificate for 127.0.0.1 with the given common name. */
function certificate(name: string): void {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
    '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`)], { stdio: 'ignore' });
}

/** The common name of the certificate the listener presents to a new connection. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
      socket.end();
      resolve(subject?.CN ?? '');
    });
    socket.on('error', reject);
  });
}

async function until(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-tls-'));
  certificate('first');
  certificate('renewed');
  await copyFile(join(dir, 'first.crt'), join(dir, 'listener.crt'));
  await copyFile(join(dir, 'first.key'), join(dir, 'listener.key'));
  harness = await makeHarness({ tlsWatchIntervalMs: 50 }, { tlsCertFile: join(dir, 'listener.crt'), tlsKeyFile: join(dir, 'listener.key') });
  receiver = await startReceiver(harness.options);
});

afterAll(async () => {
  await receiver?.close();
  await harness?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe('a renewed TLS certificate needs no restart', () => {
  it('new connections get the renewed certificate once both files are replaced', async () => {
    const port = receiver?.port ?? 0;
    expect(await presented(port)).toBe('first');
    await copyFile(join(dir, 'renewed.key'), join(dir, 'listener.key'));
    await copyFile(join(dir, 'renewed.crt'), join(dir, 'listener.crt'));
    await until(async () => (await presented(port)) === 'renewed', 'the renewed certificate');
    expect(harness?.lines.some((l) => l.startsWith('info The TLS certificate was renewed on disk'))).toBe(true);
  });

  it('a certificate that does not fit its key keeps the one that works, with a warning', async () => {
    const port = receiver?.port ?? 0;
    await writeFile(join(dir, 'listener.crt'), 'not a certificate');
    await until(() => Promise.resolve(harness?.lines.some((l) => l.startsWith('warn The TLS certificate or key changed on disk but cannot be used yet')) === true), 'the warning');
    expect(await presented(port)).toBe('renewed');
  });
});
