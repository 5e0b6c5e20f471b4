// HomeKit Secure Video for a doorbell: what the camera advertises for recording, its trigger (a
// MotionSensor that turns on when a recording becomes available), and the answer when the home hub
// asks for the clip: the recording's fragments from the video room. The hub's choices (the selected
// configuration, recording on or off, audio on or off) are kept by HAP across restarts and handed
// back here on start; this object holds them while it runs.
import type { API, CameraRecordingConfiguration, HDSProtocolSpecificErrorReason, CameraRecordingDelegate, CameraRecordingOptions, CameraController, PlatformAccessory, RecordingPacket, Service } from 'homebridge';

import type { DoorbellDevice } from '../model/doorbell-device.js';
import { errorText } from '../util/error-text.js';
import { RecordingFailed, recordingPackets, type RecordingProcesses } from '../video/recording-fragments.js';
import { h264Level, h264Profile } from '../video/h264-names.js';
import type { RecordingFormat } from '../video/recording-args.js';
import { acquireService } from './services.js';

/** What a recording needs of the video room: ffmpeg children, the recording opened for ffmpeg, the encoder. */
export interface RecordingVideo extends RecordingProcesses {
  openRecording(doorbellId: string, dvrId: string, signal?: AbortSignal): Promise<{ readonly playlist: string; close(): void }>;
  readonly ffmpeg: { h264Encoder: string } | undefined;
}

/** The subtype of the trigger sensor (the doorbell's own MotionSensor has none). */
export const RECORDING_SUBTYPE = 'recording';
/** HomeKit's fragments: about 4 s each, a key frame at each start. */
export const FRAGMENT_MS = 4000;
/** After a clip was sent, a newer one waiting turns the trigger on again this much later (HAP batches changes). */
const RETRIGGER_MS = 1_000;

const SAMPLE_RATES = [8_000, 16_000, 24_000, 32_000, 44_100, 48_000];

/** What the camera offers the hub: fragmented MP4 of H.264, and AAC-LC (HAP requires an audio codec). */
export function recordingOptions(api: API): CameraRecordingOptions {
  const { hap } = api;
  return {
    prebufferLength: FRAGMENT_MS,
    mediaContainerConfiguration: [{ type: hap.MediaContainerType.FRAGMENTED_MP4, fragmentLength: FRAGMENT_MS }],
    video: {
      type: hap.VideoCodecType.H264,
      parameters: { profiles: [hap.H264Profile.BASELINE, hap.H264Profile.MAIN, hap.H264Profile.HIGH], levels: [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL3_2, hap.H264Level.LEVEL4_0] },
      resolutions: [
        [1280, 720, 30],
        [1280, 720, 15],
        [640, 360, 30],
        [640, 360, 15],
      ],
    },
    audio: {
      codecs: [{ type: hap.AudioRecordingCodecType.AAC_LC, audioChannels: 1, samplerate: [hap.AudioRecordingSamplerate.KHZ_16, hap.AudioRecordingSamplerate.KHZ_24, hap.AudioRecordingSamplerate.KHZ_32] }],
    },
  };
}

/** The hub's selected configuration in plain numbers; audio only when recording audio is on. */
export function recordingFormat(api: API, selected: CameraRecordingConfiguration, audioOn: boolean): RecordingFormat {
  const [width, height, fps] = selected.videoCodec.resolution;
  const { profile, level, bitRate } = selected.videoCodec.parameters;
  const audio = selected.audioCodec;
  const aac = audioOn && audio.type === api.hap.AudioRecordingCodecType.AAC_LC;
  return {
    width,
    height,
    fps,
    bitrateKbps: bitRate,
    profile: h264Profile(profile, 'main'),
    level: h264Level(level, '4.0'),
    fragmentMs: selected.mediaContainerConfiguration.fragmentLength,
    ...(aac ? { audio: { sampleRate: SAMPLE_RATES[audio.samplerate] ?? 16_000, channels: Math.max(1, audio.audioChannels ?? 1), bitrateKbps: audio.bitrate } } : {}),
  };
}

