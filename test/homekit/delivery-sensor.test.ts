// "Lock Access Events Stopped" on real HAP objects of Homebridge 1 and 2: a bridge-level accessory
// "Lock Access" with one contact sensor (subtype `delivery`) that follows the delivery state, kept
// across a restart, and removed when webhook.deliverySensor is off. It goes through the accessory
// registry like every accessory of the plugin, and a sweep of devices leaves it alone.
import type { PlatformAccessory } from 'homebridge';
import { describe, expect, it } from 'vitest';

import type { API } from 'homebridge';

import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { AccessoryRegistry } from '../../src/homekit/accessory-registry.js';
import { DELIVERY_ACCESSORY_NAME, DELIVERY_SENSOR_NAME, DELIVERY_SUBTYPE, deliveryAccessoryUuid } from '../../src/homekit/delivery-sensor.js';
import type { DeliveryFeed, DeliveryState } from '../../src/model/delivery-state.js';
import { DeviceRegistry } from '../../src/model/device-registry.js';
import { systemClock } from '../../src/util/clock.js';
import type { Logger } from '../../src/util/logger.js';
import { memoryRecords } from '../model/memory-records.js';
import { captureLog, hapEnvs, restart, service } from './hap-env.js';

/** The accessory registry of a plugin without devices, on `api`, with `cached` restored by Homebridge. */
function accessories(api: API, log: Logger, cached: PlatformAccessory[] = [], deliverySensor = false) {
  const devices = new DeviceRegistry({ log, clock: systemClock, records: memoryRecords(), operate: () => Promise.resolve(), describeCommandFailure });
  const registry = new AccessoryRegistry({ api, log, devices, fetchImage: () => Promise.reject(new Error('no images in this test')), pluginName: 'homebridge-lock-access', platformName: 'LockAccess', cached, deliverySensor });
  devices.attach(registry);
  return { devices, registry };
}

/** A delivery state that can be changed by hand, as the watch changes it. */
function feed(initial: DeliveryState): DeliveryFeed & { set(state: DeliveryState): void } {
  let state = initial;
  const listeners = new Set<(state: DeliveryState) => void>();
  return {
    get state() {
      return state;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next) {
      state = next;
      for (const listener of listeners) listener(next);
    },
  };
}

