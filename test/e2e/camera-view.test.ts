// The doorbell's camera view as Apple Home sees it: the built plugin in a real Homebridge with the
// real ffmpeg, a paired controller writing SetupEndpoints and SelectedRTPStreamConfiguration, and the
// SRTP received on a local port and decoded by ffmpeg. A still picture before any recording (frames
// that do not change), the newest recording after videoavailable (frames that do), two viewers at
// once, a viewer that closes, one that vanishes, and shutdown: no ffmpeg outlives its stream. A
// recording with sound also sends it (Opus) to the viewer's audio port; a clip without sound and a
// still send none.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { CameraViewer, childPids, streamServices, type StreamIds } from '../harness/camera-viewer.js';
import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';

const FFMPEG = testFfmpeg();
let sim: Simulator;
const session = new E2eSession();
const { eventually, paired } = session;
const viewers: CameraViewer[] = [];
const work = mkdtempSync(join(tmpdir(), 'la-camera-view-'));

async function streamsOf(name: string): Promise<StreamIds[]> {
  const accessory = await eventually(() => paired().accessory(name), `accessory ${name}`);
  return streamServices(accessory);
}

async function view(ids: StreamIds, options: { width?: number; height?: number } = {}): Promise<CameraViewer> {
  const viewer = await CameraViewer.setUp(paired(), ids, { ffmpeg: FFMPEG });
  viewers.push(viewer);
  expect(viewer.setupStatus).toBe(0);
  expect(await viewer.start({ ffmpeg: FFMPEG, ...options })).toBe(0);
  return viewer;
}

/** ffmpeg children of Homebridge now. */
function ffmpegChildren(): number[] {
  const pid = session.hb?.child.pid;
  return pid === undefined ? [] : childPids(pid);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  // A recording with sound (a sine tone); the simulator's own recording has none.
  const withSound = makeClip(FFMPEG, join(work, 'sound'), 4, true);
  sim = await startSimulator({ doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Doorbell' }], recordings: { 'dvr-sound': withSound } });
  const listenPort = await freePort();
  await session.start({
    platforms: [
      simPlatformConfig(sim, listenPort, {
        doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Doorbell' }],
        discoverDevices: false,
        userWebhook: false,
        video: { ffmpegPath: FFMPEG, replayMinutes: 60 },
      }),
    ],
    registrations: { sim, atLeast: 2 },
  });
  await session.pair(3, 'the bridge and two doorbells');
}, 90_000);

afterEach(async () => {
  // A failed test leaves no stream behind to make the next one's stream service busy.
  for (const viewer of viewers.splice(0)) {
    await viewer.end().catch(() => undefined);
    viewer.close();
  }
});

afterAll(async () => {
  await session.close();
  await sim.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the camera view plays what the doorbell has', () => {
  it('before any recording: the still picture as video, first packet within 3 s, frames that do not change', async () => {
    const [first] = await streamsOf('Side Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first, { width: 320, height: 180 });
    await eventually(() => Promise.resolve(viewer.frames().count >= 20 ? true : undefined), '20 decoded frames of the still');
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    const settled = viewer.frames();
    await pause(1_000);
    const later = viewer.frames();
    expect(later.count).toBeGreaterThan(settled.count);
    // A held still: hardly a frame that differs from the one before (the first, a sharpening or two).
    expect(later.changes).toBeLessThanOrEqual(3);
    expect(later.width).toBeLessThanOrEqual(320);
    expect(later.height).toBeLessThanOrEqual(180);
    // A still has no sound.
    expect(viewer.audioPackets).toBe(0);
    expect(await viewer.end()).toBe(0);
    await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg after the viewer closed', 2_500);
  });

  it('after videoavailable: the recording from its start, frames that change, then its last frame held', async () => {
    await fireAccepted(sim, 'video-available', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-1' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    const [first] = await streamsOf('Front Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await session.hb?.waitForLog(/Front Doorbell: the camera view plays the recording/);
    await eventually(() => Promise.resolve(viewer.frames().count >= 30 ? true : undefined), '30 decoded frames of the recording');
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    expect(viewer.frames().changes).toBeGreaterThan(10);
    // The clip is 3 s long: afterwards the stream goes on with its last frame, which does not move.
    await pause(3_000);
    const held = viewer.frames();
    await pause(1_500);
    const later = viewer.frames();
    expect(later.count).toBeGreaterThan(held.count);
    expect(later.changes - held.changes).toBeLessThanOrEqual(1);
    // The clip has no sound: none is sent.
    expect(viewer.audioPackets).toBe(0);
    // The playlist address is never logged (debug included).
    expect(session.hb?.logs.join('\n')).not.toMatch(/m3u8|\/hls\//);
    await viewer.end();
    await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg after the viewer closed', 2_500);
  });

  it('a recording with sound: its sound arrives on the audio port as SRTP that decodes, the video still within 3 s', async () => {
    const available = () => (session.hb?.logs ?? []).filter((line) => /Front Doorbell: Recording available/.test(line)).length;
    const before = available();
    await fireAccepted(sim, 'video-available', { doorbellId: 'BELL-1', dvrId: 'dvr-sound' });
    await eventually(() => Promise.resolve(available() > before ? true : undefined), 'the recording with sound logged');
    const [first] = await streamsOf('Front Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await eventually(() => Promise.resolve(viewer.frames().count >= 15 ? true : undefined), '15 decoded frames of the recording');
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    await eventually(() => Promise.resolve(viewer.audioFrames() >= 10 ? true : undefined), '10 decoded sound frames');
    expect(viewer.audioPackets).toBeGreaterThan(0);
    // The sound ends with the clip; the held last frame goes on.
    await pause(4_000);
    const more = viewer.packetsSince();
    await pause(500);
    expect(more()).toBeGreaterThan(0);
    await viewer.end();
    await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg after the viewer closed', 2_500);
  });

  it('two viewers at once each get a stream of their own', async () => {
    const [one, two] = await streamsOf('Front Doorbell');
    if (!one || !two) throw new Error('two stream services expected');
    const a = await view(one);
    const b = await view(two);
    await eventually(() => Promise.resolve(a.frames().count >= 10 && b.frames().count >= 10 ? true : undefined), 'frames on both streams');
    expect(ffmpegChildren()).toHaveLength(2);
    await a.end();
    await eventually(() => Promise.resolve(ffmpegChildren().length === 1 ? true : undefined), 'one ffmpeg left', 2_500);
    const more = b.packetsSince();
    await pause(500);
    expect(more()).toBeGreaterThan(0);
    await b.end();
    await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg left', 2_500);
  });

  it('a viewer that vanishes without a stop: its stream ends within 2 s of its silence, no ffmpeg left', async () => {
    const [first] = await streamsOf('Side Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await eventually(() => Promise.resolve(viewer.frames().count >= 5 ? true : undefined), 'frames');
    viewer.vanish();
    await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'the stream of the vanished viewer ended', 3_500);
    await session.hb?.waitForLog(/Side Doorbell: camera view: the viewer went away/);
  });

  it('Homebridge shutdown with a stream running: ffmpeg ends with it', async () => {
    const [first] = await streamsOf('Front Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await eventually(() => Promise.resolve(viewer.frames().count >= 5 ? true : undefined), 'frames');
    const running = ffmpegChildren();
    expect(running).toHaveLength(1);
    await session.hb?.stop();
    const alive = running.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});
