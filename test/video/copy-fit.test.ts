// Which clips are copied and which encoded, from what ffmpeg says of them: ffmpeg's own words
// (lines as its input description prints them) read into facts, then the fit rule.
import { describe, expect, it } from 'vitest';

import { readProbeLine, type ClipFacts } from '../../src/video/clip-probe.js';
import { whyNotCopied, type CopySelection } from '../../src/video/copy-fit.js';

const read = (...lines: string[]): ClipFacts => {
  const facts: ClipFacts = { audio: false, video: undefined, duration: undefined };
  for (const line of lines) readProbeLine(line, facts);
  return facts;
};

const SIM_CLIP = [
  'Duration: 00:00:03.00, start: 1.400000, bitrate: 0 kb/s',
  'Stream #0:0: Video: h264 (Constrained Baseline) ([27][0][0][0] / 0x001B), yuv420p, 160x120 [SAR 1:1 DAR 4:3], 10 fps, 10 tbr, 90k tbn, 20 tbc',
];
const ASKED: CopySelection = { width: 640, height: 360, fps: 15, profile: 1, level: 0 };

describe('reading ffmpeg\'s description of a clip', () => {
  it('codec, profile, pixels, size, rate and length; no sound', () => {
    expect(read(...SIM_CLIP)).toEqual({ audio: false, duration: 3, video: { codec: 'h264', profile: 'Constrained Baseline', pixelFormat: 'yuv420p', width: 160, height: 120, fps: 10 } });
  });

  it('a clip with sound, a pixel format with colour details, the rate from tbr when fps is missing, the first video track only', () => {
    const facts = read(
      'Duration: 01:02:03.50, start: 0.000000, bitrate: 0 kb/s',
      'Stream #0:0: Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709), 1920x1080 [SAR 1:1 DAR 16:9], 25 tbr, 90k tbn, 50 tbc',
      'Stream #0:1: Audio: aac (LC) ([15][0][0][0] / 0x000F), 16000 Hz, mono, fltp',
      'Stream #0:2: Video: mjpeg, yuvj420p, 320x240, 1 fps',
    );
    expect(facts.audio).toBe(true);
    expect(facts.duration).toBeCloseTo(3723.5);
    expect(facts.video).toEqual({ codec: 'h264', profile: 'High', pixelFormat: 'yuv420p', width: 1920, height: 1080, fps: 25 });
  });

  it('no profile in the line', () => {
    expect(read('Stream #0:0: Video: mpeg2video ([2][0][0][0] / 0x0002), yuv420p(tv, progressive), 160x120 [SAR 1:1 DAR 4:3], 10 fps, 10 tbr, 90k tbn, 20 tbc').video?.profile).toBe('');
  });
});

describe('the fit rule', () => {
  const video = (changes: Partial<NonNullable<ClipFacts['video']>>) => ({ codec: 'h264', profile: 'Main', pixelFormat: 'yuv420p', width: 1280, height: 720, fps: 15, ...changes });

  it('copies H.264 4:2:0 at or below the asked profile, size, rate and level', () => {
    expect(whyNotCopied(read(...SIM_CLIP).video, ASKED)).toBeUndefined();
    expect(whyNotCopied(video({}), { width: 1280, height: 720, fps: 15, profile: 1, level: 0 })).toBeUndefined();
    expect(whyNotCopied(video({ fps: 15.05 }), { width: 1280, height: 720, fps: 15, profile: 1, level: 0 })).toBeUndefined();
  });

  it.each([
    ['unknown', undefined, ASKED, /could not be examined/],
    ['not H.264', video({ codec: 'hevc', width: 640, height: 360 }), ASKED, /hevc, not H.264/],
    ['4:2:2', video({ pixelFormat: 'yuv422p', width: 640, height: 360 }), ASKED, /yuv422p, not 4:2:0/],
    ['High asked Main', video({ profile: 'High', width: 640, height: 360 }), ASKED, /profile \(High\) is above/],
    ['wider than asked', video({}), ASKED, /1280x720, larger than the 640x360/],
    ['taller than asked', video({ width: 480, height: 480 }), ASKED, /480x480, larger/],
    ['faster than asked', video({ width: 640, height: 360, fps: 30 }), ASKED, /frame rate \(30\) is above the 15 fps/],
    ['rate unknown', video({ width: 640, height: 360, fps: undefined }), ASKED, /frame rate \(unknown\)/],
    ['above level 3.1', video({ width: 1920, height: 1080, fps: 30 }), { width: 1920, height: 1080, fps: 30, profile: 2, level: 0 }, /above the H.264 level/],
  ])('encodes when %s', (_name, clip, asked, why) => {
    expect(whyNotCopied(clip, asked)).toMatch(why);
  });

  it('level 4.0 takes 1080p at 30 fps', () => {
    expect(whyNotCopied(video({ width: 1920, height: 1080, fps: 30 }), { width: 1920, height: 1080, fps: 30, profile: 2, level: 2 })).toBeUndefined();
  });
});
