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

import { fireAccepted } from '../harness/e2e-session.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { alive, commandLine, FRONT_DOORBELL, SIDE_DOORBELL, VideoBed } from '../harness/video-bed.js';

const bed = new VideoBed();
const { eventually, session } = bed;
const FRONT = FRONT_DOORBELL;
const SIDE = SIDE_DOORBELL;
const work = mkdtempSync(join(tmpdir(), 'la-camera-view-'));
const view = bed.view.bind(bed);
const streamsOf = bed.streamsOf.bind(bed);
const ffmpegChildren = bed.ffmpegChildren.bind(bed);

beforeAll(async () => {
  // A recording with sound (a sine tone); the simulator's own recording has none.
  const withSound = makeClip(bed.ffmpeg, join(work, 'sound'), 4, true);
  await bed.start({ doorbells: [FRONT, SIDE], recordings: { 'dvr-sound': withSound }, video: { replayMinutes: 60 }, debug: true });
}, 90_000);

afterEach(async () => {
  // A failed test leaves no stream behind to make the next one's stream service busy.
  await bed.endViewers();
});

afterAll(async () => {
  await bed.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the camera view plays what the doorbell has', () => {
  it('before any recording: the still picture as video, first packet within 3 s, frames that do not change', async () => {
    const [first] = await streamsOf('Side Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first, { width: 320, height: 180 });
    await bed.frames(viewer, 20);
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    const settled = viewer.frames();
    await bed.frames(viewer, settled.count + 10);
    const later = viewer.frames();
    expect(later.count).toBeGreaterThan(settled.count);
    // A held still: hardly a frame that differs from the one before (the first, a sharpening or two).
    expect(later.changes).toBeLessThanOrEqual(3);
    expect(later.width).toBeLessThanOrEqual(320);
    expect(later.height).toBeLessThanOrEqual(180);
    // A still has no sound.
    expect(viewer.audioPackets).toBe(0);
    expect(await viewer.end()).toBe(0);
    await bed.ffmpegCount(0, 'no ffmpeg after the viewer closed', 2_500);
  });

  it('after videoavailable: the recording from its start, frames that change, then its last frame held', async () => {
    await fireAccepted(bed.sim, 'video-available', { doorbellId: 'BELL-1', dvrId: 'dvr-e2e-1' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    const [first] = await streamsOf('Front Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await session.hb?.waitForLog(/Front Doorbell: the camera view plays the recording/);
    await bed.frames(viewer, 30);
    // No ffmpeg's command line (readable by every local user) holds the signed playlist address, a
    // segment's address or the viewer's SRTP keys: the plugin relays both.
    const lines = ffmpegChildren().map(commandLine);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(/SIM-SECRET-SIGNATURE|signature=|\/hls\/|m3u8|\.ts\b|srtp|inline:/);
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    expect(viewer.frames().changes).toBeGreaterThan(10);
    // The clip is 3 s long: afterwards the stream goes on with its last frame, which does not move.
    await eventually(() => Promise.resolve(viewer.streamSeconds() >= 3.5 ? true : undefined), 'the stream past the clip\'s end');
    const held = viewer.frames();
    // A second and a half of the held frame at the viewer's 15 frames a second.
    await eventually(() => Promise.resolve(viewer.frames().count >= held.count + 22 ? true : undefined), 'frames after the clip\'s end');
    const later = viewer.frames();
    expect(later.count).toBeGreaterThan(held.count);
    expect(later.changes - held.changes).toBeLessThanOrEqual(1);
    // The clip has no sound: none is sent.
    expect(viewer.audioPackets).toBe(0);
    // The playlist address is never logged (debug included).
    expect(session.hb?.logs.join('\n')).not.toMatch(/m3u8|\/hls\//);
    await viewer.end();
    await bed.ffmpegCount(0, 'no ffmpeg after the viewer closed', 2_500);
  });

  it('a recording with sound: its sound arrives on the audio port as SRTP that decodes, the video still within 3 s', async () => {
    // Sound needs the plugin's check of the clip in time (else it sends the picture alone).
    const { viewer } = await bed.playExamined('dvr-sound', FRONT);
    await bed.frames(viewer, 15);
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    await eventually(() => Promise.resolve(viewer.audioFrames() >= 10 ? true : undefined), '10 decoded sound frames');
    expect(viewer.audioPackets).toBeGreaterThan(0);
    // The sound ends with the clip (4 s); the held last frame goes on.
    await eventually(() => Promise.resolve(viewer.streamSeconds() >= 4.5 ? true : undefined), 'the stream past the clip\'s end');
    const more = viewer.packetsSince();
    await eventually(() => Promise.resolve(more() > 0 ? true : undefined), 'packets after the clip\'s end');
    expect(more()).toBeGreaterThan(0);
    await viewer.end();
    await bed.ffmpegCount(0, 'no ffmpeg after the viewer closed', 2_500);
  });

  it('two viewers at once each get a stream of their own', async () => {
    const [one, two] = await streamsOf('Front Doorbell');
    if (!one || !two) throw new Error('two stream services expected');
    const a = await view(one);
    const b = await view(two);
    await eventually(() => Promise.resolve(a.frames().count >= 10 && b.frames().count >= 10 ? true : undefined), 'frames on both streams');
    expect(ffmpegChildren()).toHaveLength(2);
    await a.end();
    await bed.ffmpegCount(1, 'one ffmpeg left', 2_500);
    const more = b.packetsSince();
    await eventually(() => Promise.resolve(more() > 0 ? true : undefined), 'packets on the stream left open');
    await b.end();
    await bed.ffmpegCount(0, 'no ffmpeg left', 2_500);
  });

  it('a viewer that vanishes without a stop: its stream ends 5 report intervals (2.5 s) into its silence, no ffmpeg left', async () => {
    const [first] = await streamsOf('Side Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await bed.frames(viewer, 5);
    viewer.vanish();
    // 2.5 s of silence, the watch's next look (0.25 s), then ffmpeg's end (within 2 s of its stop).
    await bed.ffmpegCount(0, 'the stream of the vanished viewer ended', 5_000);
    await session.hb?.waitForLog(/Side Doorbell: camera view: the viewer went away/);
  });

  it('Homebridge shutdown with a stream running: ffmpeg ends with it', async () => {
    const [first] = await streamsOf('Front Doorbell');
    if (!first) throw new Error('no stream service');
    const viewer = await view(first);
    await bed.frames(viewer, 5);
    const running = ffmpegChildren();
    expect(running).toHaveLength(1);
    await session.hb?.stop();
    expect(running.filter(alive)).toEqual([]);
  });
});
