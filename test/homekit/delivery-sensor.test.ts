// "Lock Access Events Stopped" on real HAP objects of Homebridge 1 and 2: a bridge-level accessory
// "Lock Access" with one contact sensor (subtype `delivery`) that follows the delivery state, kept
// across a restart, and removed when webhook.deliverySensor is off.
import type { PlatformAccessory } from 'homebridge';
import { describe, expect, it } from 'vitest';

import { DELIVERY_ACCESSORY_NAME, DELIVERY_SENSOR_NAME, DELIVERY_SUBTYPE, DeliverySensor, deliveryAccessoryUuid } from '../../src/homekit/delivery-sensor.js';
import type { DeliveryFeed, DeliveryState } from '../../src/model/delivery-state.js';
import { captureLog, hapEnvs, restart, service } from './hap-env.js';

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
  const unregistered: PlatformAccessory[] = [];
  const fakeApi = Object.create(api) as typeof api;
  fakeApi.registerPlatformAccessories = (_plugin, _platform, accessories) => {
    registered.push(...accessories);
  };
  fakeApi.unregisterPlatformAccessories = (_plugin, _platform, accessories) => {
    unregistered.push(...accessories);
  };
  const attach = (state: DeliveryFeed | undefined, cached?: PlatformAccessory) =>
    DeliverySensor.attach({ api: fakeApi, log: captureLog().log, pluginName: 'homebridge-lock-access', platformName: 'LockAccess', cached, feed: state });
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
    sensor?.dispose();
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
    sensor?.dispose();
    state.set('notArriving');
    expect(contact(accessory)).toBe(0);
  });

  it('a restart adopts the cached accessory: nothing registered twice, one sensor, the current state shown', () => {
    registered.length = 0;
    attach(feed('unknown'))?.dispose();
    const cached = restart(api, registered[0] as PlatformAccessory);
    registered.length = 0;
    const sensor = attach(feed('notArriving'), cached);
    expect(registered).toEqual([]);
    expect(cached.services.filter((s) => s.UUID === S.ContactSensor.UUID)).toHaveLength(1);
    expect(contact(cached)).toBe(1);
    sensor?.dispose();
  });

  it('a full bridge refuses it: one warning that the log and the settings page still tell, and it is taken out of Homebridge\'s cache again', () => {
    unregistered.length = 0;
    const fullApi = Object.create(fakeApi) as typeof api;
    fullApi.registerPlatformAccessories = () => {
      throw new Error('Cannot add Accessory: the bridge already has more than 149 Accessories');
    };
    const captured = captureLog();
    const sensor = DeliverySensor.attach({ api: fullApi, log: captured.log, pluginName: 'homebridge-lock-access', platformName: 'LockAccess', cached: undefined, feed: feed('unknown') });
    expect(captured.text('warn')).toMatch(/"Lock Access Events Stopped" sensor could not be added to HomeKit \(.*149.*\); the log and the plugin settings still say when events stop arriving/);
    expect(unregistered.map((a) => a.UUID)).toEqual([deliveryAccessoryUuid(api)]);
    sensor?.dispose();
  });

  it('webhook.deliverySensor false leaves it out, and removes a cached one', () => {
    registered.length = 0;
    unregistered.length = 0;
    expect(attach(undefined)).toBeUndefined();
    expect(registered).toEqual([]);
    attach(feed('unknown'))?.dispose();
    const cached = restart(api, registered[0] as PlatformAccessory);
    expect(attach(undefined, cached)).toBeUndefined();
    expect(unregistered.map((a) => a.UUID)).toEqual([cached.UUID]);
  });
});
