import { readFile } from 'node:fs/promises';

import type { PlatformAccessory } from 'homebridge';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { doorbellCategory, doorbellUuid, LIVE_VIDEO_REFUSAL } from '../../src/homekit/doorbell-accessory.js';
import type { DoorbellEvent } from '../../src/model/events.js';
import { ImageFetchError } from '../../src/cloud/image-fetch.js';
import { captureLog, hapEnvs, hasService, newAccessory, service } from './hap-env.js';
import { cameraOf, serveDoorbell, type DoorbellDeps , restartServed, storeOf } from './serve-device.js';
import { DOORBELL_STATE_KEY, type DoorbellDevice } from '../../src/model/doorbell-device.js';
import type { DoorbellChange } from '../../src/model/device-changes.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { noMedia } from '../video/ffmpeg-binary.js';

const placeholderBytes = await readFile(new URL('../../src/assets/placeholder.jpg', import.meta.url));
const NOW = 1_700_000_000_000;
const fresh = { receivedAt: NOW, signedAt: NOW };
const press = (dvrId: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'doorbellPress', dvrId });
const motion = (imageUrl: string, at?: number): DoorbellEvent => ({ doorbellId: 'D1', at, kind: 'motion', imageUrl, width: 640, height: 360 });

/** The camera controller HAP itself uses to answer /resource snapshot requests. */
interface HapCamera {
  handleSnapshotRequest(height: number, width: number, accessoryName?: string, reason?: number): Promise<Buffer>;
}
function camera(accessory: PlatformAccessory): HapCamera {
  const controller = (accessory._associatedHAPAccessory as unknown as { activeCameraController?: HapCamera }).activeCameraController;
  if (!controller) throw new Error('no camera controller configured');
  return controller;
}

