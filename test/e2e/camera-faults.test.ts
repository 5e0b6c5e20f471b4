// The camera view when things go wrong, in a real Homebridge with the real ffmpeg: the recording
// lookup fails (404, 401, 500) or hangs; the playlist is empty, not a playlist, or its segments 404
// midway; ffmpeg crashes mid-stream. Each: a clear log line, the stream ends cleanly (or plays the
// still picture), the other doorbell's stream goes on, no unhandled rejection, no ffmpeg left, and
// no playlist address in the log.
import { readFileSync } from 'node:fs';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { CameraViewer, childPids, streamServices, type StreamIds } from '../harness/camera-viewer.js';
import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';

const FFMPEG = testFfmpeg();
let sim: Simulator;
const session = new E2eSession();
const { eventually, paired } = session;
const viewers: CameraViewer[] = [];

async function streamOf(name: string, index = 0): Promise<StreamIds> {
  const accessory = await eventually(() => paired().accessory(name), `accessory ${name}`);
  const ids = streamServices(accessory)[index];
  if (!ids) throw new Error(`${name} has no stream service ${index}`);
  return ids;
}

async function view(name: string, index = 0): Promise<CameraViewer> {
  const viewer = await CameraViewer.setUp(paired(), await streamOf(name, index), { ffmpeg: FFMPEG });
  viewers.push(viewer);
  expect(viewer.setupStatus).toBe(0);
  expect(await viewer.start({ ffmpeg: FFMPEG })).toBe(0);
  return viewer;
}

function ffmpegChildren(): number[] {
  const pid = session.hb?.child.pid;
  return pid === undefined ? [] : childPids(pid);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

const logs = () => session.hb?.logs.join('\n') ?? '';
const noFfmpegLeft = () => eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg left', 3_000);
const frames = (viewer: CameraViewer, count: number) => eventually(() => Promise.resolve(viewer.frames().count >= count ? true : undefined), `${count} frames`);

/** A new recording of the Front Doorbell, named so the simulator answers with the fault. */
async function recording(dvrId: string): Promise<void> {
  const announced = () => session.hb?.logs.filter((line) => /Front Doorbell: Recording available/.test(line)).length ?? 0;
  const before = announced();
  await fireAccepted(sim, 'video-available', { doorbellId: 'BELL-1', dvrId });
  await eventually(() => Promise.resolve(announced() > before ? true : undefined), `the recording ${dvrId} applied`);
}

beforeAll(async () => {
  sim = await startSimulator({ doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Doorbell' }] });
  const listenPort = await freePort();
  await session.start({
    platforms: [
      simPlatformConfig(sim, listenPort, {
        doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }, { id: 'BELL-2', name: 'Side Doorbell' }],
        discoverDevices: false,
        userWebhook: false,
        video: { ffmpegPath: FFMPEG },
      }),
    ],
    registrations: { sim, atLeast: 2 },
    debug: true,
  });
  await session.pair(3, 'the bridge and two doorbells');
}, 90_000);

afterEach(async () => {
  for (const viewer of viewers.splice(0)) {
    await viewer.end().catch(() => undefined);
    viewer.close();
  }
  await noFfmpegLeft();
});

afterAll(async () => {
  // Nothing secret in the whole log, debug included; no unhandled rejection.
  expect(logs()).not.toMatch(/SIM-SECRET-SIGNATURE|\/hls\/|m3u8|srtp_out_params|-loglevel/);
  expect(logs()).not.toMatch(/unhandled/i);
  await session.close();
  await sim.close();
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
  it.each([['playlist-empty'], ['playlist-text']])('%s: ffmpeg ends at once, the stream ends cleanly with a line saying why, and the camera can be viewed again', async (fault) => {
    const before = session.hb?.logs.length ?? 0;
    await recording(`${fault}-${Date.now()}`);
    await view('Front Doorbell');
    await eventually(() => Promise.resolve(session.hb?.logs.slice(before).find((line) => /Front Doorbell: camera view ended: ffmpeg exited with code/.test(line))), 'the line saying the stream ended');
    await noFfmpegLeft();
    // HAP knows the stream ended: the same stream service takes a new viewer.
    const again = await view('Side Doorbell');
    await frames(again, 5);
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
    await recording(`dvr-crash-${Date.now()}`);
    const side = await view('Side Doorbell');
    const front = await view('Front Doorbell');
    await frames(front, 5);
    await frames(side, 5);
    const recordingPid = ffmpegChildren().find((pid) => commandLine(pid).includes('/hls/'));
    if (recordingPid === undefined) throw new Error('no ffmpeg reading the recording');
    process.kill(recordingPid, 'SIGSEGV');
    await session.hb?.waitForLog(/Front Doorbell: camera view ended: ffmpeg was ended by SIGSEGV/);
    await eventually(() => Promise.resolve(ffmpegChildren().length === 1 ? true : undefined), 'only the side stream left');
    const more = side.packetsSince();
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(more()).toBeGreaterThan(0);
  });
});
