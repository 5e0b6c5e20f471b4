// The camera view copies a recording's H.264 when it fits what the viewer asked for, and encodes it
// otherwise, in a real Homebridge with the real ffmpeg and a paired controller whose SRTP is decoded
// by ffmpeg. Copied: the viewer decodes exactly the clip's own pictures (frame checksums equal: an
// encode would change pixels), then the last frame held; larger than asked or not H.264: encoded at
// the asked size. A viewer that closes or vanishes during the copy or the hold leaves no ffmpeg.
// The camera's microphone muted by a controller (HAP's Mute): no sound reaches the viewer until it
// is unmuted.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { CameraViewer } from '../harness/camera-viewer.js';
import { ffmpegOnce } from '../harness/clip-cache.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { FRONT_DOORBELL, VideoBed } from '../harness/video-bed.js';

const ASSETS = fileURLToPath(new URL('../sim/assets/', import.meta.url));
const bed = new VideoBed();
const FFMPEG = bed.ffmpeg;
const work = mkdtempSync(join(tmpdir(), 'la-camera-copy-'));
let dvr = 0;

/** The checksums of the frames of a clip, decoded by ffmpeg (showinfo). */
function clipChecksums(input: string): string[] {
  const run = spawnSync(FFMPEG, ['-hide_banner', '-loglevel', 'info', '-i', input, '-vf', 'showinfo', '-f', 'null', '-'], { encoding: 'utf8', timeout: 30_000 });
  return [...run.stderr.matchAll(/Parsed_showinfo_0 .*\bchecksum:([0-9A-F]{8})\b/g)].map((match) => match[1] ?? '');
}