describe.each(hapEnvs)('"Lock Access Events Stopped" on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const registered: PlatformAccessory[] = [];
  /** The names of each register call's accessories: Homebridge rewrites its whole cache per call. */
  const calls: string[][] = [];
  const unregistered: PlatformAccessory[] = [];
  const fakeApi = Object.create(api) as typeof api;
  fakeApi.registerPlatformAccessories = (_plugin, _platform, accessories) => {
    registered.push(...accessories);
    calls.push(accessories.map((a) => a.displayName));
  };
  fakeApi.unregisterPlatformAccessories = (_plugin, _platform, accessories) => {
    unregistered.push(...accessories);
  };
  const attach = (state: DeliveryFeed | undefined, cached?: PlatformAccessory) =>
    accessories(fakeApi, captureLog().log, cached === undefined ? [] : [cached]).registry.deliverySensor(state);
  const contact = (accessory: PlatformAccessory) => service(accessory, S.ContactSensor, DELIVERY_SUBTYPE).getCharacteristic(C.ContactSensorState).value;

  it('a bridge-level accessory "Lock Access" (UUID from a fixed string) with one contact sensor, subtype "delivery", named "Lock Access Events Stopped"', () => {
    registered.length = 0;
    const sensor = attach(feed('unknown'));
    expect(registered).toHaveLength(1);
    const accessory = registered[0] as PlatformAccessory;
    expect(accessory.UUID).toBe(api.hap.uuid.generate('lock-access:bridge'));
    expect(accessory.UUID).toBe(deliveryAccessoryUuid(api));
    expect(accessory.displayName).toBe(DELIVERY_ACCESSORY_NAME);
    expect(accessory.category).toBe(api.hap.Categories.SENSOR);
    const contactSensors = accessory.services.filter((s) => s.UUID === S.ContactSensor.UUID);
    expect(contactSensors.map((s) => s.subtype)).toEqual([DELIVERY_SUBTYPE]);
    expect(contactSensors[0]?.getCharacteristic(C.Name).value).toBe(DELIVERY_SENSOR_NAME);
    expect(contactSensors[0]?.getCharacteristic(C.ConfiguredName).value).toBe(DELIVERY_SENSOR_NAME);
    sensor.dispose();
  });

  it('reads CONTACT_DETECTED (0) while not yet known or arriving, CONTACT_NOT_DETECTED (1) while not arriving, and follows each change', () => {
    registered.length = 0;
    const state = feed('unknown');
    const sensor = attach(state);
    const accessory = registered[0] as PlatformAccessory;
    expect(contact(accessory)).toBe(C.ContactSensorState.CONTACT_DETECTED);
    state.set('arriving');
    expect(contact(accessory)).toBe(0);
    state.set('notArriving');
    expect(contact(accessory)).toBe(1);
    state.set('arriving');
    expect(contact(accessory)).toBe(0);
    sensor.dispose();
    state.set('notArriving');
    expect(contact(accessory)).toBe(0);
  });

  it('a restart adopts the cached accessory: nothing registered twice, one sensor, the current state shown', () => {
    registered.length = 0;
    attach(feed('unknown')).dispose();
    const cached = restart(api, registered[0] as PlatformAccessory);
    registered.length = 0;
    const sensor = attach(feed('notArriving'), cached);
    expect(registered).toEqual([]);
    expect(cached.services.filter((s) => s.UUID === S.ContactSensor.UUID)).toHaveLength(1);
    expect(contact(cached)).toBe(1);
    sensor.dispose();
  });

  it('a full bridge refuses it: one warning that the log and the settings page still tell, and it is taken out of Homebridge\'s cache again', () => {
    unregistered.length = 0;
    const fullApi = Object.create(fakeApi) as typeof api;
    fullApi.registerPlatformAccessories = () => {
      throw new Error('Cannot add Accessory: the bridge already has more than 149 Accessories');
    };
    const captured = captureLog();
    const sensor = accessories(fullApi, captured.log).registry.deliverySensor(feed('unknown'));
    expect(captured.text('warn')).toMatch(/"Lock Access Events Stopped" sensor could not be added to HomeKit \(.*149.*\); the log and the plugin settings still say when events stop arriving/);
    expect(unregistered.map((a) => a.UUID)).toEqual([deliveryAccessoryUuid(api)]);
    sensor.dispose();
  });

  it('webhook.deliverySensor false leaves it out, and removes a cached one', () => {
    registered.length = 0;
    unregistered.length = 0;
    attach(undefined).dispose();
    expect(registered).toEqual([]);
    expect(unregistered).toEqual([]);
    attach(feed('unknown')).dispose();
    const cached = restart(api, registered[0] as PlatformAccessory);
    attach(undefined, cached).dispose();
    expect(unregistered.map((a) => a.UUID)).toEqual([cached.UUID]);
  });

  it('when it will be shown, it is registered in the same call as the first devices, and the watch made later registers nothing more', () => {
    calls.length = 0;
    registered.length = 0;
    const captured = captureLog();
    const { devices, registry } = accessories(fakeApi, captured.log, [], true);
    devices.sync([{ kind: 'lock', id: 'A', name: 'Front Door', doorSensor: false }, { kind: 'doorbell', id: 'D', name: 'Porch', motionTimeoutSeconds: 30 }], true);
    expect(calls).toEqual([['Front Door', 'Porch', DELIVERY_ACCESSORY_NAME]]);
    // Only the devices are named as added.
    expect(captured.text()).toMatch(/Added to HomeKit: Front Door, Porch\./);
    const accessory = registered.find((a) => a.UUID === deliveryAccessoryUuid(api)) as PlatformAccessory;
    expect(contact(accessory)).toBe(0);
    const state = feed('notArriving');
    const sensor = registry.deliverySensor(state);
    expect(calls).toHaveLength(1);
    expect(contact(accessory)).toBe(1);
    state.set('arriving');
    expect(contact(accessory)).toBe(0);
    sensor.dispose();
    state.set('notArriving');
    expect(contact(accessory)).toBe(0);
  });

  it('a sweep of the devices keeps the cached sensor: only the delivery sensor decides on it', () => {
    registered.length = 0;
    unregistered.length = 0;
    attach(feed('unknown')).dispose();
    const cached = restart(api, registered[0] as PlatformAccessory);
    const { devices, registry } = accessories(fakeApi, captureLog().log, [cached]);
    devices.sync([], true);
    expect(unregistered).toEqual([]);
    registry.deliverySensor(feed('notArriving')).dispose();
    expect(contact(cached)).toBe(1);
  });
});
