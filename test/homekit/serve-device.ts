// A device with its HomeKit view on a real HAP accessory, as the registries serve them: tests drive
// the device (apply, command, update) and read HomeKit through the accessory. Disposing the device
// disposes its view first. What a device keeps lives in a memory store per accessory, carried over
// by restartServed() the way devices.json carries it over a restart.
import type { API, PlatformAccessory } from 'homebridge';

import { DoorbellAccessory } from '../../src/homekit/doorbell-accessory.js';
import type { VideoRoom } from '../../src/video/video-room.js';
import { LockAccessory } from '../../src/homekit/lock-accessory.js';
import type { FetchImage } from '../../src/homekit/snapshot-cache.js';
import { memoryStore, type DeviceStore } from '../../src/model/device-store.js';
import type { DoorbellEntry, LockEntry } from '../../src/model/device-entry.js';
import { DoorbellDevice } from '../../src/model/doorbell-device.js';
import type { LockAction } from '../../src/model/lock-commands.js';
import { LockDevice } from '../../src/model/lock-device.js';
import { clockWithNow } from '../../src/util/clock.js';
import type { Logger } from '../../src/util/logger.js';
import { restart } from './hap-env.js';

export interface LockDeps {
  api: API;
  log: Logger;
  operate: (lockId: string, action: LockAction) => Promise<void>;
  describeCommandFailure: (error: unknown) => string;
  now?: (() => number) | undefined;
}

export interface DoorbellDeps {
  api: API;
  log: Logger;
  fetchImage: FetchImage;
  now?: (() => number) | undefined;
  video?: VideoRoom | undefined;
}

const stores = new WeakMap<PlatformAccessory, DeviceStore>();

/** The values the device served on this accessory keeps (its part of devices.json). */
export function storeOf(accessory: PlatformAccessory): DeviceStore {
  let store = stores.get(accessory);
  if (!store) {
    store = memoryStore();
    stores.set(accessory, store);
  }
  return store;
}

/** A restart: Homebridge's cache gives the accessory back, the device registry its saved values. */
export function restartServed(api: API, accessory: PlatformAccessory): PlatformAccessory {
  const again = restart(api, accessory);
  stores.set(again, storeOf(accessory));
  return again;
}

function disposingView<D extends { dispose(): void }>(device: D, view: { dispose(): void }): D {
  const disposeDevice = device.dispose.bind(device);
  device.dispose = () => {
    view.dispose();
    disposeDevice();
  };
  return device;
}

export function serveLock(deps: LockDeps, accessory: PlatformAccessory, entry: LockEntry): LockDevice {
  const { api, log, now } = deps;
  const device = new LockDevice({ log, operate: deps.operate, describeCommandFailure: deps.describeCommandFailure, store: storeOf(accessory), clock: clockWithNow(now) }, entry);
  return disposingView(device, new LockAccessory({ api, log }, accessory, device));
}

const doorbellViews = new WeakMap<DoorbellDevice, DoorbellAccessory>();

export function serveDoorbell(deps: DoorbellDeps, accessory: PlatformAccessory, entry: DoorbellEntry): DoorbellDevice {
  const { api, log, now } = deps;
  const device = new DoorbellDevice({ log, store: storeOf(accessory), clock: clockWithNow(now) }, entry);
  const view = new DoorbellAccessory({ api, log, fetchImage: deps.fetchImage, ...(deps.video === undefined ? {} : { video: deps.video }) }, accessory, device);
  doorbellViews.set(device, view);
  return disposingView(device, view);
}

/** The doorbell's HomeKit view: its camera delegate answers Apple Home's snapshot and stream requests. */
export function cameraOf(device: DoorbellDevice): DoorbellAccessory['camera'] {
  const view = doorbellViews.get(device);
  if (!view) throw new Error(`${device.name} has no HomeKit view`);
  return view.camera;
}