describe.each(hapEnvs)('DoorbellAccessory on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: DoorbellDevice[] = [];
  afterEach(() => {
    for (const doorbell of made.splice(0)) doorbell.dispose();
    vi.useRealTimers();
  });

  function setup(options: { accessory?: PlatformAccessory; fetchImage?: (url: string) => Promise<Buffer>; motionTimeoutSeconds?: number } = {}) {
    const fetched: string[] = [];
    const captured = captureLog();
    const deps: DoorbellDeps = {
      api,
      log: captured.log,
      fetchImage:
        options.fetchImage ??
        ((url) => {
          fetched.push(url);
          return Promise.resolve(Buffer.from(`image of ${url}`));
        }),
    };
    const accessory = options.accessory ?? newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'));
    const doorbell = serveDoorbell(deps, accessory, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: options.motionTimeoutSeconds ?? 30 });
    made.push(doorbell);
    const rings: unknown[] = [];
    service(accessory, S.Doorbell)
      .getCharacteristic(C.ProgrammableSwitchEvent)
      .on('change', (change: { newValue: unknown }) => rings.push(change.newValue));
    return { accessory, doorbell, fetched, captured, rings };
  }

  describe('a snapshot-only camera with the Doorbell service primary', () => {
    it('UUID is hap.uuid.generate("doorbell:" + id) and the category a video doorbell', () => {
      expect(doorbellUuid(api, 'D1')).toBe(api.hap.uuid.generate('doorbell:D1'));
      expect(doorbellCategory(api)).toBe(api.hap.Categories.VIDEO_DOORBELL);
    });

    it('has Doorbell (primary), MotionSensor, two stream-management services (one per viewer) and a microphone (a recording\'s sound, Opus)', () => {
      const { accessory } = setup();
      expect(service(accessory, S.Doorbell).isPrimaryService).toBe(true);
      expect(hasService(accessory, S.MotionSensor)).toBe(true);
      expect(accessory.services.filter((s) => s.UUID === S.CameraRTPStreamManagement.UUID)).toHaveLength(2);
      // The camera view plays a recording's sound when it has any, so the camera offers audio.
      expect(hasService(accessory, S.Microphone)).toBe(true);
      expect(service(accessory, S.AccessoryInformation).getCharacteristic(C.SerialNumber).value).toBe('D1');
    });

    it('live video is refused cleanly: prepareStream and start answer with an error, stop succeeds', () => {
      const { doorbell } = setup();
      const prepared = vi.fn();
      cameraOf(doorbell).prepareStream({} as never, prepared);
      expect(prepared).toHaveBeenCalledWith(expect.objectContaining({ message: LIVE_VIDEO_REFUSAL }));
      const started = vi.fn();
      cameraOf(doorbell).handleStreamRequest({ type: api.hap.StreamRequestTypes.START } as never, started);
      expect(started).toHaveBeenCalledWith(expect.any(Error));
      const stopped = vi.fn();
      cameraOf(doorbell).handleStreamRequest({ type: api.hap.StreamRequestTypes.STOP, sessionID: 'x' } as never, stopped);
      expect(stopped).toHaveBeenCalledWith();
    });
  });

  describe('doorbell buttonpush rings', () => {
    it('a press sends one ProgrammableSwitchEvent SINGLE_PRESS event', () => {
      const { doorbell, rings } = setup();
      doorbell.apply(press('dvr-1'), fresh);
      expect(rings).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS]);
      doorbell.apply(press('dvr-2'), fresh);
      expect(rings).toHaveLength(2);
    });

    it('"late or duplicate presses ring nothing" and the log says why', () => {
      const { doorbell, rings, captured } = setup();
      doorbell.apply(press('dvr-1'), fresh);
      doorbell.apply(press('dvr-1'), fresh);
      doorbell.apply(press('dvr-2'), { receivedAt: NOW, signedAt: NOW - 61_000 });
      expect(rings).toHaveLength(1);
      expect(doorbell.state.lastPress).toMatchObject({ dvrId: 'dvr-2', rang: false });
      expect(captured.text('info')).toMatch(/more than 60 seconds late, so no phone is notified/);
    });
  });

  describe('motion turns the MotionSensor on and back off', () => {
    it('MotionDetected true on motion, false after motionTimeoutSeconds, the timer reset by new motion', () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { doorbell, accessory } = setup({ motionTimeoutSeconds: 10 });
      const detected = () => service(accessory, S.MotionSensor).getCharacteristic(C.MotionDetected).value;
      expect(detected()).toBe(false);
      doorbell.apply(motion('http://127.0.0.1/1.jpg'), fresh);
      expect(detected()).toBe(true);
      vi.advanceTimersByTime(8_000);
      doorbell.apply(motion('http://127.0.0.1/2.jpg'), fresh);
      vi.advanceTimersByTime(8_000);
      expect(detected()).toBe(true);
      vi.advanceTimersByTime(2_001);
      expect(detected()).toBe(false);
    });

    it('a late motion is recorded but does not turn the sensor on', () => {
      const { doorbell, accessory } = setup();
      doorbell.apply(motion('http://127.0.0.1/1.jpg', NOW - 120_000), fresh);
      expect(service(accessory, S.MotionSensor).getCharacteristic(C.MotionDetected).value).toBe(false);
      expect(doorbell.state.lastMotion?.imageUrl).toBe('http://127.0.0.1/1.jpg');
    });
  });

  describe('the still image becomes the camera snapshot', () => {
    it('before any motion the snapshot is the bundled placeholder', async () => {
      const { accessory } = setup();
      expect((await camera(accessory).handleSnapshotRequest(360, 640, 'test', 1)).equals(placeholderBytes)).toBe(true);
    });

    it('after motion the snapshot is the motion still; concurrent requests share one fetch', async () => {
      let release: (() => void) | undefined;
      const fetched: string[] = [];
      const { doorbell, accessory } = setup({
        fetchImage: async (url) => {
          fetched.push(url);
          await new Promise<void>((resolve) => (release = resolve));
          return Buffer.from('still');
        },
      });
      doorbell.apply(motion('http://127.0.0.1/still.jpg'), fresh);
      const requests = [1, 2, 3].map(() => camera(accessory).handleSnapshotRequest(360, 640, 'test', 1));
      release?.();
      const images = await Promise.all(requests);
      expect(fetched).toEqual(['http://127.0.0.1/still.jpg']);
      expect(images.map((image) => image.toString())).toEqual(['still', 'still', 'still']);
    });

    it('a failed fetch falls back to the placeholder and the log says so', async () => {
      const { doorbell, accessory, captured } = setup({ fetchImage: () => Promise.reject(new ImageFetchError('the image server answered 404', false)) });
      doorbell.apply(motion('http://127.0.0.1/gone.jpg'), fresh);
      expect((await camera(accessory).handleSnapshotRequest(360, 640)).equals(placeholderBytes)).toBe(true);
      expect(captured.text('warn')).toMatch(/could not load the motion picture \(the image server answered 404\)/);
    });
  });

  describe('state and services survive a restart', () => {
    it('the last still is the snapshot again (fetched only when asked), motion is off, services are not doubled', async () => {
      const first = setup();
      first.doorbell.apply(press('dvr-1'), fresh);
      first.doorbell.apply(motion('http://127.0.0.1/last.jpg'), fresh);
      await camera(first.accessory).handleSnapshotRequest(360, 640);
      first.doorbell.dispose();
      const again = setup({ accessory: restartServed(api, first.accessory) });
      expect(again.doorbell.state.lastPress?.dvrId).toBe('dvr-1');
      expect(again.accessory.services.filter((s) => s.UUID === S.CameraRTPStreamManagement.UUID)).toHaveLength(2);
      expect(again.accessory.services.filter((s) => s.UUID === S.Doorbell.UUID)).toHaveLength(1);
      expect(service(again.accessory, S.MotionSensor).getCharacteristic(C.MotionDetected).value).toBe(false);
      expect(again.fetched).toEqual([]);
      expect((await camera(again.accessory).handleSnapshotRequest(360, 640)).toString()).toBe('image of http://127.0.0.1/last.jpg');
      // the same press delivered again after the restart still rings nothing
      again.doorbell.apply(press('dvr-1'), fresh);
      expect(again.rings).toEqual([]);
    });

    it('a cached service no part binds (an older version\'s) is removed; the parts\' services stay', () => {
      const first = setup();
      first.accessory.addService(new S.Switch('Old Switch', 'old'));
      first.accessory.addService(new S.Lightbulb('Old Light'));
      first.doorbell.dispose();
      const again = setup({ accessory: restartServed(api, first.accessory) });
      expect(hasService(again.accessory, S.Switch, 'old')).toBe(false);
      expect(hasService(again.accessory, S.Lightbulb)).toBe(false);
      expect(again.accessory.services.map((s) => [s.UUID, s.subtype ?? '']).sort()).toEqual(
        [
          [S.AccessoryInformation.UUID, ''],
          [S.Doorbell.UUID, ''],
          ...again.accessory.services.filter((s) => s.UUID === S.CameraRTPStreamManagement.UUID).map((s) => [s.UUID, s.subtype ?? '']),
          // The camera's Microphone (HAP makes it for a camera with sound; Apple Home mutes it): kept.
          [S.Microphone.UUID, ''],
          [S.MotionSensor.UUID, ''],
          [S.Switch.UUID, 'chime'],
        ].sort(),
      );
      expect(service(again.accessory, S.Switch, 'chime').getCharacteristic(C.Name).value).toBe('Front Doorbell Chime');
    });

    it('while ffmpeg is still being checked, the chime switch already shows the saved chime (not the cache\'s) and a write reaches the doorbell', async () => {
      const first = setup();
      first.doorbell.setChime(false);
      first.doorbell.dispose();
      const cached = restartServed(api, first.accessory);
      // What Homebridge's cache holds from before the switch was turned off.
      service(cached, S.Switch, 'chime').getCharacteristic(C.On).value = true;
      let checked: (value: undefined) => void = () => undefined;
      // The check waits for this, as for the calls to the service at start.
      const checkAfter = new Promise<undefined>((resolve) => (checked = resolve));
      const video = new VideoRoom({ config: { replayMinutes: 60, secureVideo: true, ffmpegPath: '/nonexistent/ffmpeg' }, log: captureLog().log, lookup: () => Promise.resolve(''), media: noMedia, checkAfter });
      const doorbell = serveDoorbell({ api, log: captureLog().log, fetchImage: () => Promise.resolve(placeholderBytes), video }, cached, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
      made.push(doorbell);
      expect(video.status().state).toBe('checking');
      const chime = service(cached, S.Switch, 'chime').getCharacteristic(C.On);
      expect(chime.value).toBe(false);
      await chime.handleSetRequest(true);
      expect(doorbell.chimeOn).toBe(true);
      checked(undefined);
      await video.ready;
    });

    it('a restart whose services are unchanged asks HomeKit for no new configuration when the ffmpeg check ends', async () => {
      // Each configuration change makes HAP serialize and hash the whole bridge a second later: on a
      // start with 20 doorbells that was a second pass over every accessory, for nothing.
      const first = setup();
      first.doorbell.dispose();
      const cached = restartServed(api, first.accessory);
      let checked: (value: undefined) => void = () => undefined;
      const checkAfter = new Promise<undefined>((resolve) => (checked = resolve));
      const video = new VideoRoom({ config: { replayMinutes: 60, secureVideo: true, ffmpegPath: '/nonexistent/ffmpeg' }, log: captureLog().log, lookup: () => Promise.resolve(''), media: noMedia, checkAfter });
      const doorbell = serveDoorbell({ api, log: captureLog().log, fetchImage: () => Promise.resolve(placeholderBytes), video }, cached, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
      made.push(doorbell);
      const hapAccessory = cached._associatedHAPAccessory as unknown as { enqueueConfigurationUpdate(): void };
      const updates = vi.spyOn(hapAccessory, 'enqueueConfigurationUpdate');
      checked(undefined);
      await video.ready;
      // The set-up that follows the check runs on the answer's continuation: let it run.
      await new Promise((resolve) => setImmediate(resolve));
      expect(video.status().state).toBe('unavailable');
      expect(service(cached, S.Doorbell).isPrimaryService).toBe(true);
      expect(updates).not.toHaveBeenCalled();
    });

    it('a second DoorbellAccessory on the same accessory object never crashes (HAP allows one camera)', () => {
      const first = setup();
      const second = setup({ accessory: first.accessory });
      expect(second.captured.text('warn')).toMatch(/camera could not be set up/);
      expect(first.accessory.services.filter((s) => s.UUID === S.CameraRTPStreamManagement.UUID)).toHaveLength(2);
    });

    it('a bad context starts fresh', () => {
      const accessory = newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'));
      storeOf(accessory).write(DOORBELL_STATE_KEY, { version: 1, lastPress: 'yesterday' }, 'now');
      const { doorbell, captured } = setup({ accessory });
      expect(doorbell.state.lastPress).toBeNull();
      expect(captured.text('warn')).toMatch(/starts fresh/);
    });
  });

  describe('other publishers follow rings, motion and state after the 60 s rule', () => {
    it('a press that rings is a change with ring true; a repeated or late one is a change with ring false', () => {
      const { doorbell } = setup();
      const changes: DoorbellChange[] = [];
      doorbell.onChange((change) => changes.push(change));
      doorbell.apply(press('dvr-1'), fresh);
      doorbell.apply(press('dvr-1'), fresh);
      doorbell.apply(press('dvr-2'), { receivedAt: NOW, signedAt: NOW - 61_000 });
      expect(changes.map((c) => (c.cause === 'event' ? [c.event.kind, c.ring, c.motion] : [c.cause]))).toEqual([
        ['doorbellPress', true, false],
        ['doorbellPress', false, false],
        ['doorbellPress', false, false],
      ]);
      expect(changes.at(-1)?.state).toBe(doorbell.state);
    });

    it('motion is a change with motion true, and its end after motionTimeoutSeconds is one too', () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { doorbell } = setup({ motionTimeoutSeconds: 10 });
      const changes: DoorbellChange[] = [];
      const stop = doorbell.onChange((change) => changes.push(change));
      doorbell.apply(motion('http://127.0.0.1/1.jpg'), fresh);
      doorbell.apply(motion('http://127.0.0.1/2.jpg', NOW - 120_000), fresh);
      expect(changes.map((c) => (c.cause === 'event' ? c.motion : c.cause))).toEqual([true, false]);
      vi.advanceTimersByTime(10_000);
      expect(changes.map((c) => c.cause)).toEqual(['event', 'event', 'motionEnded']);
      stop();
      doorbell.apply(motion('http://127.0.0.1/3.jpg'), fresh);
      expect(changes).toHaveLength(3);
    });

    it('a follower that throws is logged and the phone still rings', () => {
      const { doorbell, rings, captured } = setup();
      doorbell.onChange(() => {
        throw new Error('endpoint gone');
      });
      doorbell.apply(press('dvr-1'), fresh);
      expect(rings).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS]);
      expect(captured.text('error')).toMatch(/Front Doorbell: a follower of its state failed \(endpoint gone\)/);
    });
  });
});
