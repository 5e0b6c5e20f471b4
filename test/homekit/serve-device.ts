// A device with its HomeKit view on a real HAP accessory, as the accessory registry serves them:
// tests drive the device (apply, command, update) and read HomeKit through the accessory. Disposing
// the device disposes its view first.
import type { PlatformAccessory } from 'homebridge';

import { accessoryStore } from '../../src/homekit/context-store.js';
import type { DeviceDeps } from '../../src/homekit/device-deps.js';
import { DoorbellAccessory } from '../../src/homekit/doorbell-accessory.js';
import { LockAccessory } from '../../src/homekit/lock-accessory.js';
import { DoorbellDevice, type DoorbellEntry } from '../../src/model/doorbell-device.js';
import { LockDevice, type LockEntry } from '../../src/model/lock-device.js';
import { clockWithNow } from '../../src/util/clock.js';

export type LockDeps = Pick<DeviceDeps, 'api' | 'log' | 'operate' | 'describeCommandFailure' | 'doorHistory' | 'now'>;
export type DoorbellDeps = Pick<DeviceDeps, 'api' | 'log' | 'fetchImage' | 'now'>;

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
  const device = new LockDevice({ log, operate: deps.operate, describeCommandFailure: deps.describeCommandFailure, store: accessoryStore(api, accessory, now), clock: clockWithNow(now) }, entry);
  return disposingView(device, new LockAccessory({ api, log, doorHistory: deps.doorHistory, now }, accessory, device));
}

const doorbellViews = new WeakMap<DoorbellDevice, DoorbellAccessory>();

export function serveDoorbell(deps: DoorbellDeps, accessory: PlatformAccessory, entry: DoorbellEntry): DoorbellDevice {
  const { api, log, now } = deps;
  const device = new DoorbellDevice({ log, store: accessoryStore(api, accessory, now), clock: clockWithNow(now) }, entry);
  const view = new DoorbellAccessory({ api, log, fetchImage: deps.fetchImage }, accessory, device);
  doorbellViews.set(device, view);
  return disposingView(device, view);
}

/** The doorbell's HomeKit view: its camera delegate answers Apple Home's snapshot and stream requests. */
export function cameraOf(device: DoorbellDevice): DoorbellAccessory {
  const view = doorbellViews.get(device);
  if (!view) throw new Error(`${device.name} has no HomeKit view`);
  return view;
}
