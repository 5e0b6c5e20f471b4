// One HomeKit accessory per doorbell, a view of the doorbell device: each of its parts (the model's
// rule, doorbell-parts.ts) bound to services: a camera (doorbell-camera.ts: pictures, and video from
// the recordings) with the Doorbell service primary, so Apple Home rings with a picture; a
// MotionSensor whose still becomes the camera picture; the chime switch. It renders the device's changes and holds no state of its own.
import type { API, CameraController, Categories, PlatformAccessory, Service } from 'homebridge';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { setAccessoryInformation } from './accessory-information.js';
import type { DoorbellChange } from '../model/device-changes.js';
import type { DoorbellDevice } from '../model/doorbell-device.js';
import { doorbellParts, type DoorbellPart } from '../model/doorbell-parts.js';
import { acquireService, findService, keepPrimary, servicesOfType } from './services.js';
import { convergeChimeSwitch, renderChimeSwitch } from './chime-switch.js';
import { SnapshotCache, type FetchImage } from './snapshot-cache.js';
import { DoorbellRecording, RECORDING_SUBTYPE, recordingOptions } from './doorbell-recording.js';
import type { VideoRoom } from '../video/video-room.js';
import { DoorbellCamera } from './doorbell-camera.js';

export { LIVE_VIDEO_REFUSAL } from './doorbell-camera.js';

export interface DoorbellViewDeps {
  api: API;
  log: Logger;
  /** Loads a motion still; deadlines and size limits are the fetcher's job. */
  fetchImage: FetchImage;
  /** Doorbell video (ffmpeg, recordings); without it the camera refuses streams. */
  video?: VideoRoom;
}

export function doorbellUuid(api: API, id: string): string {
  return api.hap.uuid.generate('doorbell:' + id);
}

export function doorbellCategory(api: API): Categories {
  return api.hap.Categories.VIDEO_DOORBELL;
}

export class DoorbellAccessory {
  private readonly snapshots: SnapshotCache;
  /** The camera's pictures and streams (HAP's streaming delegate). */
  readonly camera: DoorbellCamera;
  private controller: CameraController | undefined;
  private readonly unsubscribe: () => void;
  /** HomeKit Secure Video: on in the config and ffmpeg works (known once ffmpeg has been checked). */
  private recording: DoorbellRecording | undefined;
  private setUpDone = false;
  private disposed = false;

  constructor(
    private readonly deps: DoorbellViewDeps,
    private readonly accessory: PlatformAccessory,
    private readonly device: DoorbellDevice,
  ) {
    this.snapshots = new SnapshotCache(deps.fetchImage, (message) => {
      this.device.log.warn(`could not load the motion picture (${message}); Apple Home shows a placeholder.`);
    });
    const lastMotion = device.state.lastMotion;
    if (lastMotion?.imageUrl !== undefined) this.snapshots.restore(lastMotion.imageUrl, lastMotion.fallbackImageUrl);
    this.camera = new DoorbellCamera(deps.api, device, this.snapshots, deps.video, (sessionId) => {
      this.controller?.forceStopStreamingSession(sessionId);
    });
    const video = deps.video;
    // Whether the camera records depends on ffmpeg, checked once start-up's first setup has run:
    // until that is known the cached camera services stay as they are, then the camera is set up once.
    const recordingBefore = device.state.lastVideo?.dvrId;
    if (video?.status().state === 'checking') {
      // The parts that do not depend on ffmpeg are bound at once: HomeKit reads the model's values
      // (the chime) from the start, not the accessory cache's, and a write reaches the model.
      for (const part of doorbellParts(device.name)) if (part.kind !== 'camera') this.bind(part);
      void video.ready
        .catch(() => undefined)
        .then(() => {
          this.setUp(recordingBefore);
        });
    } else this.setUp(recordingBefore);
    this.unsubscribe = device.onChange((change) => {
      this.changed(change);
    });
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe();
    this.camera.dispose();
    this.recording?.dispose();
  }

  /** `recordingBefore`: the newest recording when the view was made (one a hub may have had already). */
  private setUp(recordingBefore?: string): void {
    if (this.disposed || this.setUpDone) return;
    const video = this.deps.video;
    if (video?.settings.secureVideo === true && video.ffmpeg !== undefined) this.recording = new DoorbellRecording(this.deps.api, this.accessory, this.device, video);
    this.converge();
    this.configureCamera();
    this.showMotion(this.device.motion);
    this.setUpDone = true;
    // A recording that became available while ffmpeg was still being checked is offered now, while
    // its motion window lasts, instead of being missed by Secure Video.
    const fresh = this.device.freshRecording;
    if (this.recording && fresh !== undefined && fresh !== recordingBefore) this.recording.recordingAvailable(fresh);
  }

  private changed(change: DoorbellChange): void {
    switch (change.cause) {
      case 'event': {
        const { Service: S, Characteristic: C } = this.deps.api.hap;
        // An event, not a state: sendEventNotification notifies even when the value is unchanged.
        if (change.ring) findService(this.accessory, S.Doorbell)?.getCharacteristic(C.ProgrammableSwitchEvent).sendEventNotification(C.ProgrammableSwitchEvent.SINGLE_PRESS);
        else if (change.motion) this.showMotion(true);
        if (change.recording && change.state.lastVideo) this.recording?.recordingAvailable(change.state.lastVideo.dvrId);
        // Fetching the new still starts a download, which can wait; its retries fit the motion window.
        if (change.snapshot) this.snapshots.setSource(change.snapshot.url, change.snapshot.fallbackUrl, this.device.motionWindowMs);
        return;
      }
      case 'motionEnded':
        this.showMotion(false);
        return;
      case 'chime':
        renderChimeSwitch(this.deps.api, this.accessory, change.on);
        return;
      case 'entry':
        if (this.setUpDone) this.converge();
        return;
    }
  }

