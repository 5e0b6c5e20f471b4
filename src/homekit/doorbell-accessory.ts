// One HomeKit accessory per doorbell: a snapshot-only camera with the Doorbell service primary, so
// Apple Home rings with a picture; a MotionSensor whose still becomes the camera picture.
// Others (Matter) follow rings, motion and state through onChange(), after the 60 s age rule.
import type {
  API,
  CameraStreamingDelegate,
  Categories,
  PlatformAccessory,
  PrepareStreamCallback,
  PrepareStreamRequest,
  SnapshotRequest,
  SnapshotRequestCallback,
  StreamingRequest,
  StreamRequestCallback,
} from 'homebridge';

import { errorText } from '../util/error-text.js';
import { setAccessoryInformation } from './accessory-information.js';
import { ChangeListeners, type ChangeListener } from '../model/change-listeners.js';
import type { DoorbellDeps } from './device-deps.js';
import { initialDoorbellState, parseDoorbellState, reduceDoorbell, repairDoorbellMarks, type DoorbellState } from '../model/doorbell-state.js';
import type { DeliveryContext } from '../model/event-time.js';
import type { DoorbellEvent } from '../model/events.js';
import type { DoorbellChange, DoorbellFeed } from '../model/device-feeds.js';
import { ContextSaver } from './persist-context.js';
import { acquireService, findService } from './services.js';
import { ChimeSwitch } from './chime-switch.js';
import { SnapshotCache } from './snapshot-cache.js';

export interface DoorbellAccessoryEntry {
  id: string;
  name: string;
  motionTimeoutSeconds: number;
}

export const DOORBELL_CONTEXT_KEY = 'lockAccessDoorbell';

/**
 * An applied event with what it did now (`ring`, `motion` are false for a late, repeated or older
 * one), or the motion timeout ending motion.
 */
export type { DoorbellChange } from '../model/device-feeds.js';

export const LIVE_VIDEO_REFUSAL = 'live video is not available for this doorbell; Apple Home shows the latest motion still instead';

export function doorbellUuid(api: API, id: string): string {
  return api.hap.uuid.generate('doorbell:' + id);
}

export function doorbellCategory(api: API): Categories {
  return api.hap.Categories.VIDEO_DOORBELL;
}