/** A clip that is not H.264 (MPEG-2 video), as HLS. */
function mpeg2Clip(dir: string): string {
  return ffmpegOnce(FFMPEG, dir, (folder) => ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', '3', '-c:v', 'mpeg2video', '-an', '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', '-hls_segment_filename', join(folder, 'seg%d.ts'), join(folder, 'index.m3u8')], 'the MPEG-2 clip');
}

/** A High-profile H.264 clip (320x180 at 15 fps), as HLS. */
function highClip(dir: string): string {
  return ffmpegOnce(FFMPEG, dir, (folder) => ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=15', '-t', '3', '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-pix_fmt', 'yuv420p', '-g', '15', '-an', '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', '-hls_segment_filename', join(folder, 'seg%d.ts'), join(folder, 'index.m3u8')], 'the High-profile clip');
}

/** The recording becomes the newest, a viewer starts a stream of it once the plugin has examined it; `logsFrom` marks the log lines since. */
const play = (recording: string, options: { width?: number; height?: number; fps?: number; profile?: number } = {}) => bed.playExamined(recording, FRONT_DOORBELL, options);

const logsSince = (from: number) => (bed.session.hb?.logs ?? []).slice(from).join('\n');
const frames = (viewer: CameraViewer, count: number) => bed.frames(viewer, count);
const ffmpegChildren = () => bed.ffmpegChildren();

beforeAll(async () => {
  const recordings = { 'dvr-large': makeClip(FFMPEG, join(work, 'large'), 3, false), 'dvr-mpeg2': mpeg2Clip(join(work, 'mpeg2')), 'dvr-sound': makeClip(FFMPEG, join(work, 'sound'), 10, true), 'dvr-high': highClip(join(work, 'high')) };
  await bed.start({ doorbells: [FRONT_DOORBELL], recordings, video: { replayMinutes: 60 }, debug: true });
}, 90_000);

afterEach(async () => {
  await bed.endViewers();
  await bed.ffmpegCount(0, 'no ffmpeg between tests');
});

afterAll(async () => {
  await bed.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a clip that fits is copied', () => {
  it('the viewer decodes exactly the clip\'s own frames, then its last frame held, first packet within 3 s', async () => {
    // The simulator's clip: H.264 (Constrained Baseline) 160x120 at 10 fps, 3 s; the viewer asks 640x360 at 15 fps.
    const clip = clipChecksums(`concat:${['seg0', 'seg1', 'seg2'].map((name) => join(ASSETS, `${name}.mpegts`)).join('|')}`);
    expect(clip).toHaveLength(30);
    const { viewer, logsFrom } = await play(`dvr-copy-${++dvr}`);
    await frames(viewer, 30);
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    expect(viewer.checksums().slice(0, 30)).toEqual(clip);
    expect(logsSince(logsFrom)).toMatch(/Front Doorbell: the camera view sends the clip's H.264 as it is/);
    // After the clip: one stream goes on (the same SRTP session decodes on), with a picture that does not move.
    await frames(viewer, 45);
    const held = viewer.frames();
    await frames(viewer, held.count + 10);
    const later = viewer.frames();
    expect(later.count).toBeGreaterThan(held.count + 5);
    expect(later.changes - held.changes).toBeLessThanOrEqual(1);
    expect(later.width).toBe(160);
    expect(logsSince(logsFrom)).not.toMatch(/camera view ended|m3u8|\/hls\//);
    // The viewer closes during the hold: both ffmpeg runs are over within 2 s.
    expect(ffmpegChildren()).toHaveLength(1);
    await viewer.end();
    await bed.ffmpegCount(0, 'no ffmpeg after the viewer closed', 2_000);
  });

  it('a viewer that vanishes during the copy: the stream ends, no ffmpeg left', async () => {
    const { viewer } = await play(`dvr-copy-${++dvr}`);
    await frames(viewer, 3);
    viewer.vanish();
    await bed.ffmpegCount(0, 'the stream of the vanished viewer ended', 3_500);
    await bed.session.hb?.waitForLog(/Front Doorbell: camera view: the viewer went away/);
  });
});

describe('a clip that does not fit is encoded', () => {
  it('a High-profile clip: encoded for a viewer that selects Main, copied for one that selects High (the camera offers it)', async () => {
    const main = await play('dvr-high', { profile: 1 });
    await frames(main.viewer, 10);
    expect(logsSince(main.logsFrom)).toMatch(/Front Doorbell: the camera view encodes the clip: its H.264 profile \(High\) is above the one asked for/);
    await bed.endViewers();
    await bed.ffmpegCount(0, 'the first stream over');
    const clip = clipChecksums(join(work, 'high', 'index.m3u8'));
    // The same recording (still the newest), viewed again by a viewer that selects High.
    const logsFrom = bed.session.hb?.logs.length ?? 0;
    const viewer = await bed.view(await bed.streamOf(FRONT_DOORBELL.name), { profile: 2 });
    await frames(viewer, 20);
    expect(logsSince(logsFrom)).toMatch(/Front Doorbell: the camera view sends the clip's H.264 as it is/);
    expect(viewer.checksums().slice(0, 20)).toEqual(clip.slice(0, 20));
  });

  it('larger than asked: encoded at the asked size, its pictures changed by the encode', async () => {
    const { viewer, logsFrom } = await play('dvr-large', { width: 160, height: 120, fps: 15 });
    await frames(viewer, 20);
    expect(logsSince(logsFrom)).toMatch(/Front Doorbell: the camera view encodes the clip: it is 320x180, larger than the 160x120 asked for/);
    const decoded = viewer.frames();
    expect(decoded.width).toBeLessThanOrEqual(160);
    expect(decoded.height).toBeLessThanOrEqual(120);
    expect(decoded.changes).toBeGreaterThan(10);
  });

  it('not H.264: encoded as H.264, frames that change', async () => {
    const { viewer, logsFrom } = await play('dvr-mpeg2');
    await frames(viewer, 20);
    expect((viewer.firstPacketAt ?? Infinity) - viewer.startedAt).toBeLessThan(3_000);
    expect(logsSince(logsFrom)).toMatch(/Front Doorbell: the camera view encodes the clip: its video is mpeg2video, not H.264/);
    expect(viewer.frames().changes).toBeGreaterThan(10);
  });
});

describe('the microphone\'s Mute', () => {
  /** The `aid.iid` of Mute on the camera's Microphone service. */
  async function muteId(): Promise<string> {
    const accessory = await bed.eventually(() => bed.paired().accessory(FRONT_DOORBELL.name), 'the doorbell');
    const mute = accessory.services.find((service) => service.type === '112')?.characteristics.find((c) => c.type === '11A');
    if (!mute) throw new Error(`the camera has no Microphone Mute (${JSON.stringify(accessory.services.map((service) => [service.type, service.characteristics.map((c) => c.type)]))})`);
    return `${mute.aid}.${mute.iid}`;
  }

  it('while muted no sound is sent (none decodes); unmuted, the sound comes back; the picture goes on throughout', async () => {
    const mute = await muteId();
    const { viewer } = await play('dvr-sound');
    await bed.eventually(() => Promise.resolve(viewer.audioFrames() >= 10 ? true : undefined), '10 decoded sound frames');
    expect(await bed.paired().write(mute, true)).toBe(0);
    // What was on its way when the mute landed has arrived once the picture has moved on a few frames.
    const writtenAt = viewer.frames().count;
    await bed.eventually(() => Promise.resolve(viewer.frames().count >= writtenAt + 8 ? true : undefined), 'the picture going on after the mute');
    const mutedAt = { audio: viewer.audioFrames(), packets: viewer.audioPackets, video: viewer.frames().count };
    // Muted while the picture goes on for over 10 frames (the sound's 20-ms packets would be dozens).
    await bed.eventually(() => Promise.resolve(viewer.frames().count > mutedAt.video + 10 ? true : undefined), 'the picture going on while muted');
    expect(viewer.audioPackets).toBe(mutedAt.packets);
    expect(viewer.audioFrames()).toBe(mutedAt.audio);
    expect(viewer.frames().count).toBeGreaterThan(mutedAt.video + 10);
    expect(await bed.paired().write(mute, false)).toBe(0);
    await bed.eventually(() => Promise.resolve(viewer.audioFrames() >= mutedAt.audio + 10 ? true : undefined), 'sound again after the unmute');
  });
});
