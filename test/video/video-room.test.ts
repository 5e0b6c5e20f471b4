// The video room: one check at start, one warning when video cannot work, its status for the
// settings page, a lookup whose failure names no address, and no spawn without ffmpeg.
import { describe, expect, it } from 'vitest';

import { VideoRoom, VideoUnavailableError } from '../../src/video/video-room.js';
import { keptLog, testFfmpeg } from './ffmpeg-binary.js';

const config = { replayMinutes: 60, secureVideo: true };

describe('the video room', () => {
  it('with a usable ffmpeg: ready, its path and version in the status, no warning', async () => {
    const log = keptLog();
    const statuses: unknown[] = [];
    const room = new VideoRoom({ config: { ...config, ffmpegPath: testFfmpeg() }, log, lookup: () => Promise.resolve('https://x/p.m3u8'), onStatus: (status) => statuses.push(status) });
    expect(room.status().state).toBe('checking');
    expect(await room.ready).toBeDefined();
    expect(room.status()).toMatchObject({ state: 'ready', ffmpegPath: testFfmpeg(), h264Encoder: 'libx264', secureVideo: true, replayMinutes: 60 });
    expect(statuses).toHaveLength(1);
    expect(log.lines.filter((line) => line.level === 'warn')).toEqual([]);
    await room.stop();
  });

  it('without ffmpeg: one warning, status unavailable with the reason, and spawn refuses', async () => {
    const log = keptLog();
    const room = new VideoRoom({ config: { ...config, ffmpegPath: '/nonexistent/ffmpeg' }, log, lookup: () => Promise.resolve('') });
    expect(await room.ready).toBeUndefined();
    expect(log.lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(room.status()).toMatchObject({ state: 'unavailable', problem: 'no program at /nonexistent/ffmpeg' });
    expect(() => room.spawn([], { label: 'x' })).toThrow(VideoUnavailableError);
  });

  it('a failed lookup says so without the address it may carry', async () => {
    const room = new VideoRoom({ config, log: keptLog(), lookup: () => Promise.reject(new Error('GET https://api.example.com/doorbells/D1/videoevent?dvrID=9&token=SECRET answered 500')), check: () => Promise.resolve({ ok: false, path: 'ffmpeg', configured: false, problem: 'x' }) });
    await expect(room.playlist('D1', '9')).rejects.toThrow('the recording could not be looked up (GET https://api.example.com answered 500)');
  });
});
