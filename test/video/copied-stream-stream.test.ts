// A copied clip through the relay, with the real ffmpeg on both sides: the relay's SRTP is decoded
// by ffmpeg (the controller's keys in an SDP file), the pictures are the clip's own, then its last
// frame held in the same SRTP session; a stop ends both ffmpeg runs and the relay within 2 s. When
// the second ffmpeg cannot start (its program is gone), the stream ends with words that say so and
// nothing is left running; a clip cut short still has a picture to hold.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { startCopiedStream, type StreamRun } from '../../src/video/copied-stream.js';
import { describeExit } from '../../src/video/ffmpeg-processes.js';
import type { LiveTarget } from '../../src/video/live-args.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { childPids, freeUdpPort, udpBound } from '../harness/camera-viewer.js';
import { commandLine } from '../harness/processes.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { openServed, serveFolder, testRelay, type ServedFolder } from './clip-relay.js';
import { keptLog, noMedia, testFfmpeg } from './ffmpeg-binary.js';
import { until } from '../harness/until.js';

const FFMPEG = testFfmpeg();

const work = mkdtempSync(join(tmpdir(), 'la-copied-'));
let clip: string;
/** The clip's playlist as the relay hands it to ffmpeg (on standard input). */
let relayed: string;
let folder: ServedFolder;
const relay = testRelay();
let clipFrames: string[];
let output: Socket;
const cleanups: (() => unknown)[] = [];

/** Frames that visibly differ from the one before (mpdecimate lets only those through to the second showinfo). */
const changes = (text: string) => [...text.matchAll(/Parsed_showinfo_[1-9]\d* .* n:/g)].length;
const checksums = (text: string) => [...text.matchAll(/Parsed_showinfo_0 .*\bchecksum:([0-9A-F]{8})\b/g)].map((match) => match[1] ?? '');

