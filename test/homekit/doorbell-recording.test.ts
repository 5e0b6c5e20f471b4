// HomeKit Secure Video on the doorbell camera, on HAP's own objects: the recording services and the
// trigger sensor exist exactly when Secure Video is on and ffmpeg works; a new recording turns the
// trigger on until the motion timeout; a request without a clip, or whose lookup fails, ends with
// HAP's protocol error (no stack trace in the log); the hub's choices that HAP saved come back after
// a restart on both HAP versions (Homebridge 1 too). The clip itself is sent in the e2e test
// (test/e2e/secure-video.test.ts) through a real ffmpeg and a hub-side Data Stream client.
import type { API, CameraController, CameraRecordingConfiguration, PlatformAccessory } from 'homebridge';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { doorbellUuid } from '../../src/homekit/doorbell-accessory.js';
import { RECORDING_SUBTYPE, recordingFormat } from '../../src/homekit/doorbell-recording.js';
import type { DoorbellDevice } from '../../src/model/doorbell-device.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { selectedRecordingConfiguration } from '../harness/data-stream.js';
import { HUB_720P } from '../harness/secure-video-hub.js';
import { captureLog, hapEnvs, hasService, newAccessory, service } from './hap-env.js';
import { restartServed, serveDoorbell } from './serve-device.js';
import { noMedia, testFfmpeg } from '../video/ffmpeg-binary.js';

const NOW = 1_700_000_000_000;
const fresh = { receivedAt: NOW, signedAt: NOW };
/** The ffmpeg the room checks: the test's own (usable), or none at that path. */
const usable = testFfmpeg();
const missing = '/nonexistent/ffmpeg';

interface Recorder {
  handleRecordingStreamRequest(streamId: number): AsyncGenerator;
  updateRecordingConfiguration(configuration: CameraRecordingConfiguration | undefined): void;
  updateRecordingActive(active: boolean): void;
}

/** HAP's camera controller, with the two calls its controller storage makes across a restart. */
type SavingController = CameraController & { serialize(): unknown; deserialize(saved: unknown): void };

function cameraController(accessory: PlatformAccessory): SavingController {
  const controller = (accessory._associatedHAPAccessory as unknown as { activeCameraController?: SavingController }).activeCameraController;
  if (!controller) throw new Error('no camera controller');
  return controller;
}

function recorderOf(accessory: PlatformAccessory): Recorder {
  const delegate = cameraController(accessory).recordingManagement?.delegate;
  if (!delegate) throw new Error('no recording delegate');
  return delegate;
}

