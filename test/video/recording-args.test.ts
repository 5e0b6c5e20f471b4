import { describe, expect, it } from 'vitest';

import { MAX_RECORDING_SECONDS, recordingArgs, type RecordingFormat } from '../../src/video/recording-args.js';
import { argAfter } from './arg-after.js';

const format: RecordingFormat = { width: 1280, height: 720, fps: 30, bitrateKbps: 2000, profile: 'main', level: '4.0', fragmentMs: 4000 };
const URL_ = 'https://media.example/clip/index.m3u8?signature=secret';

describe('ffmpeg arguments for a Secure Video recording', () => {
  it('reads the playlist as its only input and writes fragmented MP4 to standard output', () => {
    const args = recordingArgs(URL_, format);
    expect(args.filter((a) => a === '-i')).toHaveLength(1);
    expect(argAfter(args, '-i')).toBe(URL_);
    expect(args.at(-1)).toBe('pipe:1');
    expect(argAfter(args, '-f')).toBe('mp4');
    expect(argAfter(args, '-movflags')?.split('+').sort()).toEqual(['default_base_moof', 'empty_moov', 'frag_keyframe']);
    // Input options come before the input they apply to.
    expect(args.indexOf('-rw_timeout')).toBeLessThan(args.indexOf('-i'));
    expect(argAfter(args, '-t')).toBe(String(MAX_RECORDING_SECONDS));
  });

  it('encodes H.264 at the selected size, rate, bitrate, profile and level', () => {
    const args = recordingArgs(URL_, { ...format, width: 640, height: 360, fps: 15, bitrateKbps: 800, profile: 'high', level: '3.1' });
    expect(argAfter(args, '-c:v')).toBe('libx264');
    expect(argAfter(args, '-profile:v')).toBe('high');
    expect(argAfter(args, '-level:v')).toBe('3.1');
    expect(argAfter(args, '-r')).toBe('15');
    expect(argAfter(args, '-b:v')).toBe('800k');
    expect(argAfter(args, '-maxrate')).toBe('800k');
    expect(argAfter(args, '-pix_fmt')).toBe('yuv420p');
    expect(argAfter(args, '-vf')).toContain('scale=640:360:force_original_aspect_ratio=decrease');
    expect(argAfter(args, '-vf')).toContain('pad=640:360');
  });

  it('forces a key frame at every fragment boundary and none between', () => {
    const args = recordingArgs(URL_, { ...format, fps: 25, fragmentMs: 4000 });
    expect(argAfter(args, '-force_key_frames')).toBe('expr:gte(t,n_forced*4)');
    expect(argAfter(args, '-g')).toBe('100');
    expect(argAfter(args, '-keyint_min')).toBe('100');
    expect(argAfter(args, '-sc_threshold')).toBe('0');
    const short = recordingArgs(URL_, { ...format, fps: 30, fragmentMs: 2000 });
    expect(argAfter(short, '-force_key_frames')).toBe('expr:gte(t,n_forced*2)');
    expect(argAfter(short, '-g')).toBe('60');
  });

  it('leaves audio out unless asked for, and then maps it only if the clip has some', () => {
    const silent = recordingArgs(URL_, format);
    expect(silent).toContain('-an');
    expect(silent).not.toContain('-c:a');
    const withAudio = recordingArgs(URL_, { ...format, audio: { sampleRate: 16_000, channels: 1, bitrateKbps: 32 } });
    expect(withAudio).not.toContain('-an');
    // The "?" makes the audio map optional: a clip without sound still records.
    expect(withAudio).toContain('0:a:0?');
    expect(argAfter(withAudio, '-c:a')).toBe('aac');
    expect(argAfter(withAudio, '-profile:a')).toBe('aac_low');
    expect(argAfter(withAudio, '-ar')).toBe('16000');
    expect(argAfter(withAudio, '-ac')).toBe('1');
    expect(argAfter(withAudio, '-b:a')).toBe('32k');
  });

  it('uses the encoder the ffmpeg check chose, with x264 tuning only for libx264', () => {
    const hardware = recordingArgs(URL_, format, 'h264_v4l2m2m');
    expect(argAfter(hardware, '-c:v')).toBe('h264_v4l2m2m');
    expect(hardware).not.toContain('-preset');
    expect(recordingArgs(URL_, format)).toContain('-preset');
  });
});