/** A viewer: ffmpeg decoding SRTP with these keys on a local port; its showinfo output kept. */
async function viewer(key: Buffer, salt: Buffer): Promise<{ port: number; decoder: ChildProcess; text: () => string }> {
  const port = await freeUdpPort();
  const sdp = join(work, `in-${port}.sdp`);
  writeFileSync(sdp, ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=viewer', 'c=IN IP4 127.0.0.1', 't=0 0', `m=video ${port} RTP/AVP 99`, 'a=rtpmap:99 H264/90000', 'a=fmtp:99 packetization-mode=1', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.concat([key, salt]).toString('base64')}`, ''].join('\n'));
  const decoder = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'info', '-protocol_whitelist', 'file,udp,rtp,srtp', '-i', sdp, '-filter_complex', '[0:v]showinfo,split[all][moving];[moving]mpdecimate,showinfo[changes]', '-map', '[all]', '-f', 'null', '-', '-map', '[changes]', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  decoder.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  cleanups.push(() => decoder.kill('SIGKILL'));
  // The decoder listens before the first packet.
  await until(() => udpBound(port), 'the decoder listening');
  return { port, decoder, text: () => text };
}

function target(port: number, key: Buffer, salt: Buffer): LiveTarget {
  return { address: '127.0.0.1', ipv6: false, port, srtpKey: key, srtpSalt: salt, ssrc: 0x1234abcd, payloadType: 99, mtu: 1378, width: 640, height: 360, fps: 15, maxBitrate: 300, profile: 1, level: 0 };
}

async function room(path: string): Promise<VideoRoom> {
  const made = new VideoRoom({ config: { ffmpegPath: path, replayMinutes: 60, secureVideo: false }, log: keptLog(), media: noMedia, lookup: () => Promise.reject(new Error('unused')) });
  expect(await made.ready).toBeDefined();
  cleanups.push(() => made.stop());
  return made;
}

beforeAll(async () => {
  clip = join(makeClip(FFMPEG, join(work, 'clip'), 2, false), 'index.m3u8');
  clipFrames = checksums(spawnSync(FFMPEG, ['-hide_banner', '-i', clip, '-vf', 'showinfo', '-f', 'null', '-'], { encoding: 'utf8' }).stderr);
  folder = await serveFolder(dirname(clip));
  relayed = (await openServed(relay, folder)).playlist;
  output = createSocket('udp4');
  await new Promise<void>((resolve) => output.bind(0, '127.0.0.1', resolve));
}, 60_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await relay.stop();
  await folder.close();
  output.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a copied clip through the relay', () => {
  it('decodes to the clip\'s own frames, then the last frame held in the same session; a stop ends it all within 2 s', async () => {
    const key = randomBytes(16);
    const salt = randomBytes(14);
    const seen = await viewer(key, salt);
    const videoRoom = await room(FFMPEG);
    // testsrc2 at 15 fps, 2 s: 30 frames; 320x180 fits the 640x360 asked.
    expect(clipFrames).toHaveLength(30);
    const run: StreamRun = await startCopiedStream(videoRoom, output, target(seen.port, key, salt), { playlist: relayed, lastFrameAt: 2 - 1.5 / 15, width: 320, height: 180 }, 'libx264', { label: 'test view' });
    await until(() => checksums(seen.text()).length >= 30, 'the clip\'s frames');
    expect(checksums(seen.text()).slice(0, 30)).toEqual(clipFrames);
    // The hold: more frames, of one picture that does not move, at the clip's size, no decoding errors across the splice.
    await until(() => checksums(seen.text()).length >= 40, 'held frames');
    const settled = changes(seen.text());
    await until(() => checksums(seen.text()).length >= 55, 'more held frames');
    expect(changes(seen.text()) - settled).toBeLessThanOrEqual(1);
    expect(seen.text()).toMatch(/s:320x180/);
    expect(seen.text()).not.toMatch(/auth(entication)? failed|HMAC mismatch|Invalid data|RTP: PT=.*bad/i);
    expect(videoRoom.running).toBe(1);
    const exit = await run.stop();
    // Ended by the polite stop, not killed when the grace ran out.
    expect(exit.signal).not.toBe('SIGKILL');
    expect(exit.stopped).toBe(true);
    expect(videoRoom.running).toBe(0);
  });

  it('the second ffmpeg cannot start: the stream ends with words that say so, nothing left running', async () => {
    const key = randomBytes(16);
    const salt = randomBytes(14);
    const seen = await viewer(key, salt);
    const link = join(work, 'ffmpeg-link');
    symlinkSync(FFMPEG, link);
    const videoRoom = await room(link);
    const run = await startCopiedStream(videoRoom, output, target(seen.port, key, salt), { playlist: relayed, lastFrameAt: 2 - 1.5 / 15, width: 320, height: 180 }, 'libx264', { label: 'test view' });
    // The program goes away while the copy runs (its ffmpeg started already is not touched): the
    // hold's start at the clip's end fails. Taken away as soon as the copy runs, not after the first
    // frames: on a busy machine the 2 s clip could end first, and a hold already running never ends.
    // Runs means ffmpeg itself (its first argument the link): under the orphan guard the child is
    // `setpriv … -- <link> … copy …` until setpriv execs the link, and taking it away before that
    // left no copy at all (a clean-clone run timed out so).
    await until(() => childPids(process.pid).some((pid) => {
      const args = commandLine(pid);
      return args.startsWith(`${link}\0`) && args.includes('\0copy\0');
    }), 'the copy\'s ffmpeg running');
    unlinkSync(link);
    await until(() => checksums(seen.text()).length >= 3, 'the first frames');
    const exit = await run.exited;
    expect(exit.stopped).toBe(false);
    expect(describeExit(exit)).toMatch(/^ffmpeg could not be started \(for the held last frame: .*ENOENT/);
    expect(videoRoom.running).toBe(0);
  });

  it('a clip that ends before its last frames were expected (segments missing): its last key frame is held', async () => {
    const key = randomBytes(16);
    const salt = randomBytes(14);
    const seen = await viewer(key, salt);
    const videoRoom = await room(FFMPEG);
    const run = await startCopiedStream(videoRoom, output, target(seen.port, key, salt), { playlist: relayed, lastFrameAt: 60, width: 320, height: 180 }, 'libx264', { label: 'test view' });
    await until(() => checksums(seen.text()).length >= 45, 'frames after the clip');
    expect(videoRoom.running).toBe(1);
    expect((await run.stop()).stopped).toBe(true);
    expect(videoRoom.running).toBe(0);
  });
});