export class DoorbellAccessory implements CameraStreamingDelegate, DoorbellFeed {
  private current: DoorbellState;
  private entry: DoorbellAccessoryEntry;
  private readonly saver: ContextSaver;
  private readonly snapshots: SnapshotCache;
  private readonly changes: ChangeListeners<DoorbellChange>;
  private readonly chime: ChimeSwitch;
  private motionTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    private readonly deps: DoorbellDeps,
    private readonly accessory: PlatformAccessory,
    entry: DoorbellAccessoryEntry,
  ) {
    this.entry = { ...entry };
    const stored: unknown = (accessory.context as Record<string, unknown>)[DOORBELL_CONTEXT_KEY];
    const cached = parseDoorbellState(stored);
    if (stored !== undefined && !cached) deps.log.warn(`${entry.name}: the saved state could not be read, so it starts fresh.`);
    this.current = cached === undefined ? initialDoorbellState() : repairDoorbellMarks(cached, (deps.now ?? Date.now)());
    this.saver = new ContextSaver(deps.api, accessory);
    this.changes = new ChangeListeners(deps.log, () => this.entry.name);
    this.chime = new ChimeSwitch(deps.api, accessory, deps.log);
    this.snapshots = new SnapshotCache(deps.fetchImage, (message) => {
      this.deps.log.warn(`${this.entry.name}: could not load the motion picture (${message}); Apple Home shows a placeholder.`);
    });
    const lastImage = this.current.lastMotion?.imageUrl;
    if (lastImage !== undefined) this.snapshots.restore(lastImage, this.current.lastMotion?.fallbackImageUrl);
    this.converge();
    this.configureCamera();
    // Motion never outlives a restart: its timer is gone.
    findService(accessory, deps.api.hap.Service.MotionSensor)?.updateCharacteristic(deps.api.hap.Characteristic.MotionDetected, false);
    this.store();
  }

  get state(): DoorbellState {
    return this.current;
  }

  apply(event: DoorbellEvent, context: DeliveryContext): void {
    if (this.disposed) return;
    if (event.doorbellId !== this.entry.id) {
      this.deps.log.debug(`${this.entry.name}: ignored an event for another doorbell (${event.doorbellId}).`);
      return;
    }
    const reduced = reduceDoorbell(this.current, event, context);
    this.current = reduced.state;
    // With the chime off a press is recorded but rings nothing (HomeKit or Matter).
    const muted = reduced.ring && !this.chime.on;
    const result = muted ? { ...reduced, ring: false } : reduced;
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    // HomeKit and followers first, then the log line (a synchronous write that can wait on a slow reader).
    // An event, not a state: sendEventNotification notifies even when the value is unchanged.
    if (result.ring) findService(this.accessory, S.Doorbell)?.getCharacteristic(C.ProgrammableSwitchEvent).sendEventNotification(C.ProgrammableSwitchEvent.SINGLE_PRESS);
    else if (result.motion) this.startMotion();
    this.changes.emit({ cause: 'event', state: this.current, event, ring: result.ring, motion: result.motion });
    if (result.ring) {
      this.deps.log.info(`${this.entry.name}: doorbell pressed.`);
    } else if (muted) {
      this.deps.log.info(`${this.entry.name}: doorbell pressed; the chime is off, so no phone or HomePod rings.`);
    } else if (result.motion) {
      this.deps.log.info(`${this.entry.name}: motion detected.`);
    } else if (result.quietReason !== undefined) {
      this.deps.log.info(`${this.entry.name}: ${result.text}, but ${result.quietReason}, so no phone is notified.`);
    } else {
      this.deps.log.info(`${this.entry.name}: ${result.text}.`);
    }
    // After HomeKit has been told: fetching the new still starts a download, which can wait.
    // Retries of a still that fails for a moment fit inside the motion window.
    if (result.snapshotUrl !== undefined) this.snapshots.setSource(result.snapshotUrl, result.snapshotFallbackUrl, this.entry.motionTimeoutSeconds * 1000);
    this.store();
  }

  update(entry: DoorbellAccessoryEntry): void {
    if (this.disposed) return;
    this.entry = { ...entry };
    this.converge();
    this.store();
  }

  /** Follows every applied event and the end of motion; returns the function that stops following. */
  onChange(listener: ChangeListener<DoorbellChange>): () => void {
    return this.changes.add(listener);
  }

  dispose(): void {
    this.disposed = true;
    if (this.motionTimer) clearTimeout(this.motionTimer);
    this.motionTimer = undefined;
    this.changes.clear();
    this.saver.dispose();
  }

  // ---- CameraStreamingDelegate: snapshots only; live streams are refused cleanly ----

  handleSnapshotRequest(_request: SnapshotRequest, callback: SnapshotRequestCallback): void {
    void this.snapshots.get().then((image) => {
      callback(undefined, image);
    });
  }

  prepareStream(_request: PrepareStreamRequest, callback: PrepareStreamCallback): void {
    this.deps.log.info(`${this.entry.name}: ${LIVE_VIDEO_REFUSAL}.`);
    callback(new Error(LIVE_VIDEO_REFUSAL));
  }

  handleStreamRequest(request: StreamingRequest, callback: StreamRequestCallback): void {
    // No stream ever starts, so only a stop (which HAP may send while cleaning up) succeeds.
    if (request.type === this.deps.api.hap.StreamRequestTypes.STOP) callback();
    else callback(new Error(LIVE_VIDEO_REFUSAL));
  }

  // ---- services ----

  private converge(): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const name = this.entry.name;
    if (this.accessory.displayName !== name) this.accessory.updateDisplayName(name);
    setAccessoryInformation(this.deps.api, this.accessory, { model: 'Video Doorbell', serial: this.entry.id, name });
    const doorbell = acquireService(this.accessory, S.Doorbell, name);
    doorbell.setPrimaryService(true);
    doorbell.updateCharacteristic(C.Name, name);
    acquireService(this.accessory, S.MotionSensor, `${name} Motion`).updateCharacteristic(C.Name, `${name} Motion`);
    this.chime.converge(name);
    // The camera controller owns its stream-management service; anything else is no longer valid.
    const wanted = new Set([S.AccessoryInformation.UUID, S.Doorbell.UUID, S.MotionSensor.UUID, S.CameraRTPStreamManagement.UUID, S.Switch.UUID]);
    for (const service of [...this.accessory.services]) {
      if (!wanted.has(service.UUID)) this.accessory.removeService(service);
    }
  }

  /**
   * Controllers are not cached by Homebridge, so the camera is configured on every start (HAP restores
   * its stream service from the cache). HAP-NodeJS always creates at least one RTP stream management
   * service (cameraStreamCount 0 is raised to 1), and Apple Home needs one with a supported video
   * configuration to treat the accessory as a camera and ask it for pictures at all; so the camera
   * offers a plain H.264 configuration and refuses the stream when asked. The Doorbell and
   * MotionSensor services are ours (acquired above) and handed to the controller.
   */
  private configureCamera(): void {
    const { hap } = this.deps.api;
    const { Service: S } = hap;
    const doorbell = findService(this.accessory, S.Doorbell);
    const motion = findService(this.accessory, S.MotionSensor);
    if (!doorbell || !motion) return;
    const controller = new hap.DoorbellController({
      cameraStreamCount: 1,
      delegate: this,
      streamingOptions: {
        supportedCryptoSuites: [hap.SRTPCryptoSuites.AES_CM_128_HMAC_SHA1_80],
        video: {
          codec: { profiles: [hap.H264Profile.BASELINE, hap.H264Profile.MAIN], levels: [hap.H264Level.LEVEL3_1, hap.H264Level.LEVEL4_0] },
          resolutions: [
            [1280, 720, 30],
            [640, 360, 30],
            [320, 180, 15],
          ],
        },
      },
      externalDoorbellService: doorbell,
      sensors: { motion },
    });
    try {
      this.accessory.configureController(controller);
    } catch (error) {
      // HAP allows one camera per accessory: a second DoorbellAccessory on the same object keeps the first camera.
      this.deps.log.warn(`${this.entry.name}: the camera could not be set up (${errorText(error)}).`);
    }
  }

  private startMotion(): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const motion = findService(this.accessory, S.MotionSensor);
    motion?.updateCharacteristic(C.MotionDetected, true);
    // New motion restarts the countdown.
    if (this.motionTimer) clearTimeout(this.motionTimer);
    this.motionTimer = setTimeout(() => {
      this.motionTimer = undefined;
      findService(this.accessory, S.MotionSensor)?.updateCharacteristic(C.MotionDetected, false);
      this.changes.emit({ cause: 'motionEnded', state: this.current });
    }, this.entry.motionTimeoutSeconds * 1000);
    this.motionTimer.unref();
  }

  private store(): void {
    (this.accessory.context as Record<string, unknown>)[DOORBELL_CONTEXT_KEY] = this.current;
    this.saver.schedule();
  }
}
