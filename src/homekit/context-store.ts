// A device's store in its accessory's context, which Homebridge keeps in its accessory cache: state
// is written with the next batched save, a user's choice (chime, auto-lock delay) at once.
import type { API, PlatformAccessory } from 'homebridge';

import type { DeviceStore } from '../model/device-store.js';
import { ContextSaver } from './persist-context.js';

export function accessoryStore(api: API, accessory: PlatformAccessory, now?: () => number): DeviceStore {
  const context = accessory.context as Record<string, unknown>;
  const saver = new ContextSaver(api, accessory, now);
  return {
    read: (key) => context[key],
    write: (key, value, when) => {
      context[key] = value;
      if (when === 'batched') {
        saver.schedule();
        return;
      }
      // Only an accessory Homebridge already serves may be updated: an unregistered one would be added to the cache twice.
      if (accessory._associatedHAPAccessory.bridged) api.updatePlatformAccessories([accessory]);
      else saver.schedule();
    },
    dispose: () => {
      saver.dispose();
    },
  };
}
