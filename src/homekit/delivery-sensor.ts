// The "Lock Access" accessory at the bridge level, with one contact sensor, "Lock Access Events
// Stopped": closed (CONTACT_DETECTED) while events arrive or before anything is known, open while
// they are not arriving, so the Home app can notify the user that Apple Home may show an old state.
// It follows the delivery state it is handed; the accessory registry adds it to the bridge, or
// removes a cached one when it is not wanted.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { DeliveryFeed, DeliveryState } from '../model/delivery-state.js';
import { setAccessoryInformation } from './accessory-information.js';
import { acquireService, keepPrimary } from './services.js';

export const DELIVERY_ACCESSORY_NAME = 'Lock Access';
export const DELIVERY_SENSOR_NAME = 'Lock Access Events Stopped';
export const DELIVERY_SUBTYPE = 'delivery';

/** One per bridge: the UUID comes from a fixed string, so a restart finds the cached accessory. */
export function deliveryAccessoryUuid(api: API): string {
  return api.hap.uuid.generate('lock-access:bridge');
}

export class DeliverySensor {
  private readonly service: Service;
  private unfollow: (() => void) | undefined;

  /**
   * Shows `feed` on `accessory` (new or cached); the accessory registry registers it. Without a feed
   * yet it reads as not known (closed) until follow() hands it one.
   */
  constructor(
    private readonly api: API,
    accessory: PlatformAccessory,
    feed?: DeliveryFeed,
  ) {
    const { Characteristic: C, Service: S } = api.hap;
    setAccessoryInformation(api, accessory, { model: 'Delivery watch', serial: 'lock-access-bridge', name: DELIVERY_ACCESSORY_NAME });
    const service = acquireService(accessory, S.ContactSensor, DELIVERY_SENSOR_NAME, DELIVERY_SUBTYPE);
    keepPrimary(service);
    // Home shows ConfiguredName where it lists services; HAP does not list it as optional here.
    if (!service.optionalCharacteristics.some((template) => template.UUID === C.ConfiguredName.UUID)) service.addOptionalCharacteristic(C.ConfiguredName);
    if (!service.testCharacteristic(C.ConfiguredName)) service.updateCharacteristic(C.ConfiguredName, DELIVERY_SENSOR_NAME);
    service.updateCharacteristic(C.Name, DELIVERY_SENSOR_NAME);
    this.service = service;
    if (feed === undefined) this.render('unknown');
    else this.follow(feed);
  }

  /** Follows `feed` from now on (the delivery watch, made after the accessory). */
  follow(feed: DeliveryFeed): void {
    this.unfollow?.();
    this.render(feed.state);
    this.unfollow = feed.onChange((state) => {
      this.render(state);
    });
  }

  dispose(): void {
    this.unfollow?.();
    this.unfollow = undefined;
  }

  private render(state: DeliveryState): void {
    const { Characteristic: C } = this.api.hap;
    this.service.updateCharacteristic(C.ContactSensorState, state === 'notArriving' ? C.ContactSensorState.CONTACT_NOT_DETECTED : C.ContactSensorState.CONTACT_DETECTED);
  }
}
