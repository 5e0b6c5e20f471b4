// The video room: one check at start, one warning when video cannot work, its status for the
// settings page, a lookup whose failure names no address, and no spawn without ffmpeg.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { systemProcesses } from '../../src/video/child-ledger.js';
import { VideoRoom, VideoUnavailableError } from '../../src/video/video-room.js';
import { running } from '../harness/video-bed.js';
import { keptLog, testFfmpeg, noMedia } from './ffmpeg-binary.js';

const config = { replayMinutes: 60, secureVideo: true };

/** The test's ffmpeg behind a script that counts how often it is run. */
async function countingFfmpeg(): Promise<{ path: string; asked(): Promise<number> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lock-access-ffmpeg-'));
  const path = join(dir, 'ffmpeg');
  const calls = join(dir, 'calls');
  await writeFile(path, `#!/bin/sh\necho run >> '${calls}'\nexec '${testFfmpeg()}' "$@"\n`, { mode: 0o755 });
  return { path, asked: async () => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter(Boolean).length };
}

describe('the video room', () => {
  it('with a usable ffmpeg: ready, its path and version in the status, no warning', async () => {
    const log = keptLog();
    const statuses: unknown[] = [];
    const room = new VideoRoom({ config: { ...config, ffmpegPath: testFfmpeg() }, log, media: noMedia, lookup: () => Promise.resolve('https://x/p.m3u8'), onStatus: (status) => statuses.push(status) });
    expect(room.status().state).toBe('checking');
    expect(await room.ready).toBeDefined();
    expect(room.status()).toMatchObject({ state: 'ready', ffmpegPath: testFfmpeg(), h264Encoder: 'libx264', secureVideo: true, replayMinutes: 60 });
    expect(statuses).toHaveLength(1);
    expect(log.lines.filter((line) => line.level === 'warn')).toEqual([]);
    await room.stop();
  });

  it('without ffmpeg: one warning, status unavailable with the reason, and spawn refuses', async () => {
    const log = keptLog();
    const room = new VideoRoom({ config: { ...config, ffmpegPath: '/nonexistent/ffmpeg' }, log, media: noMedia, lookup: () => Promise.resolve('') });
    expect(await room.ready).toBeUndefined();
    expect(log.lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(room.status()).toMatchObject({ state: 'unavailable', problem: { code: 'videoProblem.noProgram', params: { path: '/nonexistent/ffmpeg' }, text: 'no program at /nonexistent/ffmpeg' } });
    expect(() => room.spawn([], { label: 'x' })).toThrow(VideoUnavailableError);
  });

  it('with checkAfter, ffmpeg is asked nothing until it settles; then the check runs and the room is ready', async () => {
    let open: () => void = () => undefined;
    const after = new Promise<void>((resolve) => {
      open = resolve;
    });
    const ffmpeg = await countingFfmpeg();
    const room = new VideoRoom({ config: { ...config, ffmpegPath: ffmpeg.path }, log: keptLog(), media: noMedia, lookup: () => Promise.resolve(''), checkAfter: after });
    // A turn of the event loop: the room's own steps before the gate have had their chance.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await ffmpeg.asked()).toBe(0);
    expect(room.status().state).toBe('checking');
    open();
    expect((await room.ready)?.path).toBe(ffmpeg.path);
    expect(await ffmpeg.asked()).toBeGreaterThan(0);
    expect(room.status().state).toBe('ready');
    await room.stop();
  });

  it('stopped before checkAfter settles: no check at all, and ready still resolves', async () => {
    let open: () => void = () => undefined;
    const after = new Promise<void>((resolve) => {
      open = resolve;
    });
    const ffmpeg = await countingFfmpeg();
    const room = new VideoRoom({ config: { ...config, ffmpegPath: ffmpeg.path }, log: keptLog(), lookup: () => Promise.resolve(''), media: noMedia, checkAfter: after });
    await room.stop();
    open();
    expect(await room.ready).toBeUndefined();
    expect(await ffmpeg.asked()).toBe(0);
  });

  it('a failed lookup says so without the address it may carry', async () => {
    const room = new VideoRoom({ config: { ...config, ffmpegPath: '/nonexistent/ffmpeg' }, log: keptLog(), media: noMedia, lookup: () => Promise.reject(new Error('GET https://api.example.com/doorbells/D1/videoevent?dvrID=9&token=SECRET answered 500')) });
    await expect(room.openRecording('D1', '9')).rejects.toThrow('the recording could not be looked up (GET https://api.example.com answered 500)');
  });

  it('a process the last run left running (in its ledger) is ended before the room is ready, even without ffmpeg', async () => {
    const leftover = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = leftover.pid ?? 0;
    try {
      const facts = await systemProcesses.facts(pid);
      if (!facts) throw new Error('the leftover is not running');
      const writes: unknown[] = [];
      const log = keptLog();
      const room = new VideoRoom({
        config: { ...config, ffmpegPath: '/nonexistent/ffmpeg' },
        log,
        media: noMedia, lookup: () => Promise.resolve(''),
        ledger: { read: () => Promise.resolve(JSON.stringify({ children: [{ pid, start: facts.start, name: 'sleep' }] })), write: (value) => Promise.resolve(void writes.push(value)) },
      });
      await room.ready;
      expect(writes).toEqual([{ children: [] }]);
      if (leftover.exitCode === null && leftover.signalCode === null) await new Promise((resolve) => leftover.once('exit', resolve));
      expect(leftover.signalCode).toBe('SIGKILL');
      expect(running(pid)).toBe(false);
      expect(log.lines.some((line) => line.level === 'info' && /Ended an ffmpeg left running by the last run/.test(line.text))).toBe(true);
    } finally {
      leftover.kill('SIGKILL');
    }
  });
});