describe.each(hapEnvs)('Secure Video on the doorbell camera, $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: DoorbellDevice[] = [];
  afterEach(() => {
    for (const doorbell of made.splice(0)) doorbell.dispose();
    vi.useRealTimers();
  });

  async function setup(options: { secureVideo?: boolean; ffmpegPath?: string; lookup?: (doorbellId: string, dvrId: string) => Promise<string>; motionTimeoutSeconds?: number; accessory?: PlatformAccessory } = {}) {
    const captured = captureLog();
    const video = new VideoRoom({
      config: { replayMinutes: 60, secureVideo: options.secureVideo ?? true, ffmpegPath: options.ffmpegPath ?? usable },
      log: captured.log,
      lookup: options.lookup ?? (() => Promise.reject(new Error('no lookup in this test'))),
      media: noMedia,
    });
    const accessory = options.accessory ?? newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'));
    const doorbell = serveDoorbell({ api, log: captured.log, fetchImage: () => Promise.resolve(Buffer.from('jpeg')), now: () => NOW, video }, accessory, {
      kind: 'doorbell',
      id: 'D1',
      name: 'Front Doorbell',
      motionTimeoutSeconds: options.motionTimeoutSeconds ?? 30,
    });
    made.push(doorbell);
    await video.ready;
    // The camera is set up once the check has been answered (a turn later).
    await new Promise((resolve) => setImmediate(resolve));
    return { accessory, doorbell, captured, video };
  }

  const recordingServices = [S.CameraRecordingManagement, S.CameraOperatingMode, S.DataStreamTransportManagement];

  it('with Secure Video on and ffmpeg working: recording services, and a "Recording" MotionSensor as the camera\'s trigger', async () => {
    const { accessory } = await setup();
    for (const type of recordingServices) expect(hasService(accessory, type)).toBe(true);
    const trigger = service(accessory, S.MotionSensor, RECORDING_SUBTYPE);
    expect(trigger.getCharacteristic(C.Name).value).toBe('Front Doorbell Recording');
    const management = service(accessory, S.CameraRecordingManagement);
    const linked = management.linkedServices;
    expect(linked).toContain(trigger);
    // The doorbell's own Motion keeps its meaning: it is not what the hub records on.
    expect(linked).not.toContain(service(accessory, S.MotionSensor));
    expect(service(accessory, S.MotionSensor).getCharacteristic(C.Name).value).toBe('Front Doorbell Motion');
  });

  it('secureVideo false, or no usable ffmpeg: no recording services and no trigger sensor', async () => {
    for (const options of [{ secureVideo: false }, { ffmpegPath: missing }]) {
      const { accessory } = await setup(options);
      for (const type of recordingServices) expect(hasService(accessory, type)).toBe(false);
      expect(hasService(accessory, S.MotionSensor, RECORDING_SUBTYPE)).toBe(false);
      expect(hasService(accessory, S.MotionSensor)).toBe(true);
      for (const doorbell of made.splice(0)) doorbell.dispose();
    }
  });

  it('a new recording turns the trigger on until the motion timeout; a redelivery does nothing; the Motion sensor stays off', async () => {
    const { accessory, doorbell } = await setup({ motionTimeoutSeconds: 20 });
    recorderOf(accessory).updateRecordingActive(true);
    vi.useFakeTimers();
    const trigger = service(accessory, S.MotionSensor, RECORDING_SUBTYPE).getCharacteristic(C.MotionDetected);
    expect(trigger.value).toBe(false);
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-1', cause: 'doorbellPress', startTime: NOW - 10_000 }, fresh);
    expect(trigger.value).toBe(true);
    expect(service(accessory, S.MotionSensor).getCharacteristic(C.MotionDetected).value).toBe(false);
    vi.advanceTimersByTime(19_999);
    expect(trigger.value).toBe(true);
    vi.advanceTimersByTime(1);
    expect(trigger.value).toBe(false);
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-1', cause: 'doorbellPress', startTime: NOW - 10_000 }, fresh);
    expect(trigger.value).toBe(false);
  });

  it('with recording off for the camera in the Home app, a new recording leaves the trigger off', async () => {
    const { accessory, doorbell } = await setup();
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-9', cause: 'motion' }, fresh);
    expect(service(accessory, S.MotionSensor, RECORDING_SUBTYPE).getCharacteristic(C.MotionDetected).value).toBe(false);
  });

  it('the hub asking with no recording ready (a doorbell trigger, say) ends with HAP\'s protocol error and one log line', async () => {
    const { accessory, captured } = await setup();
    const generator = recorderOf(accessory).handleRecordingStreamRequest(1);
    // HAP's own HDSProtocolError, which HAP recognises (instanceof) and closes the stream quietly with,
    // on HAP-NodeJS 0.14 too (compiled to ES5, where a subclass of Error loses its prototype).
    const error: unknown = await generator.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(api.hap.HDSProtocolError);
    expect(error).toMatchObject({ reason: api.hap.HDSProtocolSpecificErrorReason.CANCELLED });
    expect(captured.text('info')).toContain('the home hub asked for a Secure Video clip, but no recording is ready yet; nothing is sent.');
  });

  it('a lookup that fails ends the recording with a warning that names no address, and the trigger goes off', async () => {
    const { accessory, doorbell, captured } = await setup({ lookup: () => Promise.reject(new Error('GET https://api.example.com/doorbells/D1/videoevent?dvrID=dvr-2&sig=SECRET answered 404')) });
    const recorder = recorderOf(accessory);
    recorder.updateRecordingConfiguration(selected(api));
    recorder.updateRecordingActive(true);
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-2', cause: 'motion' }, fresh);
    const trigger = service(accessory, S.MotionSensor, RECORDING_SUBTYPE).getCharacteristic(C.MotionDetected);
    expect(trigger.value).toBe(true);
    const error: unknown = await recorder.handleRecordingStreamRequest(1).next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(api.hap.HDSProtocolError);
    expect(error).toMatchObject({ reason: api.hap.HDSProtocolSpecificErrorReason.UNEXPECTED_FAILURE });
    expect(captured.text('warn')).toContain('the Secure Video clip was not sent: the recording could not be looked up (GET https://api.example.com answered 404).');
    expect(captured.text()).not.toContain('SECRET');
    expect(trigger.value).toBe(false);
  });

  it('a recording that becomes available while the hub still fetches the previous one is offered next, however long that send takes', async () => {
    const asked: string[] = [];
    let failSend: (error: Error) => void = () => undefined;
    const lookup = (_doorbellId: string, dvrId: string) => {
      asked.push(dvrId);
      // The first clip's send outlasts the motion window (its lookup is still under way); then it fails.
      return asked.length === 1 ? new Promise<string>((_resolve, reject) => (failSend = reject)) : Promise.reject(new Error('answered 404'));
    };
    const { accessory, doorbell } = await setup({ lookup, motionTimeoutSeconds: 20 });
    const recorder = recorderOf(accessory);
    recorder.updateRecordingConfiguration(selected(api));
    recorder.updateRecordingActive(true);
    vi.useFakeTimers();
    const trigger = service(accessory, S.MotionSensor, RECORDING_SUBTYPE).getCharacteristic(C.MotionDetected);
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-1', cause: 'motion' }, fresh);
    const first = recorder.handleRecordingStreamRequest(1).next().catch((e: unknown) => e);
    await vi.waitFor(() => {
      expect(asked).toEqual(['dvr-1']);
    });
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-2', cause: 'motion' }, { receivedAt: NOW + 5_000, signedAt: NOW + 5_000 });
    vi.advanceTimersByTime(60_000);
    // On until the send ends, and the second recording still waits.
    expect(trigger.value).toBe(true);
    failSend(new Error('answered 503'));
    expect(await first).toBeInstanceOf(api.hap.HDSProtocolError);
    expect(trigger.value).toBe(false);
    // The waiting recording is announced again a moment later, and the hub's next request gets it.
    vi.advanceTimersByTime(1_000);
    expect(trigger.value).toBe(true);
    await recorder.handleRecordingStreamRequest(2).next().catch((e: unknown) => e);
    expect(asked).toEqual(['dvr-1', 'dvr-2']);
  });

  it('after a restart HAP hands the hub\'s saved choices back: a new recording turns the trigger on and the hub\'s request gets the clip, with no set-up again', async () => {
    const asked: string[] = [];
    const lookup = (_doorbellId: string, dvrId: string) => {
      asked.push(dvrId);
      return Promise.reject(new Error('answered 404'));
    };
    const first = await setup({ lookup });
    // The hub's set-up, through HAP's own characteristics as a hub writes them.
    const management = service(first.accessory, S.CameraRecordingManagement);
    management.getCharacteristic(C.SelectedCameraRecordingConfiguration).setValue(selectedRecordingConfiguration(HUB_720P));
    management.getCharacteristic(C.Active).setValue(1);
    const saved = cameraController(first.accessory).serialize();
    first.doorbell.dispose();
    // The restart: the cached accessory, a new doorbell, and the camera given what HAP saved (as its
    // controller storage does once the bridge has loaded it from disk).
    const { accessory, doorbell, captured } = await setup({ lookup, accessory: restartServed(api, first.accessory) });
    cameraController(accessory).deserialize(saved);
    doorbell.apply({ doorbellId: 'D1', at: undefined, kind: 'videoAvailable', dvrId: 'dvr-after', cause: 'motion' }, fresh);
    expect(service(accessory, S.MotionSensor, RECORDING_SUBTYPE).getCharacteristic(C.MotionDetected).value).toBe(true);
    await recorderOf(accessory).handleRecordingStreamRequest(1).next().catch((e: unknown) => e);
    expect(asked).toEqual(['dvr-after']);
    expect(captured.text()).not.toMatch(/has not chosen a recording format/);
  });

  it('the hub\'s selected configuration becomes ffmpeg\'s format; audio only when recording audio is on', () => {
    const format = recordingFormat(api, selected(api), false);
    expect(format).toEqual({ width: 1280, height: 720, fps: 30, bitrateKbps: 2000, profile: 'main', level: '4.0', fragmentMs: 4000 });
    expect(recordingFormat(api, selected(api), true).audio).toEqual({ sampleRate: 24_000, channels: 1, bitrateKbps: 32 });
  });
});

/** A configuration as a hub selects it (HAP parses the hub's TLV into this). */
function selected(api: API): CameraRecordingConfiguration {
  const { hap } = api;
  return {
    prebufferLength: 4000,
    eventTriggerTypes: [hap.EventTriggerOption.MOTION],
    mediaContainerConfiguration: { type: hap.MediaContainerType.FRAGMENTED_MP4, fragmentLength: 4000 },
    videoCodec: { type: hap.VideoCodecType.H264, parameters: { profile: hap.H264Profile.MAIN, level: hap.H264Level.LEVEL4_0, bitRate: 2000, iFrameInterval: 4000 }, resolution: [1280, 720, 30] },
    audioCodec: { type: hap.AudioRecordingCodecType.AAC_LC, audioChannels: 1, bitrateMode: hap.AudioBitrate.VARIABLE, samplerate: hap.AudioRecordingSamplerate.KHZ_24, bitrate: 32 },
  };
}
