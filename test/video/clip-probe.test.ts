// The look at a recording before a camera view starts, with the real ffmpeg: one whose segment never
// comes is given up at the deadline, its ffmpeg stopped, and nothing is claimed of it (so the view
// encodes the picture and sends no sound). What a readable clip is found to hold: copy-fit.test.ts
// (ffmpeg's words) and the camera files (the real views).
import { createServer, type Server, type Socket } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { probeClip } from '../../src/video/clip-probe.js';
import type { FfmpegRun } from '../../src/video/ffmpeg-processes.js';
import { whyNotCopied } from '../../src/video/copy-fit.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { running } from '../harness/processes.js';
import { keptLog, noMedia, testFfmpeg } from './ffmpeg-binary.js';

const config = { replayMinutes: 60, secureVideo: false, ffmpegPath: testFfmpeg() };

/** A playlist of one segment at `segment`. */
const playlist = (segment: string) => ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:2', '#EXTINF:2.0,', segment, '#EXT-X-ENDLIST', ''].join('\n');

describe('the look at a recording before a view (real ffmpeg)', () => {
  let room: VideoRoom | undefined;
  let server: Server | undefined;
  const held: Socket[] = [];

  afterEach(async () => {
    for (const socket of held.splice(0)) socket.destroy();
    const closing = server;
    if (closing) await new Promise<void>((resolve) => { closing.close(() => { resolve(); }); });
    server = undefined;
    await room?.stop();
    room = undefined;
  });

  it('a segment that never comes: nothing is claimed at the deadline (no sound, the video unknown, so encoded), and its ffmpeg is stopped', async () => {
    // A server that takes the connection and never answers, like a relay stuck on a slow service.
    const asked: Socket[] = [];
    server = createServer((socket) => {
      held.push(socket);
      asked.push(socket);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    room = new VideoRoom({ config, log: keptLog(), media: noMedia, lookup: () => Promise.resolve('') });
    expect(await room.ready).toBeDefined();
    const spawned: FfmpegRun[] = [];
    const spawn = room.spawn.bind(room);
    room.spawn = (args, options) => {
      const run = spawn(args, options);
      spawned.push(run);
      return run;
    };

    const facts = await probeClip(room, playlist(`http://127.0.0.1:${String(address.port)}/seg0.ts`), 1_200);

    // ffmpeg did ask for the segment: the deadline, not a refusal, ended the look.
    expect(asked.length).toBeGreaterThan(0);
    expect(facts).toEqual({ audio: false, video: undefined, duration: undefined });
    expect(whyNotCopied(facts.video, { width: 640, height: 360, fps: 15, profile: 1, level: 0 })).toBe('its video could not be examined in time');
    expect(spawned).toHaveLength(1);
    // It was still waiting when the deadline came: the look stopped it (it did not end on its own).
    expect(await spawned[0]?.exited).toMatchObject({ stopped: true });
    expect(spawned.map((run) => run.pid ?? 0).filter(running)).toEqual([]);
  });

  it('no time left: nothing is asked of ffmpeg and nothing is claimed', async () => {
    room = new VideoRoom({ config, log: keptLog(), media: noMedia, lookup: () => Promise.resolve('') });
    expect(await room.ready).toBeDefined();
    let spawned = 0;
    room.spawn = () => {
      spawned += 1;
      throw new Error('no ffmpeg may start');
    };
    expect(await probeClip(room, playlist('http://127.0.0.1:9/seg0.ts'), 0)).toEqual({ audio: false, video: undefined, duration: undefined });
    expect(spawned).toBe(0);
  });
});
