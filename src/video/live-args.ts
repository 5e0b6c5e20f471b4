// ffmpeg's arguments for one camera-view stream: a recording (its HLS playlist) or a still picture
// (piped in), encoded as H.264 at or below what the controller asked for, its last frame held until
// the viewer closes. ffmpeg sends plain RTP to a relay of the plugin on this machine, which protects
// it as SRTP with the controller's keys (rtp-relay.ts): the keys never stand in ffmpeg's command
// line, which every local user can read.
//
// A recording whose H.264 already fits what the viewer asked for is copied instead (copyArgs): the
// hold is a filter, which copied video cannot pass through, so its last frame, kept as a picture,
// is then held by a second ffmpeg (a still, sent to the same relay), which makes one stream of the two.
import { h264Level, h264Profile } from './h264-names.js';
import { PIPED_PLAYLIST } from './playlist-rewrite.js';
import type { RelaySink } from './rtp-relay.js';
import { SRTP_TAG_LENGTH } from './srtp.js';

/** Where and how the controller wants the video (from its SetupEndpoints and SelectedRTPStreamConfiguration). */
export interface LiveTarget {
  address: string;
  ipv6: boolean;
  port: number;
  /** The SRTP master key (16 bytes) and salt (14 bytes) the controller gave. */
  srtpKey: Buffer;
  srtpSalt: Buffer;
  ssrc: number;
  payloadType: number;
  mtu: number;
  width: number;
  height: number;
  fps: number;
  /** kbit/s */
  maxBitrate: number;
  /** H.264 profile as HAP numbers it: 0 baseline, 1 main, 2 high. */
  profile: number;
  /** H.264 level as HAP numbers it: 0 is 3.1, 1 is 3.2, 2 is 4.0. */
  level: number;
}

/** How the controller wants the sound: the codec it selected, and the ports of the sound's relay (which protects it, and drops it while muted). */
export interface LiveAudioTarget {
  /** The ffmpeg encoder of the selected codec (see audioEncoderFor). */
  encoder: string;
  payloadType: number;
  /** Hz */
  sampleRate: number;
  channels: number;
  /** kbit/s */
  bitrate: number;
  /** ms of sound in each packet */
  packetTime: number;
  relay: RelaySink;
}

export type LiveSource =
  /** A recording: its playlist (rewritten to the plugin's HLS relay) on standard input, read in real time. */
  | { kind: 'recording' }
  /** A still picture (JPEG), written to ffmpeg's standard input. */
  | { kind: 'still' };

/** Below this the picture is not worth looking at; HomeKit asks for more anyway. */
const MIN_BITRATE = 100;

/**
 * The ffmpeg encoder that makes the codec the controller selected, or undefined when this ffmpeg
 * cannot make it (then no sound is sent): Opus by libopus; AAC-ELD only by libfdk_aac, which most
 * builds leave out.
 */
export function audioEncoderFor(codec: string, encoders: ReadonlySet<string>): string | undefined {
  if (codec === 'OPUS' && encoders.has('libopus')) return 'libopus';
  if (codec === 'AAC-eld' && encoders.has('libfdk_aac')) return 'libfdk_aac';
  return undefined;
}

/** Opus frames come in these lengths only; the asked packet time, or the next shorter one. */
const OPUS_FRAME_MS = [10, 20, 40, 60] as const;
/** Sound packets are small; this leaves room for the SRTP trailer under any MTU. */
const AUDIO_PACKET_SIZE = 188;

/** Plain RTP to the relay on this machine, which protects it for the viewer (and adds the SRTP tag: room left for it). */
function relayOutput(target: LiveTarget, relay: RelaySink): string[] {
  return ['-f', 'rtp', '-payload_type', String(target.payloadType), rtpAddress(relay, target.mtu - SRTP_TAG_LENGTH)];
}

/** The relay's address, with the local ports ffmpeg sends from (the relay takes packets from those only). */
function rtpAddress(relay: RelaySink, packetSize: number): string {
  return `rtp://127.0.0.1:${relay.port}?rtcpport=${relay.port}&localrtpport=${relay.from}&localrtcpport=${relay.rtcpFrom}&pkt_size=${packetSize}`;
}

