// The camera view's ffmpeg arguments: exactly what the controller negotiated, at or below its size,
// rate and bitrate, the last frame held, and the source read by ffmpeg itself.
import { describe, expect, it } from 'vitest';

import { audioEncoderFor, liveArgs, type LiveAudioTarget, type LiveTarget } from '../../src/video/live-args.js';
import { argAfter, expectFlags } from './arg-after.js';

const key = Buffer.alloc(16, 1);
const salt = Buffer.alloc(14, 2);
const target: LiveTarget = { address: '192.168.1.20', ipv6: false, port: 51000, srtpKey: key, srtpSalt: salt, ssrc: 123456, payloadType: 99, mtu: 1378, width: 1280, height: 720, fps: 30, maxBitrate: 299, profile: 1, level: 2 };

describe('camera-view arguments', () => {
  it('SRTP to the negotiated address and port, with its key and salt, SSRC, payload type and MTU', () => {
    const args = liveArgs({ kind: 'recording', playlist: 'https://cdn.example.com/p.m3u8?sig=x' }, target, 'libx264');
    expect(args.at(-1)).toBe('srtp://192.168.1.20:51000?rtcpport=51000&pkt_size=1378');
    expect(argAfter(args, '-srtp_out_suite')).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(Buffer.from(argAfter(args, '-srtp_out_params') ?? '', 'base64')).toEqual(Buffer.concat([key, salt]));
    expectFlags(args, { '-ssrc': '123456', '-payload_type': '99', '-f': 'rtp' });
  });

  it('an IPv6 viewer is addressed in brackets', () => {
    expect(liveArgs({ kind: 'still' }, { ...target, address: 'fe80::1', ipv6: true }, 'libx264').at(-1)).toBe('srtp://[fe80::1]:51000?rtcpport=51000&pkt_size=1378');
  });

  it('at or below the asked size, rate and bitrate, in the asked profile and level; the last frame held in real time', () => {
    const args = liveArgs({ kind: 'still' }, target, 'libx264');
    const filters = argAfter(args, '-vf') ?? '';
    expect(filters).toContain('scale=w=1280:h=720:force_original_aspect_ratio=decrease');
    expect(filters).toContain('fps=30');
    expect(filters).toMatch(/tpad=stop_mode=clone:stop=-1,realtime$/);
    expectFlags(args, { '-b:v': '299k', '-maxrate': '299k', '-profile:v': 'main', '-level:v': '4.0', '-g': '30' });
    // Video only.
    expect(args).toContain('-an');
  });

  it('a recording is read by ffmpeg from its playlist in real time; a still comes on standard input', () => {
    const recording = liveArgs({ kind: 'recording', playlist: 'https://cdn.example.com/p.m3u8' }, target, 'libx264');
    expect(recording.slice(recording.indexOf('-re'), recording.indexOf('-re') + 3)).toEqual(['-re', '-i', 'https://cdn.example.com/p.m3u8']);
    const still = liveArgs({ kind: 'still' }, target, 'libx264');
    expect(argAfter(still, '-i')).toBe('pipe:0');
    expect(still).not.toContain('-re');
  });

  it('a hardware encoder gets no libx264 options', () => {
    const args = liveArgs({ kind: 'still' }, target, 'h264_v4l2m2m');
    expect(argAfter(args, '-c:v')).toBe('h264_v4l2m2m');
    expect(args).not.toContain('-preset');
  });
});

describe('camera-view sound', () => {
  const audioKey = Buffer.alloc(16, 3);
  const audioSalt = Buffer.alloc(14, 4);
  const opus: LiveAudioTarget = { encoder: 'libopus', port: 51002, srtpKey: audioKey, srtpSalt: audioSalt, ssrc: 123457, payloadType: 110, sampleRate: 24_000, channels: 1, bitrate: 24, packetTime: 20 };
  const recording = { kind: 'recording', playlist: 'https://cdn.example.com/p.m3u8' } as const;

  /** The arguments of the second output (after the video's SRTP address), or [] when there is none. */
  function soundOutput(args: string[]): string[] {
    const video = args.findIndex((arg) => arg.startsWith('srtp://') && arg.includes(':51000?'));
    return args.slice(video + 1);
  }

  it('a clip with sound and Opus selected: a second SRTP output to the audio port with its SSRC, payload type, keys, rate, channels and packet time', () => {
    const sound = soundOutput(liveArgs(recording, target, 'libx264', opus));
    expect(argAfter(sound, '-map')).toBe('0:a:0');
    expect(sound).toContain('-vn');
    expectFlags(sound, {
      '-c:a': 'libopus',
      '-ar': '24000',
      '-ac': '1',
      '-b:a': '24k',
      '-frame_duration': '20',
      '-ssrc': '123457',
      '-payload_type': '110',
      '-srtp_out_suite': 'AES_CM_128_HMAC_SHA1_80',
    });
    expect(Buffer.from(argAfter(sound, '-srtp_out_params') ?? '', 'base64')).toEqual(Buffer.concat([audioKey, audioSalt]));
    expect(sound.at(-1)).toMatch(/^srtp:\/\/192\.168\.1\.20:51002\?rtcpport=51002&pkt_size=\d+$/);
    // The video output keeps its own SSRC and no sound.
    const args = liveArgs(recording, target, 'libx264', opus);
    expect(argAfter(args, '-ssrc')).toBe('123456');
    expect(args.slice(0, args.indexOf('-vn'))).toContain('-an');
  });

  it('an Opus packet time that Opus cannot make is sent as the next shorter one', () => {
    expect(argAfter(soundOutput(liveArgs(recording, target, 'libx264', { ...opus, packetTime: 30 })), '-frame_duration')).toBe('20');
    expect(argAfter(soundOutput(liveArgs(recording, target, 'libx264', { ...opus, packetTime: 60 })), '-frame_duration')).toBe('60');
  });

  it('a codec this ffmpeg cannot make means no sound: AAC-ELD without libfdk_aac, Opus without libopus', () => {
    const bundled = new Set(['libx264', 'aac', 'opus', 'libopus']);
    expect(audioEncoderFor('AAC-eld', bundled)).toBeUndefined();
    expect(audioEncoderFor('OPUS', bundled)).toBe('libopus');
    expect(audioEncoderFor('OPUS', new Set(['libx264', 'opus']))).toBeUndefined();
    expect(audioEncoderFor('AAC-eld', new Set(['libfdk_aac']))).toBe('libfdk_aac');
    expect(audioEncoderFor('PCMU', bundled)).toBeUndefined();
  });

  it('without a sound target, or for a still, there is only the video output', () => {
    for (const args of [liveArgs(recording, target, 'libx264'), liveArgs({ kind: 'still' }, target, 'libx264', opus)]) {
      expect(soundOutput(args)).toEqual([]);
      expect(args.filter((arg) => arg.startsWith('srtp://'))).toHaveLength(1);
      expect(args).not.toContain('-c:a');
    }
  });
});
