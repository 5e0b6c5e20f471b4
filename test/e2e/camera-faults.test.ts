// The camera view when things go wrong, in a real Homebridge with the real ffmpeg: the recording
// lookup fails (404, 401, 500) or hangs; the playlist is empty, not a playlist, or its segments 404
// midway; ffmpeg crashes mid-stream. Each: a clear log line, the stream ends cleanly (or plays the
// still picture), the other doorbell's stream goes on, no unhandled rejection, no ffmpeg left, and
// no playlist address in the log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { CameraViewer } from '../harness/camera-viewer.js';
import { makeClip } from '../harness/secure-video-hub.js';
import { commandLine, FRONT_DOORBELL, SIDE_DOORBELL, VideoBed } from '../harness/video-bed.js';

const bed = new VideoBed();
const { eventually, session } = bed;
const FRONT = FRONT_DOORBELL;
const SIDE = SIDE_DOORBELL;
const ffmpegChildren = bed.ffmpegChildren.bind(bed);

async function view(name: string, index = 0): Promise<CameraViewer> {
  return bed.view(await bed.streamOf(name, index));
}

const logs = () => bed.logs();
const noFfmpegLeft = () => bed.ffmpegCount(0, 'no ffmpeg left', 3_000);
const frames = (viewer: CameraViewer, count: number) => bed.frames(viewer, count);

/** A new recording of the Front Doorbell, named so the simulator answers with the fault. */
const recording = (dvrId: string) => bed.recording(dvrId, FRONT);

/** Where the long recording is kept for the simulator to serve. */
const work = mkdtempSync(join(tmpdir(), 'camera-faults-'));
/** A recording that plays for 40 s: the crash case's ffmpeg is still at work whenever the test gets to it. */
const LONG_RECORDING = 'dvr-crash-long';

beforeAll(async () => {
  await bed.start({ doorbells: [FRONT, SIDE], debug: true, recordings: { [LONG_RECORDING]: makeClip(bed.ffmpeg, join(work, 'long'), 40, false) } });
}, 90_000);

afterEach(async () => {
  await bed.endViewers();
  await noFfmpegLeft();
});

afterAll(async () => {
  try {
    // Nothing secret in the whole log, debug included; no unhandled rejection.
    expect(logs()).not.toMatch(/SIM-SECRET-SIGNATURE|\/hls\/|m3u8|srtp_out_params|-loglevel/);
    expect(logs()).not.toMatch(/unhandled/i);
  } finally {
    await bed.close();
    rmSync(work, { recursive: true, force: true });
  }
});

describe('the recording cannot be looked up: the still picture plays instead, with a line saying why', () => {
  it.each([
    ['404', /could not be looked up .*404|not found/i],
    ['401', /could not be looked up/],
    ['500', /could not be looked up/],
    ['hang', /no answer within 2 s/],
  ])('lookup %s', async (fault, words) => {
    await recording(`lookup-${fault}-${Date.now()}`);
    const before = session.hb?.logs.length ?? 0;
    const viewer = await view('Front Doorbell');
    const line = await eventually(() => Promise.resolve(session.hb?.logs.slice(before).find((l) => /Front Doorbell: the camera view shows the still picture: /.test(l))), 'the line saying why');
    expect(line).toMatch(words);
    await frames(viewer, 10);
    expect(viewer.frames().changes).toBeLessThanOrEqual(3);
  });
});

describe('the playlist is broken', () => {
  it.each([['playlist-empty'], ['playlist-text']])('%s: refused before ffmpeg starts, the still picture plays instead with a line saying why', async (fault) => {
    const before = session.hb?.logs.length ?? 0;
    await recording(`${fault}-${Date.now()}`);
    const viewer = await view('Front Doorbell');
    await eventually(() => Promise.resolve(session.hb?.logs.slice(before).find((line) => /Front Doorbell: the camera view shows the still picture: the answer is not an HLS playlist/.test(line))), 'the line saying why');
    await frames(viewer, 10);
    expect(viewer.frames().changes).toBeLessThanOrEqual(3);
  });

  it('segments that 404 midway: a line saying so, then the last frame it got is held', async () => {
    const before = session.hb?.logs.length ?? 0;
    await recording(`playlist-gap-${Date.now()}`);
    const viewer = await view('Front Doorbell');
    await eventually(() => Promise.resolve(session.hb?.logs.slice(before).find((l) => /Front Doorbell: camera view: ffmpeg says: .*(404|Failed to open segment)/.test(l))), 'the 404 line');
    await frames(viewer, 20);
    expect(ffmpegChildren()).toHaveLength(1);
  });
});

describe('ffmpeg crashes mid-stream', () => {
  it('the stream ends with a line saying so; the other doorbell\'s stream goes on', async () => {
    await recording(LONG_RECORDING);
    const side = await view('Side Doorbell');
    await frames(side, 5);
    const front = await view('Front Doorbell');
    // The recording's ffmpeg reads HLS (its playlist on standard input); the still's reads a picture.
    const recordingPid = await eventually(() => Promise.resolve(ffmpegChildren().find((pid) => commandLine(pid).includes('\0hls\0'))), 'the ffmpeg reading the recording');
    await frames(front, 2);
    process.kill(recordingPid, 'SIGSEGV');
    await session.hb?.waitForLog(/Front Doorbell: camera view ended: ffmpeg was ended by SIGSEGV/);
    await eventually(() => Promise.resolve(ffmpegChildren().length === 1 ? true : undefined), 'only the side stream left');
    const more = side.packetsSince();
    await eventually(() => Promise.resolve(more() > 0 ? true : undefined), 'packets on the side stream after the crash');
  });
});
