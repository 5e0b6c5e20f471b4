// The doorbell's camera in Apple Home: its pictures and its streams. A stream plays the doorbell's
// newest recording from its start when it became available within video.replayMinutes, then holds
// its last frame; otherwise the latest still picture (the snapshot) as video. Without ffmpeg the
// stream is refused with a clear line, and the pictures go on as before.
import type {
  API,
  CameraController,
  CameraStreamingDelegate,
  PrepareStreamCallback,
  PrepareStreamRequest,
  SnapshotRequest,
  SnapshotRequestCallback,
  StartStreamRequest,
  StreamingRequest,
  StreamRequestCallback,
} from 'homebridge';

import { recentRecording } from '../model/doorbell-state.js';
import type { DoorbellDevice } from '../model/doorbell-device.js';
import { errorText } from '../util/error-text.js';
import { probeClip, type ClipFacts } from '../video/clip-probe.js';
import { whyNotCopied } from '../video/copy-fit.js';
import { audioEncoderFor } from '../video/live-args.js';
import { LiveStreams, type CopyFacts, type LiveAudioSelection, type LiveInput } from '../video/live-streams.js';
import type { VideoRoom } from '../video/video-room.js';
import type { SnapshotCache } from './snapshot-cache.js';

export const LIVE_VIDEO_REFUSAL = 'live video is not available for this doorbell; Apple Home shows the latest motion still instead';
/** The lookup gets this long; then the still picture plays, so the first packet still leaves within 3 s. */
export const LOOKUP_BUDGET_MS = 2_000;
/** Examining the clip (sound? can its video be copied?) gets this long, and must end by CHECK_BY_MS from the start request; no answer: no sound, encoded video. */
export const CHECK_MS = 1_200;
export const CHECK_BY_MS = 2_200;
/** The clip's last frame is kept from this many frame times before its end (the last frame falls within). */
const LAST_FRAMES = 1.5;
/** Opus asks a bitrate of the encoder; HomeKit's "variable" rate leaves it at what the viewer allows. */
const MIN_AUDIO_KBPS = 16;
export class DoorbellCamera implements CameraStreamingDelegate {
  private readonly streams: LiveStreams | undefined;

  constructor(
    private readonly api: API,
    private readonly device: DoorbellDevice,
    private readonly snapshots: SnapshotCache,
    private readonly video: VideoRoom | undefined,
    /** Ends a stream in HomeKit that ended on our side (ffmpeg stopped, the viewer went away). */
    forceStop: (sessionId: string) => void,
  ) {
    this.streams = video === undefined ? undefined : new LiveStreams(video, device.log, forceStop);
  }

  /** Follows the camera's microphone Mute (written by a viewer): while muted, no stream sends sound. */
  attach(controller: CameraController): void {
    controller.on('microphone-change', (muted) => {
      this.device.log.debug(`the camera's sound is ${muted ? 'muted' : 'on'}.`);
      this.streams?.setMuted(muted);
    });
  }

  /** Ends every stream (the accessory goes away). */
  dispose(): void {
    void this.streams?.stopAll();
  }

  handleSnapshotRequest(_request: SnapshotRequest, callback: SnapshotRequestCallback): void {
    void this.snapshots.get().then((image) => {
      callback(undefined, image);
    });
  }

  prepareStream(request: PrepareStreamRequest, callback: PrepareStreamCallback): void {
    const refusal = this.refusal();
    if (refusal !== undefined || this.streams === undefined) {
      this.device.log.info(`${refusal ?? LIVE_VIDEO_REFUSAL}.`);
      callback(new Error(refusal ?? LIVE_VIDEO_REFUSAL));
      return;
    }
    const { video, audio } = request;
    const viewer = {
      address: request.targetAddress,
      ipv6: request.addressVersion === 'ipv6',
      port: video.port,
      srtpKey: video.srtp_key,
      srtpSalt: video.srtp_salt,
      audio: { port: audio.port, srtpKey: audio.srtp_key, srtpSalt: audio.srtp_salt },
    };
    this.streams.prepare(request.sessionID, viewer, this.device.name).then(
      ({ port, ssrc }) => {
        callback(undefined, {
          video: { port, ssrc, srtp_key: video.srtp_key, srtp_salt: video.srtp_salt },
          // Sound, when there is any, comes from the same ffmpeg with the next SSRC.
          audio: { port, ssrc: ssrc + 1, srtp_key: audio.srtp_key, srtp_salt: audio.srtp_salt },
        });
      },
      (error: unknown) => {
        this.device.log.warn(`the camera view could not be prepared (${errorText(error)}).`);
        callback(new Error('the stream could not be prepared'));
      },
    );
  }

