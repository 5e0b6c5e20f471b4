// The ffmpeg arguments that turn a doorbell recording (an HLS playlist) into what HomeKit Secure
// Video stores: fragmented MP4 on standard output, H.264 at the configuration the home hub selected,
// a key frame at the start of every fragment, AAC-LC audio only when asked for. The playlist
// (rewritten to the plugin's HLS relay) comes on standard input: no address is an argument.
import type { H264Level, H264Profile } from './h264-names.js';
import { PIPED_PLAYLIST } from './playlist-rewrite.js';

/** What the home hub selected, in plain numbers (the HomeKit view translates HAP's configuration). */
export interface RecordingFormat {
  width: number;
  height: number;
  fps: number;
  bitrateKbps: number;
  profile: H264Profile;
  level: H264Level;
  /** How long each fragment is; every fragment starts with a key frame. */
  fragmentMs: number;
  /** AAC-LC to send when the clip has sound; absent: never any audio (recording audio is off). */
  audio?: { sampleRate: number; channels: number; bitrateKbps: number };
}

/** A clip longer than this is cut: a playlist that never ends must not keep ffmpeg running. */
export const MAX_RECORDING_SECONDS = 180;
/** How long ffmpeg may wait on the network for one read (microseconds, as ffmpeg counts). */
const READ_TIMEOUT_US = 5_000_000;

/** The arguments for one recording; `encoder` is the H.264 encoder the ffmpeg check chose. */
export function recordingArgs(format: RecordingFormat, encoder = 'libx264'): string[] {
  const fragmentSeconds = Math.max(1, format.fragmentMs / 1000);
  const fps = Math.max(1, Math.round(format.fps));
  const gop = String(Math.max(1, Math.round(fps * fragmentSeconds)));
  const kbps = Math.max(1, Math.round(format.bitrateKbps));
  const { width, height } = format;
  const video = [
    '-c:v',
    encoder,
    // The hub wants the first fragment within seconds, on a Raspberry Pi too: speed over size
    // (superfast is the fastest preset that keeps the selected profile; ultrafast is baseline only).
    ...(encoder === 'libx264' ? ['-preset', 'superfast', '-tune', 'zerolatency'] : []),
    '-profile:v',
    format.profile,
    '-level:v',
    format.level,
    '-pix_fmt',
    'yuv420p',
    // Fit the clip inside the selected size and pad the rest, so HomeKit gets exactly what it chose.
    '-vf',
    `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1`,
    '-r',
    String(fps),
    '-b:v',
    `${kbps}k`,
    '-maxrate',
    `${kbps}k`,
    '-bufsize',
    `${kbps * 2}k`,
    // A key frame exactly at each fragment boundary, and none between (no scene-cut key frames).
    '-force_key_frames',
    `expr:gte(t,n_forced*${fragmentSeconds})`,
    '-g',
    gop,
    '-keyint_min',
    gop,
    '-sc_threshold',
    '0',
  ];
  const audio = format.audio
    ? ['-map', '0:a:0?', '-c:a', 'aac', '-profile:a', 'aac_low', '-ar', String(format.audio.sampleRate), '-ac', String(format.audio.channels), '-b:a', `${Math.max(8, Math.round(format.audio.bitrateKbps))}k`]
    : ['-an'];
  return [
    '-loglevel',
    'error',
    '-rw_timeout',
    String(READ_TIMEOUT_US),
    ...PIPED_PLAYLIST,
    '-map',
    '0:v:0',
    ...audio,
    '-t',
    String(MAX_RECORDING_SECONDS),
    ...video,
    '-f',
    'mp4',
    // Fragmented MP4 on a pipe: an empty moov first (the initialization segment), then a fragment at
    // every key frame, each with its own base offsets.
    '-movflags',
    'frag_keyframe+empty_moov+default_base_moof',
    'pipe:1',
  ];
}
