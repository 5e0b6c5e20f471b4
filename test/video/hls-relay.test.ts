// Recordings fetched with the plugin's own trust, on real local servers: an https server whose
// certificate is self-signed for another name is refused (nothing fetched, nothing for ffmpeg); a
// playlist whose segment steps down from https to plain http on another host is refused whole (that
// host sees no request, its token never leaves); a certificate of a private CA trusted through
// NODE_EXTRA_CA_CERTS is accepted; the relayed playlist names only the relay's opaque addresses,
// which end when the recording is closed; a real ffmpeg plays a relayed recording.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mediaAccess } from '../../src/cloud/media-fetch.js';
import { HlsRelay } from '../../src/video/hls-relay.js';
import { PIPED_PLAYLIST } from '../../src/video/playlist-rewrite.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { tsChildArgs } from '../harness/ts-child.js';
import { openServed, serveFolder, testRelay, type ServedFolder } from './clip-relay.js';
import { keptLog, testFfmpeg } from './ffmpeg-binary.js';

const FFMPEG = testFfmpeg();
const work = mkdtempSync(join(tmpdir(), 'la-hls-relay-'));
const servers: Server[] = [];
const PLAYLIST = (segment: string) => `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n${segment}\n#EXT-X-ENDLIST\n`;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: work, stdio: 'ignore' });
}

/** An https server on 127.0.0.1 with this key and certificate; every request path is noted. */
async function httpsServer(key: string, cert: string, answer: (url: string) => string): Promise<{ base: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createHttpsServer({ key: readFileSync(join(work, key)), cert: readFileSync(join(work, cert)) }, (request, response) => {
    seen.push(request.url ?? '');
    response.writeHead(200).end(answer(request.url ?? ''));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let folder: ServedFolder;

beforeAll(async () => {
  // A certificate self-signed for another name, and a private CA with a certificate for 127.0.0.1.
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=media.example.com', '-keyout', 'other.key', '-out', 'other.crt');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Test Private CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'local.key', '-out', 'local.csr');
  writeFileSync(join(work, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'local.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'local.crt');
  folder = await serveFolder(dirname(join(makeClip(FFMPEG, join(work, 'clip'), 2, false), 'index.m3u8')));
}, 60_000);

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await folder.close();
  rmSync(work, { recursive: true, force: true });
});

describe('recordings are fetched with the plugin\'s trust', () => {
  it('an https server whose certificate is self-signed for another name: refused, nothing fetched', async () => {
    const untrusted = await httpsServer('other.key', 'other.crt', () => PLAYLIST('seg0.ts'));
    // Beside an http service address too: a certificate is checked whatever the service address is.
    const relay = new HlsRelay(mediaAccess('http://127.0.0.1'), keptLog());
    try {
      await expect(relay.open(`${untrusted.base}/index.m3u8?token=SECRET-TOKEN`)).rejects.toThrow(/certificate is not trusted/);
      expect(untrusted.seen).toEqual([]);
      expect(relay.openCount).toBe(0);
    } finally {
      await relay.stop();
    }
  });

  it('a playlist whose segment steps down to plain http on another host: refused whole, that host never asked', async () => {
    const seen: string[] = [];
    const plain: Server = createHttpServer((request, response) => {
      seen.push(request.url ?? '');
      response.writeHead(200).end('segment');
    });
    servers.push(plain);
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.2', resolve));
    const downgrade = `http://127.0.0.2:${(plain.address() as AddressInfo).port}/seg0.ts?token=SEGMENT-TOKEN`;
    // Fetched from the https server by a child that trusts the private CA (as NODE_EXTRA_CA_CERTS does for Homebridge).
    const secure = await httpsServer('local.key', 'local.crt', () => PLAYLIST(downgrade));
    const relay = new HlsRelay({ fetch: (address, signal) => fetchTrusted(address, signal), httpAllowed: true }, keptLog());
    try {
      await expect(relay.open(`${secure.base}/index.m3u8?token=SECRET-TOKEN`)).rejects.toThrow('the playlist names a part that is not fetched: it steps down from https to plain http');
      expect(secure.seen).toHaveLength(1);
      expect(seen).toEqual([]);
    } finally {
      await relay.stop();
    }
  });

  it('a private CA trusted through NODE_EXTRA_CA_CERTS: the recording is fetched; without it, it is not', async () => {
    const trusted = await httpsServer('local.key', 'local.crt', () => 'playlist-bytes');
    expect(await childFetch(`${trusted.base}/index.m3u8?token=T`, join(work, 'ca.crt'))).toBe('fetched: playlist-bytes');
    expect(await childFetch(`${trusted.base}/index.m3u8?token=T`, undefined)).toMatch(/^failed: the recording could not be fetched: its server's certificate is not trusted/);
  }, 30_000);

  it('beside an https service address, a plain http playlist is not fetched at all', async () => {
    const relay = new HlsRelay(mediaAccess('https://api.example.com'), keptLog());
    try {
      const before = folder.seen.length;
      await expect(relay.open(folder.playlist)).rejects.toThrow(/plain http/);
      expect(folder.seen.length).toBe(before);
    } finally {
      await relay.stop();
    }
  });
});

describe('the relayed playlist', () => {
  it('names only opaque addresses of the relay; ffmpeg reads the recording through them; closed, they answer 404', async () => {
    const relay = testRelay();
    try {
      const recording = await openServed(relay, folder);
      expect(recording.playlist).toMatch(/^#EXTM3U/);
      expect(recording.playlist).not.toMatch(/FOLDER-SECRET|seg\d|index/);
      const addresses = recording.playlist.split('\n').filter((line) => line.startsWith('http://'));
      expect(addresses.length).toBeGreaterThan(0);
      for (const address of addresses) expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{22}\/\d+\.ts$/);
      // Asynchronously: the relay answers ffmpeg from this process.
      const probe = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const run = spawn(FFMPEG, ['-hide_banner', ...PIPED_PLAYLIST, '-f', 'null', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
        let stderr = '';
        run.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        run.once('close', (status) => {
          resolve({ status, stderr });
        });
        run.stdin.end(recording.playlist);
      });
      expect(probe.stderr).toMatch(/Video: h264/);
      expect(probe.status).toBe(0);
      recording.close();
      expect(relay.openCount).toBe(0);
      const gone = await fetch(addresses[0] ?? '');
      expect(gone.status).toBe(404);
    } finally {
      await relay.stop();
    }
  });
});

/** The media fetch in a child that trusts the private CA: the address, fetched there, its bytes back. */
async function fetchTrusted(address: URL, _signal: AbortSignal): Promise<{ body: Buffer; url: URL }> {
  const answer = await childFetch(address.href, join(work, 'ca.crt'));
  if (!answer.startsWith('fetched: ')) throw new Error(answer);
  return { body: Buffer.from(answer.slice('fetched: '.length)), url: address };
}

async function childFetch(address: string, ca: string | undefined): Promise<string> {
  const child = fileURLToPath(new URL('../fixtures/media-fetch-child.ts', import.meta.url));
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  if (ca !== undefined) env.NODE_EXTRA_CA_CERTS = ca;
  const args = await tsChildArgs(child, address);
  return new Promise((resolve, reject) => {
    const run = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    run.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    run.once('error', reject);
    run.once('close', () => {
      resolve(out);
    });
  });
}