  handleStreamRequest(request: StreamingRequest, callback: StreamRequestCallback): void {
    const { StreamRequestTypes } = this.api.hap;
    if (request.type === StreamRequestTypes.STOP) {
      void this.streams?.stop(request.sessionID);
      callback();
      return;
    }
    if (request.type === StreamRequestTypes.RECONFIGURE || this.streams === undefined) {
      // A reconfigure keeps the stream as it is (at or below what was first asked); no stream: refused.
      if (this.streams === undefined) callback(new Error(LIVE_VIDEO_REFUSAL));
      else callback();
      return;
    }
    void this.start(request, this.streams).then(() => {
      callback();
    }, (error: unknown) => {
      this.device.log.warn(`the camera view could not start (${errorText(error)}).`);
      void this.streams?.stop(request.sessionID);
      callback(new Error('the stream could not start'));
    });
  }

  private async start(request: StartStreamRequest, streams: LiveStreams): Promise<void> {
    const { video } = request;
    const asked = Date.now();
    const input = await this.input();
    const facts: ClipFacts =
      input.kind === 'recording' && this.video !== undefined
        ? await probeClip(this.video, input.recording.playlist, Math.min(CHECK_MS, CHECK_BY_MS - (Date.now() - asked)))
        : { audio: false, video: undefined, duration: undefined };
    const selection = {
      width: video.width,
      height: video.height,
      fps: video.fps,
      maxBitrate: video.max_bit_rate,
      payloadType: video.pt,
      mtu: video.mtu,
      profile: video.profile,
      level: video.level,
      rtcpInterval: video.rtcp_interval,
    };
    let copy: CopyFacts | undefined;
    if (input.kind === 'recording') {
      const why = whyNotCopied(facts.video, selection) ?? (facts.duration === undefined ? 'its length is not known' : undefined);
      if (why === undefined && facts.duration !== undefined && facts.video?.fps !== undefined) {
        copy = { lastFrameAt: facts.duration - LAST_FRAMES / facts.video.fps, width: facts.video.width, height: facts.video.height };
        this.device.log.debug('the camera view sends the clip\'s H.264 as it is.');
      } else {
        this.device.log.debug(`the camera view encodes the clip: ${why ?? 'it cannot be copied'}.`);
      }
    }
    await streams.start(request.sessionID, selection, input, this.sound(request, input, facts.audio), copy);
  }

  /**
   * The sound to send: only for a recording that has a sound track, and only in a codec the viewer
   * selected that this ffmpeg can make. A still has none.
   */
  private sound(request: StartStreamRequest, input: LiveInput, hasAudio: boolean): LiveAudioSelection | undefined {
    const { audio } = request;
    const encoder = audioEncoderFor(audio.codec, this.video?.ffmpeg?.encoders ?? new Set());
    if (input.kind !== 'recording' || encoder === undefined || !hasAudio) return undefined;
    return {
      encoder,
      payloadType: audio.pt,
      sampleRate: audio.sample_rate * 1000,
      channels: audio.channel,
      bitrate: Math.max(MIN_AUDIO_KBPS, audio.max_bit_rate),
      packetTime: audio.packet_time,
    };
  }

  /**
   * The newest recording (looked up now, its playlist fetched and checked) while it is recent
   * enough; else, or when it cannot be fetched safely in time, the still picture.
   */
  private async input(): Promise<LiveInput> {
    const room = this.video;
    const recording = room === undefined ? undefined : recentRecording(this.device.state, room.settings.replayMinutes, Date.now());
    if (room !== undefined && recording !== undefined) {
      const givenUp = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          // A recording opened after this is closed at once.
          givenUp.abort();
          reject(new Error(`no answer within ${LOOKUP_BUDGET_MS / 1000} s`));
        }, LOOKUP_BUDGET_MS);
      });
      const opening = room.openRecording(this.device.entry.id, recording.dvrId, givenUp.signal);
      try {
        const opened = await Promise.race([opening, late]);
        this.device.log.info(`the camera view plays the recording of ${new Date(recording.availableAt).toLocaleTimeString()}.`);
        return { kind: 'recording', recording: opened };
      } catch (error) {
        void opening.then((opened) => {
          opened.close();
        }, () => undefined);
        this.device.log.warn(`the camera view shows the still picture: ${errorText(error)}.`);
      } finally {
        clearTimeout(timer);
      }
    }
    return { kind: 'still', image: await this.snapshots.get() };
  }

  /** Why no stream can start now, or undefined when one can. */
  private refusal(): string | undefined {
    if (this.video === undefined) return undefined;
    if (this.video.ffmpeg === undefined) return `${LIVE_VIDEO_REFUSAL} (doorbell video needs ffmpeg: see the warning at start-up)`;
    return undefined;
  }
}
