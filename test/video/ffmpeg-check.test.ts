// ffmpeg is found and checked once: the real static ffmpeg passes; a missing program, another
// program, and an ffmpeg without H.264 or HLS each give one warning that says what to do.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkFfmpeg, ffmpegWarning, type FfmpegCheck } from '../../src/video/ffmpeg-check.js';
import { testFfmpeg } from './ffmpeg-binary.js';

function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'la-ffmpeg-'));
  const file = join(dir, 'ffmpeg');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A fake ffmpeg that answers -version and the lists, without `leave` in them. */
function fakeFfmpeg(leave: 'libx264' | 'hls' | 'http' | 'rtp' | 'nothing'): string {
  const encoders = leave === 'libx264' ? '' : ' V..... libx264  libx264 H.264';
  const demuxers = leave === 'hls' ? '' : ' D  hls,applehttp   Apple HTTP Live Streaming';
  // No srtp: the plugin protects the stream itself.
  const protocols = ['http', 'rtp'].filter((name) => name !== leave).map((name) => `  ${name}`).join('\\n');
  return script(`case "$2" in
  -version) echo "ffmpeg version 9.9-fake Copyright";;
  -encoders) printf 'Encoders:\\n ------\\n${encoders}\\n A..... aac AAC\\n';;
  -demuxers) printf 'File formats:\\n --\\n${demuxers}\\n D  mov,mp4 QuickTime\\n';;
  -muxers) printf 'File formats:\\n --\\n  E mp4 MP4\\n';;
  -protocols) printf 'Supported file protocols:\\nInput:\\n  file\\nOutput:\\n${protocols}\\n';;
esac`);
}

/** The problem as the log says it: the message's English text and what ffmpeg said. */
function problemOf(check: FfmpegCheck): string {
  if (check.ok) throw new Error('expected the check to fail');
  return check.detail === undefined ? check.problem.text : `${check.problem.text} (${check.detail})`;
}

function codeOf(check: FfmpegCheck): string {
  if (check.ok) throw new Error('expected the check to fail');
  return check.problem.code;
}

describe('ffmpeg is checked once at start: version, an H.264 encoder, the HLS demuxer', () => {
  it('the shipped static ffmpeg is usable: version, libx264, hls, http, rtp', async () => {
    const check = await checkFfmpeg(testFfmpeg());
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.info.path).toBe(testFfmpeg());
    expect(check.info.version).toMatch(/\S/);
    expect(check.info.h264Encoder).toBe('libx264');
    expect(check.info.demuxers.has('hls')).toBe(true);
    expect(check.info.encoders.has('aac')).toBe(true);
  });

  it('asks ffmpeg one question at a time (a small machine keeps its other cores for the rest of start-up)', async () => {
    let running = 0;
    let most = 0;
    const asked: string[] = [];
    const answers: Record<string, string> = {
      '-version': 'ffmpeg version 6.1 Copyright (c) the FFmpeg developers\n',
      '-encoders': 'Encoders:\n ------\n V....D libx264              H.264\n',
      '-demuxers': 'File formats:\n --\n D  hls             Apple HTTP Live Streaming\n',
      '-muxers': 'File formats:\n --\n  E mp4             MP4\n',
      '-protocols': 'Supported file protocols:\nInput:\n  file\n  http\nOutput:\n  rtp\n',
    };
    const check = await checkFfmpeg('/opt/ffmpeg', async (_path, args) => {
      const question = args[0] ?? '';
      asked.push(question);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      return answers[question] ?? '';
    });
    expect(check.ok).toBe(true);
    expect(asked).toEqual(['-version', '-encoders', '-demuxers', '-muxers', '-protocols']);
    expect(most).toBe(1);
  });

  it('a configured path with no program: named, and the warning says to correct video.ffmpegPath', async () => {
    const check = await checkFfmpeg('/nonexistent/bin/ffmpeg');
    expect(problemOf(check)).toBe('no program at /nonexistent/bin/ffmpeg');
    if (check.ok) return;
    const warning = ffmpegWarning(check);
    expect(warning).toMatch(/ffmpeg/);
    expect(warning).toMatch(/camera view/);
    expect(warning).toMatch(/Raspberry Pi/);
    expect(warning).toMatch(/Docker/);
    expect(warning).toMatch(/macOS/);
    expect(warning).toMatch(/correct video\.ffmpegPath/);
  });

  it('no ffmpeg on the PATH: the warning says to install it or set video.ffmpegPath', async () => {
    const check = await checkFfmpeg(undefined, () => Promise.reject(Object.assign(new Error('spawn ffmpeg ENOENT'), { code: 'ENOENT' })));
    expect(problemOf(check)).toBe('no ffmpeg on the PATH');
    if (!check.ok) expect(ffmpegWarning(check)).toMatch(/set video\.ffmpegPath/);
  });

  it('a program that is not ffmpeg is unusable', async () => {
    expect(problemOf(await checkFfmpeg(script('echo "GNU bash, version 5"')))).toMatch(/is not ffmpeg/);
  });

  it('a program that fails is unusable, and the reason names no command line', async () => {
    const check = await checkFfmpeg(script('echo broken >&2; exit 3'));
    const problem = problemOf(check);
    expect(problem).toMatch(/did not answer "-version" \(exit code 3: broken\)/);
    expect(problem).not.toMatch(/-hide_banner/);
    // The page gets the code and the program's path; what ffmpeg said stays in the log.
    expect(codeOf(check)).toBe('videoProblem.noVersion');
    expect(JSON.stringify(check.ok ? undefined : check.problem.params)).not.toMatch(/broken/);
  });

  it.each([
    ['libx264', /no H\.264 encoder/, 'videoProblem.noH264'],
    ['hls', /cannot read HLS playlists/, 'videoProblem.noHls'],
    ['http', /cannot read recordings \(no http protocol\)/, 'videoProblem.noHttp'],
    ['rtp', /cannot send a live view \(no rtp protocol\)/, 'videoProblem.noRtp'],
  ] as const)('an ffmpeg without %s is unusable', async (leave, words, code) => {
    const check = await checkFfmpeg(fakeFfmpeg(leave));
    expect(problemOf(check)).toMatch(words);
    expect(codeOf(check)).toBe(code);
  });

  it('an ffmpeg without srtp is usable: the plugin protects the stream itself', async () => {
    expect((await checkFfmpeg(fakeFfmpeg('nothing'))).ok).toBe(true);
  });
});