/** The second output: the clip's first sound track, encoded as selected, to the sound's relay. */
export function audioOutput(audio: LiveAudioTarget): string[] {
  const codec =
    audio.encoder === 'libopus'
      ? ['-c:a', 'libopus', '-application', 'lowdelay', '-frame_duration', String(OPUS_FRAME_MS.filter((ms) => ms <= audio.packetTime).at(-1) ?? 20)]
      : ['-c:a', audio.encoder, '-profile:a', 'aac_eld', '-flags', '+global_header'];
  return [
    '-map', '0:a:0',
    '-vn', '-sn', '-dn',
    ...codec,
    '-ar', String(audio.sampleRate),
    '-ac', String(Math.max(1, audio.channels)),
    '-b:a', `${Math.max(8, audio.bitrate)}k`,
    '-f', 'rtp',
    '-payload_type', String(audio.payloadType),
    rtpAddress(audio.relay, AUDIO_PACKET_SIZE - SRTP_TAG_LENGTH),
  ];
}

/** The video filters: fit inside the asked size (keeping the shape, even sides), the asked rate, then hold the last frame, paced in real time. */
function filters(target: LiveTarget): string {
  const { width, height, fps } = target;
  return [
    `scale=w=${width}:h=${height}:force_original_aspect_ratio=decrease`,
    'scale=w=trunc(iw/2)*2:h=trunc(ih/2)*2',
    'format=yuv420p',
    `fps=${fps}`,
    'tpad=stop_mode=clone:stop=-1',
    'realtime',
  ].join(',');
}

/** The encoder's options: the asked bitrate as a ceiling, a key frame every second so a viewer sees a picture at once. */
function encoding(target: LiveTarget, encoder: string): string[] {
  const bitrate = Math.max(MIN_BITRATE, target.maxBitrate);
  const args = ['-c:v', encoder];
  if (encoder === 'libx264') {
    args.push('-preset', 'ultrafast', '-tune', 'zerolatency', '-profile:v', h264Profile(target.profile, 'main'), '-level:v', h264Level(target.level, '3.1'));
  }
  args.push('-b:v', `${bitrate}k`, '-maxrate', `${bitrate}k`, '-bufsize', `${bitrate}k`, '-g', String(Math.max(1, Math.round(target.fps))), '-bf', '0');
  return args;
}

/**
 * The whole argument list (without -hide_banner and friends, which the process owner adds). `audio`
 * only for a recording known to have sound: ffmpeg fails at start when a mapped track is missing.
 * The sound is an output of its own, so it never holds back the video, and it simply ends with the
 * clip while the last frame is held.
 */
export function liveArgs(source: LiveSource, target: LiveTarget, encoder: string, relay: RelaySink, audio?: LiveAudioTarget): string[] {
  const input =
    source.kind === 'recording'
      ? ['-re', ...PIPED_PLAYLIST]
      : ['-f', 'image2pipe', '-i', 'pipe:0'];
  return [
    '-loglevel', 'warning',
    '-fflags', '+genpts',
    ...input,
    '-map', '0:v:0',
    '-an', '-sn', '-dn',
    '-vf', filters(target),
    ...encoding(target, encoder),
    ...relayOutput(target, relay),
    ...(audio !== undefined && source.kind === 'recording' ? audioOutput(audio) : []),
  ];
}

/**
 * A fitting recording (its playlist on standard input) copied as it is, from its start, in real time, to the relay. Beside it, the
 * frames from `lastFrameAt` (seconds into the clip) on are written to `lastFrame`, each over the
 * one before: when the clip ends, that file holds its last frame. A JPEG of the best quality: quick
 * to make even on a Raspberry Pi, in the clip's own YUV colours, and the held frame is encoded
 * again anyway. Key frames are written too (a few per clip), so a clip cut short (its later
 * segments missing) still leaves its last key frame to hold.
 */
export function copyArgs(target: LiveTarget, relay: RelaySink, lastFrame: string, lastFrameAt: number, audio?: LiveAudioTarget): string[] {
  return [
    '-loglevel', 'warning',
    '-re', ...PIPED_PLAYLIST,
    '-map', '0:v:0',
    '-an', '-sn', '-dn',
    '-c:v', 'copy',
    ...relayOutput(target, relay),
    '-map', '0:v:0',
    '-an', '-sn', '-dn',
    '-vf', `select=gte(t\\,${Math.max(0, lastFrameAt).toFixed(3)})+eq(pict_type\\,I)`,
    '-vsync', '0',
    '-c:v', 'mjpeg', '-q:v', '2', '-pix_fmt', 'yuvj420p',
    '-update', '1',
    '-f', 'image2', '-y', lastFrame,
    ...(audio === undefined ? [] : audioOutput(audio)),
  ];
}
