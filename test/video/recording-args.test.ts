import { describe, expect, it } from 'vitest';

import { MAX_RECORDING_SECONDS, recordingArgs, type RecordingFormat } from '../../src/video/recording-args.js';
import { argAfter, expectFlags } from './arg-after.js';

const format: RecordingFormat = { width: 1280, height: 720, fps: 30, bitrateKbps: 2000, profile: 'main', level: '4.0', fragmentMs: 4000 };

describe('ffmpeg arguments for a Secure Video recording', () => {
  it('reads the relayed playlist on standard input (no address in its arguments) and writes fragmented MP4 to standard output', () => {
    const args = recordingArgs(format);
    expect(args.filter((a) => a === '-i')).toHaveLength(1);
    expect(argAfter(args, '-i')).toBe('pipe:0');
    expectFlags(args, { '-f': 'hls', '-protocol_whitelist': 'pipe,http,tcp,crypto' });
    expect(args.join(' ')).not.toMatch(/:\/\//);
    expect(args.at(-1)).toBe('pipe:1');
    expect(args[args.lastIndexOf('-f') + 1]).toBe('mp4');
    expect(argAfter(args, '-movflags')?.split('+').sort()).toEqual(['default_base_moof', 'empty_moov', 'frag_keyframe']);
    // Input options come before the input they apply to.
    expect(args.indexOf('-rw_timeout')).toBeLessThan(args.indexOf('-i'));
    expect(argAfter(args, '-t')).toBe(String(MAX_RECORDING_SECONDS));
  });

  it('encodes H.264 at the selected size, rate, bitrate, profile and level', () => {
    const args = recordingArgs({ ...format, width: 640, height: 360, fps: 15, bitrateKbps: 800, profile: 'high', level: '3.1' });
    expectFlags(args, { '-c:v': 'libx264', '-profile:v': 'high', '-level:v': '3.1', '-r': '15', '-b:v': '800k', '-maxrate': '800k', '-pix_fmt': 'yuv420p' });
    expect(argAfter(args, '-vf')).toContain('scale=640:360:force_original_aspect_ratio=decrease');
    expect(argAfter(args, '-vf')).toContain('pad=640:360');
  });

  it('forces a key frame at every fragment boundary and none between', () => {
    const args = recordingArgs({ ...format, fps: 25, fragmentMs: 4000 });
    expectFlags(args, { '-force_key_frames': 'expr:gte(t,n_forced*4)', '-g': '100', '-keyint_min': '100', '-sc_threshold': '0' });
    const short = recordingArgs({ ...format, fps: 30, fragmentMs: 2000 });
    expect(argAfter(short, '-force_key_frames')).toBe('expr:gte(t,n_forced*2)');
    expect(argAfter(short, '-g')).toBe('60');
  });

  it('leaves audio out unless asked for, and then maps it only if the clip has some', () => {
    const silent = recordingArgs(format);
    expect(silent).toContain('-an');
    expect(silent).not.toContain('-c:a');
    const withAudio = recordingArgs({ ...format, audio: { sampleRate: 16_000, channels: 1, bitrateKbps: 32 } });
    expect(withAudio).not.toContain('-an');
    // The "?" makes the audio map optional: a clip without sound still records.
    expect(withAudio).toContain('0:a:0?');
    expectFlags(withAudio, { '-c:a': 'aac', '-profile:a': 'aac_low', '-ar': '16000', '-ac': '1', '-b:a': '32k' });
  });

  it('uses the encoder the ffmpeg check chose, with x264 tuning only for libx264', () => {
    const hardware = recordingArgs(format, 'h264_v4l2m2m');
    expect(argAfter(hardware, '-c:v')).toBe('h264_v4l2m2m');
    expect(hardware).not.toContain('-preset');
    expect(recordingArgs(format)).toContain('-preset');
  });
});
