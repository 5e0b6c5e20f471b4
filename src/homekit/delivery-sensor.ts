// The "Lock Access" accessory at the bridge level, with one contact sensor, "Lock Access Events
// Stopped": closed (CONTACT_DETECTED) while events arrive or before anything is known, open while
// they are not arriving, so the Home app can notify the user that Apple Home may show an old state.
// It follows the delivery state it is handed; without one it is left out, and a cached one removed.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { DeliveryFeed, DeliveryState } from '../model/delivery-state.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { setAccessoryInformation } from './accessory-information.js';
import { acquireService } from './services.js';

export const DELIVERY_ACCESSORY_NAME = 'Lock Access';
export const DELIVERY_SENSOR_NAME = 'Lock Access Events Stopped';
export const DELIVERY_SUBTYPE = 'delivery';

/** One per bridge: the UUID comes from a fixed string, so a restart finds the cached accessory. */
export function deliveryAccessoryUuid(api: API): string {
  return api.hap.uuid.generate('lock-access:bridge');
}

export interface DeliverySensorOptions {
  api: API;
  log: Logger;
  pluginName: string;
  platformName: string;
  /** The accessory cached from the last run, if any. */
  cached: PlatformAccessory | undefined;
  /** The delivery state to show; undefined leaves the sensor out. */
  feed: DeliveryFeed | undefined;
}

export class DeliverySensor {
  private readonly unfollow: () => void;

  private constructor(
    private readonly api: API,
    private readonly service: Service,
    feed: DeliveryFeed,
  ) {
    this.render(feed.state);
    this.unfollow = feed.onChange((state) => {
      this.render(state);
    });
  }

  /** Serves the sensor (registering the accessory when it is new), or removes a cached one when it is not wanted. */
  static attach(options: DeliverySensorOptions): DeliverySensor | undefined {
    const { api, log, pluginName, platformName, cached, feed } = options;
    if (feed === undefined) {
      if (cached !== undefined) {
        api.unregisterPlatformAccessories(pluginName, platformName, [cached]);
        log.info(`Removed the "${DELIVERY_SENSOR_NAME}" sensor from HomeKit (webhook.deliverySensor is off, or the delivery check is).`);
      }
      return undefined;
    }
    const { Categories, Characteristic: C, Service: S } = api.hap;
    const accessory = cached ?? new api.platformAccessory(DELIVERY_ACCESSORY_NAME, deliveryAccessoryUuid(api), Categories.SENSOR);
    setAccessoryInformation(api, accessory, { model: 'Delivery watch', serial: 'lock-access-bridge', name: DELIVERY_ACCESSORY_NAME });
    const service = acquireService(accessory, S.ContactSensor, DELIVERY_SENSOR_NAME, DELIVERY_SUBTYPE);
    service.setPrimaryService(true);
    // Home shows ConfiguredName where it lists services; HAP does not list it as optional here.
    if (!service.optionalCharacteristics.some((template) => template.UUID === C.ConfiguredName.UUID)) service.addOptionalCharacteristic(C.ConfiguredName);
    if (!service.testCharacteristic(C.ConfiguredName)) service.updateCharacteristic(C.ConfiguredName, DELIVERY_SENSOR_NAME);
    service.updateCharacteristic(C.Name, DELIVERY_SENSOR_NAME);
    const sensor = new DeliverySensor(api, service, feed);
    if (cached === undefined) {
      try {
        api.registerPlatformAccessories(pluginName, platformName, [accessory]);
      } catch (error) {
        // A full bridge (149 accessories) refuses it; Homebridge had cached it before HAP threw, so
        // it is taken out again (a restart would otherwise restore it unbridged). The log, the
        // status file and the settings page still tell.
        try {
          api.unregisterPlatformAccessories(pluginName, platformName, [accessory]);
        } catch {
          // it was never bridged: nothing more to undo
        }
        log.warn(`The "${DELIVERY_SENSOR_NAME}" sensor could not be added to HomeKit (${errorText(error)}); the log and the plugin settings still say when events stop arriving.`);
      }
    }
    return sensor;
  }

  dispose(): void {
    this.unfollow();
  }

  private render(state: DeliveryState): void {
    const { Characteristic: C } = this.api.hap;
    this.service.updateCharacteristic(C.ContactSensorState, state === 'notArriving' ? C.ContactSensorState.CONTACT_NOT_DETECTED : C.ContactSensorState.CONTACT_DETECTED);
  }
}