export class DoorbellRecording implements CameraRecordingDelegate {
  private selected: CameraRecordingConfiguration | undefined;
  private active = false;
  private controller: CameraController | undefined;
  /** The recording the trigger announced and the hub has not fetched yet. */
  private ready: { dvrId: string } | undefined;
  private triggerTimer: NodeJS.Timeout | undefined;
  private current: AbortController | undefined;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly device: DoorbellDevice,
    private readonly video: RecordingVideo,
  ) {}

  /** The trigger sensor, created when the cached accessory lacks it (a part of the doorbell). */
  sensor(name: string): Service {
    const { Service: S, Characteristic: C } = this.api.hap;
    const sensor = acquireService(this.accessory, S.MotionSensor, name, RECORDING_SUBTYPE);
    sensor.updateCharacteristic(C.Name, name);
    return sensor;
  }

  /** The camera this recording belongs to (for its RecordingAudioActive). */
  attach(controller: CameraController): void {
    this.controller = controller;
  }

  /** A new recording became available: the hub is told through the trigger, for the motion timeout. */
  recordingAvailable(dvrId: string): void {
    if (!this.active) {
      // Recording is off for this camera in the Home app: no hub will come, and a sensor that
      // turned on anyway would only be noise.
      this.device.log.debug('a recording is ready; HomeKit Secure Video recording is off for this camera in the Home app, so it is not announced.');
      return;
    }
    this.ready = { dvrId };
    if (this.current) return; // announced once the clip being sent is done
    this.trigger(true);
  }

  dispose(): void {
    clearTimeout(this.triggerTimer);
    this.current?.abort();
  }

  // ---- CameraRecordingDelegate ----

  updateRecordingActive(active: boolean): void {
    this.active = active;
    this.device.log.debug(`HomeKit Secure Video recording ${active ? 'on' : 'off'}.`);
  }

  updateRecordingConfiguration(configuration: CameraRecordingConfiguration | undefined): void {
    this.selected = configuration;
  }

  async *handleRecordingStreamRequest(_streamId: number, signal?: AbortSignal): AsyncGenerator<RecordingPacket> {
    const { hap } = this.api;
    const clip = this.ready;
    const selected = this.selected;
    const encoder = this.video.ffmpeg?.h264Encoder;
    if (!clip || !selected || encoder === undefined) {
      const why = !clip ? 'no recording is ready yet' : !selected ? 'it has not chosen a recording format' : 'ffmpeg is not available';
      this.device.log.info(`the home hub asked for a Secure Video clip, but ${why}; nothing is sent.`);
      throw protocolError(this.api, hap.HDSProtocolSpecificErrorReason.CANCELLED);
    }
    this.ready = undefined;
    // The hub took the clip: the motion-window timer guarded only that, and left running it would
    // clear a recording that becomes ready while this send is still under way.
    clearTimeout(this.triggerTimer);
    this.triggerTimer = undefined;
    const stop = new AbortController();
    this.current = stop;
    const abort = (): void => {
      stop.abort();
    };
    signal?.addEventListener('abort', abort, { once: true });
    // A function, not a narrowed property: the hub may close while this generator waits.
    const closed = (): boolean => stop.signal.aborted;
    let sent = 0;
    let recording: { readonly playlist: string; close(): void } | undefined;
    try {
      try {
        recording = await this.video.openRecording(this.device.entry.id, clip.dvrId, stop.signal);
      } catch (error) {
        this.device.log.warn(`the Secure Video clip was not sent: ${errorText(error)}.`);
        throw protocolError(this.api, hap.HDSProtocolSpecificErrorReason.UNEXPECTED_FAILURE);
      }
      if (closed()) return;
      const audioOn = this.controller?.recordingManagement?.recordingManagementService.getCharacteristic(hap.Characteristic.RecordingAudioActive).value === 1;
      const packets = recordingPackets({
        processes: this.video,
        label: `${this.device.name} Secure Video clip`,
        playlist: recording.playlist,
        format: recordingFormat(this.api, selected, audioOn),
        encoder,
        signal: stop.signal,
        onCutShort: (why) => {
          this.device.log.warn(`the Secure Video clip was cut short (${why}); the part before it was sent.`);
        },
      });
      for await (const packet of packets) {
        // HAP stops asking after the last packet, so the clip is told sent before it goes.
        if (packet.isLast) this.device.log.info(`Secure Video clip sent to the home hub (${sent} fragments).`);
        yield packet;
        sent++;
      }
      if (closed()) this.device.log.debug(`the home hub closed the Secure Video clip after ${sent} parts.`);
    } catch (error) {
      if (error instanceof RecordingFailed) {
        this.device.log.warn(`the Secure Video clip was not sent: ${error.message}.`);
        throw protocolError(this.api, hap.HDSProtocolSpecificErrorReason.UNEXPECTED_FAILURE);
      }
      throw error;
    } finally {
      signal?.removeEventListener('abort', abort);
      recording?.close();
      this.current = undefined;
      this.sent();
    }
  }

  acknowledgeStream(): void {
    // The hub has the whole clip; nothing left to do (the trigger went off when the last part left).
  }

  closeRecordingStream(): void {
    // The hub closed the stream (or its connection dropped): ffmpeg ends now, not at its next write.
    this.current?.abort();
  }

  // ---- the trigger ----

  private sent(): void {
    this.trigger(false);
    // A recording that arrived while this one was being sent gets its own announcement.
    if (this.ready) {
      this.triggerTimer = setTimeout(() => {
        if (this.ready && !this.current) this.trigger(true);
      }, RETRIGGER_MS);
    }
  }

  private trigger(on: boolean): void {
    const { Service: S, Characteristic: C } = this.api.hap;
    clearTimeout(this.triggerTimer);
    this.triggerTimer = undefined;
    const sensor = this.accessory.getServiceById(S.MotionSensor, RECORDING_SUBTYPE);
    sensor?.updateCharacteristic(C.MotionDetected, on);
    if (!on) return;
    this.triggerTimer = setTimeout(() => {
      // Not fetched within the motion timeout: the hub will not come for it any more.
      this.ready = undefined;
      this.triggerTimer = undefined;
      sensor?.updateCharacteristic(C.MotionDetected, false);
    }, this.device.motionWindowMs);
  }
}

/**
 * HAP's error that ends a recording stream with a reason and no stack trace in the log. HAP-NodeJS
 * 0.14 (Homebridge 1) is compiled to ES5, where a subclass of Error loses its prototype, so HAP would
 * not recognise its own error and log it as unexpected: the prototype is put back.
 */
function protocolError(api: API, reason: HDSProtocolSpecificErrorReason): Error {
  const { HDSProtocolError } = api.hap;
  const error = new HDSProtocolError(reason);
  if (!(error instanceof HDSProtocolError)) Object.setPrototypeOf(error, HDSProtocolError.prototype);
  return error;
}
