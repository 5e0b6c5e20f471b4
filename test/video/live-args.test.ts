// The camera view's ffmpeg arguments: exactly what the controller negotiated, at or below its size,
// rate and bitrate, the last frame held, and the source read by ffmpeg itself.
import { describe, expect, it } from 'vitest';

import { audioEncoderFor, liveArgs, type LiveAudioTarget, type LiveTarget } from '../../src/video/live-args.js';
import { argAfter, expectFlags } from './arg-after.js';

const key = Buffer.alloc(16, 1);
const salt = Buffer.alloc(14, 2);
const target: LiveTarget = { address: '192.168.1.20', ipv6: false, port: 51000, srtpKey: key, srtpSalt: salt, ssrc: 123456, payloadType: 99, mtu: 1378, width: 1280, height: 720, fps: 30, maxBitrate: 299, profile: 1, level: 2 };

const RELAY = { port: 40000, from: 40010, rtcpFrom: 40011 };

describe('camera-view arguments', () => {
  it('plain RTP to the relay on this machine, room left for the SRTP tag; no keys and no viewer address in the arguments', () => {
    const args = liveArgs({ kind: 'recording' }, target, 'libx264', RELAY);
    // ffmpeg sends from the ports the relay expects: it takes packets from those only.
    expect(args.at(-1)).toBe('rtp://127.0.0.1:40000?rtcpport=40000&localrtpport=40010&localrtcpport=40011&pkt_size=1368');
    expectFlags(args, { '-payload_type': '99' });
    expect(args.slice(-5, -3)).toEqual(['-f', 'rtp']);
    const text = args.join(' ');
    for (const secret of [key.toString('base64'), Buffer.concat([key, salt]).toString('base64'), '192.168.1.20', 'srtp']) expect(text).not.toContain(secret);
  });

  it('at or below the asked size, rate and bitrate, in the asked profile and level; the last frame held in real time', () => {
    const args = liveArgs({ kind: 'still' }, target, 'libx264', RELAY);
    const filters = argAfter(args, '-vf') ?? '';
    expect(filters).toContain('scale=w=1280:h=720:force_original_aspect_ratio=decrease');
    expect(filters).toContain('fps=30');
    expect(filters).toMatch(/tpad=stop_mode=clone:stop=-1,realtime$/);
    expectFlags(args, { '-b:v': '299k', '-maxrate': '299k', '-profile:v': 'main', '-level:v': '4.0', '-g': '30' });
    // Video only.
    expect(args).toContain('-an');
  });

  it('a recording is read by ffmpeg in real time from its relayed playlist on standard input; a still comes on standard input too', () => {
    const recording = liveArgs({ kind: 'recording' }, target, 'libx264', RELAY);
    expect(recording.slice(recording.indexOf('-re'), recording.indexOf('-re') + 7)).toEqual(['-re', '-protocol_whitelist', 'pipe,http,tcp,crypto', '-f', 'hls', '-i', 'pipe:0']);
    const still = liveArgs({ kind: 'still' }, target, 'libx264', RELAY);
    expect(argAfter(still, '-i')).toBe('pipe:0');
    expect(still).not.toContain('-re');
  });

  it('a hardware encoder gets no libx264 options', () => {
    const args = liveArgs({ kind: 'still' }, target, 'h264_v4l2m2m', RELAY);
    expect(argAfter(args, '-c:v')).toBe('h264_v4l2m2m');
    expect(args).not.toContain('-preset');
  });
});

describe('camera-view sound', () => {
  const audioKey = Buffer.alloc(16, 3);
  const audioSalt = Buffer.alloc(14, 4);
  const opus: LiveAudioTarget = { encoder: 'libopus', payloadType: 110, sampleRate: 24_000, channels: 1, bitrate: 24, packetTime: 20, relay: { port: 40002, from: 40012, rtcpFrom: 40013 } };
  const recording = { kind: 'recording' } as const;

  /** The arguments of the second output (after the video's relay address), or [] when there is none. */
  function soundOutput(args: string[]): string[] {
    const video = args.findIndex((arg) => arg.startsWith('rtp://') && arg.includes(':40000?'));
    return args.slice(video + 1);
  }

  it('a clip with sound and Opus selected: a second RTP output to the sound\'s relay with its payload type, rate, channels and packet time; no keys', () => {
    const sound = soundOutput(liveArgs(recording, target, 'libx264', RELAY, opus));
    expect(argAfter(sound, '-map')).toBe('0:a:0');
    expect(sound).toContain('-vn');
    expectFlags(sound, {
      '-c:a': 'libopus',
      '-ar': '24000',
      '-ac': '1',
      '-b:a': '24k',
      '-frame_duration': '20',
      '-payload_type': '110',
    });
    expect(sound.at(-1)).toMatch(/^rtp:\/\/127\.0\.0\.1:40002\?rtcpport=40002&localrtpport=40012&localrtcpport=40013&pkt_size=\d+$/);
    expect(sound.join(' ')).not.toMatch(new RegExp(`srtp|${Buffer.concat([audioKey, audioSalt]).toString('base64').replace(/[+/]/g, '.')}`));
    // The video output has no sound.
    const args = liveArgs(recording, target, 'libx264', RELAY, opus);
    expect(args.slice(0, args.indexOf('-vn'))).toContain('-an');
  });

  it('an Opus packet time that Opus cannot make is sent as the next shorter one', () => {
    expect(argAfter(soundOutput(liveArgs(recording, target, 'libx264', RELAY, { ...opus, packetTime: 30 })), '-frame_duration')).toBe('20');
    expect(argAfter(soundOutput(liveArgs(recording, target, 'libx264', RELAY, { ...opus, packetTime: 60 })), '-frame_duration')).toBe('60');
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
    for (const args of [liveArgs(recording, target, 'libx264', RELAY), liveArgs({ kind: 'still' }, target, 'libx264', RELAY, opus)]) {
      expect(soundOutput(args)).toEqual([]);
      expect(args.filter((arg) => arg.startsWith('rtp://'))).toHaveLength(1);
      expect(args).not.toContain('-c:a');
    }
  });
});