  // ---- services ----

  /** Binds each of the doorbell's parts (the model's rule); any service the pass did not bind is removed. */
  private converge(): void {
    const { name } = this.device;
    if (this.accessory.displayName !== name) this.accessory.updateDisplayName(name);
    setAccessoryInformation(this.deps.api, this.accessory, { model: 'Video Doorbell', serial: this.device.entry.id, name });
    const bound = new Set<Service>();
    const information = findService(this.accessory, this.deps.api.hap.Service.AccessoryInformation);
    if (information) bound.add(information);
    for (const part of doorbellParts(name, { recording: this.recording !== undefined })) for (const service of this.bind(part)) bound.add(service);
    for (const service of [...this.accessory.services]) if (!bound.has(service)) this.accessory.removeService(service);
  }

  /** One part's services, created when the cached accessory lacks them, with their handlers. */
  private bind(part: DoorbellPart): Service[] {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    switch (part.kind) {
      case 'button': {
        const doorbell = acquireService(this.accessory, S.Doorbell, part.name);
        keepPrimary(doorbell);
        doorbell.updateCharacteristic(C.Name, part.name);
        return [doorbell];
      }
      case 'camera':
        // The camera controller makes its stream-management services and, as it sends sound, its
        // Microphone (whose Mute the viewer writes) (configureCamera); a cached accessory brings
        // them back before the controller is configured, so they are kept here.
        return [S.CameraRTPStreamManagement, S.Microphone].flatMap((type) => servicesOfType(this.accessory, type));
      case 'motion': {
        const motion = acquireService(this.accessory, S.MotionSensor, part.name);
        motion.updateCharacteristic(C.Name, part.name);
        return [motion];
      }
      case 'chime':
        return [convergeChimeSwitch(this.deps.api, this.accessory, this.device, part.name)];
      case 'recording':
        // Its trigger sensor, and the recording services the camera controller makes (kept as the camera's are).
        if (!this.recording) return [];
        return [
          this.recording.sensor(part.name),
          ...[S.CameraRecordingManagement, S.CameraOperatingMode, S.DataStreamTransportManagement].flatMap((type) => servicesOfType(this.accessory, type)),
        ];
    }
  }

  /**
   * Controllers are not cached by Homebridge, so the camera is configured on every start (HAP restores
   * its stream service from the cache). HAP-NodeJS always creates at least one RTP stream management
   * service (cameraStreamCount 0 is raised to 1), and Apple Home needs one with a supported video
   * configuration to treat the accessory as a camera and ask it for pictures at all. Streams play
   * recordings or the still through ffmpeg (doorbell-camera.ts), or are refused without it. The Doorbell and
   * MotionSensor services are ours (acquired above) and handed to the controller.
   */
  private configureCamera(): void {
    const { hap } = this.deps.api;
    const { Service: S } = hap;
    const doorbell = findService(this.accessory, S.Doorbell);
    const motion = findService(this.accessory, S.MotionSensor);
    if (!doorbell || !motion) return;
    // With Secure Video the recording trigger is the camera's motion sensor, never the doorbell's own
    // Motion: a hub that records on motion would ask for a clip the service has not made yet.
    const trigger = this.recording ? findService(this.accessory, S.MotionSensor, RECORDING_SUBTYPE) : undefined;
    const controller = new hap.DoorbellController({
      // Two viewers at once (two phones, or a phone and a Mac), each with a stream of its own.
      cameraStreamCount: 2,
      delegate: this.camera,
      streamingOptions: {
        supportedCryptoSuites: [hap.SRTPCryptoSuites.AES_CM_128_HMAC_SHA1_80],
        video: {
          // High too: a doorbell's clip is often High profile, and it can only be copied (not encoded again) when the viewer may select it.
          codec: { profiles: [hap.H264Profile.BASELINE, hap.H264Profile.MAIN, hap.H264Profile.HIGH], levels: [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL3_2, hap.H264Level.LEVEL4_0] },
          resolutions: [
            [1280, 720, 30],
            [640, 360, 30],
            [320, 180, 15],
          ],
        },
        // The clip's sound, when it has any: Opus, which HomeKit requires (16 and 24 kHz) and ffmpeg makes.
        audio: { codecs: [{ type: hap.AudioStreamingCodecType.OPUS, samplerate: [hap.AudioStreamingSamplerate.KHZ_16, hap.AudioStreamingSamplerate.KHZ_24] }] },
      },
      externalDoorbellService: doorbell,
      sensors: { motion: trigger ?? motion },
      ...(this.recording && trigger ? { recording: { options: recordingOptions(this.deps.api), delegate: this.recording } } : {}),
    });
    try {
      this.accessory.configureController(controller);
      this.controller = controller;
      this.camera.attach(controller);
      this.recording?.attach(controller);
    } catch (error) {
      // HAP allows one camera per accessory: a second DoorbellAccessory on the same object keeps the first camera.
      this.device.log.warn(`the camera could not be set up (${errorText(error)}).`);
    }
  }

  private showMotion(on: boolean): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    findService(this.accessory, S.MotionSensor)?.updateCharacteristic(C.MotionDetected, on);
  }
}
