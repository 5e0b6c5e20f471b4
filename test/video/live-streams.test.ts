// The camera view's streams with the real ffmpeg and real sockets: a second START of one stream
// replaces the first (no ffmpeg and no interval left after the viewer's END), a stranger's
// datagrams on our return port do not keep a stream alive, and no ffmpeg's command line holds the
// viewer's keys or address.
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { LiveStreams, type LiveSelection, type LiveViewer } from '../../src/video/live-streams.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { commandLine } from '../harness/processes.js';
import { keptLog, testFfmpeg, noMedia } from './ffmpeg-binary.js';
import { until } from '../harness/until.js';

const FFMPEG = testFfmpeg();
const STILL = readFileSync(new URL('../sim/assets/motion.jpg', import.meta.url));
const SELECTION: LiveSelection = { width: 320, height: 180, fps: 15, maxBitrate: 200, payloadType: 99, mtu: 1378, profile: 1, level: 0, rtcpInterval: 0.5 };
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function socket(address = '127.0.0.1'): Promise<Socket> {
  const made = createSocket('udp4');
  await new Promise<void>((resolve) => made.bind(0, address, resolve));
  cleanups.push(() => {
    made.close();
  });
  return made;
}

async function setUp(): Promise<{ room: VideoRoom; streams: LiveStreams; viewer: LiveViewer; seen: Socket; ended: Promise<string> }> {
  const log = keptLog();
  const room = new VideoRoom({ config: { ffmpegPath: FFMPEG, replayMinutes: 60, secureVideo: false }, log, media: noMedia, lookup: () => Promise.reject(new Error('unused')) });
  expect(await room.ready).toBeDefined();
  cleanups.push(() => room.stop());
  const seen = await socket();
  const viewer: LiveViewer = { address: '127.0.0.1', ipv6: false, port: seen.address().port, srtpKey: randomBytes(16), srtpSalt: randomBytes(14), audio: { port: seen.address().port, srtpKey: randomBytes(16), srtpSalt: randomBytes(14) } };
  let resolveEnded: (id: string) => void = () => undefined;
  const ended = new Promise<string>((resolve) => (resolveEnded = resolve));
  const streams = new LiveStreams(room, log, resolveEnded);
  cleanups.push(() => streams.stopAll());
  return { room, streams, viewer, seen, ended };
}

/** Resolves with the next datagram the viewer's socket receives. */
const nextPacket = (seen: Socket) => new Promise<Buffer>((resolve) => seen.once('message', resolve));

describe('camera-view streams', () => {
  it('a second START replaces the first: one ffmpeg runs; after END none, and no interval is left', async () => {
    const made = new Set<unknown>();
    const cleared = new Set<unknown>();
    const realSet = globalThis.setInterval;
    const realClear = globalThis.clearInterval;
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((...args: Parameters<typeof setInterval>) => {
      const handle = realSet(...args);
      made.add(handle);
      return handle;
    }));
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((handle: Parameters<typeof clearInterval>[0]) => {
      cleared.add(handle);
      realClear(handle);
    }));
    const { room, streams, viewer, seen } = await setUp();
    await streams.prepare('s1', viewer, 'Front Doorbell');
    await streams.start('s1', SELECTION, { kind: 'still', image: STILL });
    await nextPacket(seen);
    const first = room.running;
    expect(first).toBe(1);
    await streams.start('s1', SELECTION, { kind: 'still', image: STILL });
    expect(room.running).toBe(1);
    await nextPacket(seen);
    await streams.stop('s1');
    expect(room.running).toBe(0);
    expect(streams.active).toBe(0);
    expect([...made].filter((handle) => !cleared.has(handle))).toEqual([]);
  });

  it('two STARTs at once: still one ffmpeg, and none after END', async () => {
    const { room, streams, viewer, seen } = await setUp();
    await streams.prepare('s1', viewer, 'Front Doorbell');
    await Promise.all([streams.start('s1', SELECTION, { kind: 'still', image: STILL }), streams.start('s1', SELECTION, { kind: 'still', image: STILL })]);
    await nextPacket(seen);
    expect(room.running).toBe(1);
    await streams.stop('s1');
    expect(room.running).toBe(0);
  });

  it('a stranger\'s datagrams on our return port keep no stream alive: the silent viewer\'s stream ends', async () => {
    const { room, streams, viewer, seen, ended } = await setUp();
    const { port } = await streams.prepare('s1', viewer, 'Front Doorbell');
    await streams.start('s1', SELECTION, { kind: 'still', image: STILL });
    await nextPacket(seen);
    // The viewer reports once, then goes away; a stranger (another address) keeps sending reports.
    const report = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]);
    seen.send(report, port, '127.0.0.1');
    const stranger = await socket('127.0.0.2');
    const noise = setInterval(() => {
      stranger.send(report, port, '127.0.0.1');
    }, 100);
    cleanups.push(() => {
      clearInterval(noise);
    });
    expect(await ended).toBe('s1');
    await until(() => room.running === 0, 'its ffmpeg ended');
  }, 15_000);

  it('no ffmpeg command line holds the viewer\'s keys, or where the viewer is', async () => {
    const { room, streams, viewer, seen } = await setUp();
    const spawned: number[] = [];
    const spawn = room.spawn.bind(room);
    vi.spyOn(room, 'spawn').mockImplementation((args, options) => {
      const run = spawn(args, options);
      if (run.pid !== undefined) spawned.push(run.pid);
      return run;
    });
    await streams.prepare('s1', viewer, 'Front Doorbell');
    await streams.start('s1', SELECTION, { kind: 'still', image: STILL });
    await nextPacket(seen);
    expect(spawned).toHaveLength(1);
    const line = spawned.map(commandLine).join('\n');
    expect(line).toContain('ffmpeg');
    for (const secret of [viewer.srtpKey, viewer.srtpSalt, Buffer.concat([viewer.srtpKey, viewer.srtpSalt])]) {
      expect(line).not.toContain(secret.toString('base64'));
      expect(line).not.toContain(secret.toString('hex'));
    }
    expect(line).not.toMatch(/srtp/);
    expect(line).not.toContain(String(viewer.port));
  });
});
