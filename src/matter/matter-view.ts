// The Matter view of the device set, made once at start. It publishes only when the bridge runs
// Matter (Homebridge 2 with Matter on for the main or child bridge) and the platform option `matter`
// is not false; otherwise it is a view that shows nothing, and on Homebridge 1.x or a bridge without
// Matter nothing is logged above debug.
import { MatterPublisher } from './matter-publisher.js';
import type { DeviceView } from '../model/device-registry.js';
import { MATTER_OFF_FOR_BRIDGE, matterOf } from './matter-on-bridge.js';
import { MatterRegistry, type MatterRegistryOptions } from './matter-registry.js';

/** A view that shows nothing: Matter is off for this bridge or for the plugin. */
const INERT: DeviceView = {
  synced: () => undefined,
  removed: () => undefined,
  dispose: () => undefined,
};

/**
 * The Matter view: a MatterRegistry when this bridge runs Matter and the plugin wants it, else one
 * that shows nothing. With `"matter": false` the endpoints a
 * previous run published are removed first, so they do not linger without handlers.
 */
export function matterView(options: MatterRegistryOptions): DeviceView {
  const matter = matterOf(options.api);
  if (!matter) {
    options.log.debug(MATTER_OFF_FOR_BRIDGE);
    return INERT;
  }
  if (!options.wanted) {
    const ours = options.cached;
    if (ours.length > 0) {
      void new MatterPublisher({ matter, log: options.log, pluginName: options.pluginName, platformName: options.platformName })
        .unregister([...ours])
        .then(() => {
          options.log.info(`Matter is off for Lock Access ("matter": false): removed ${ours.length} Matter endpoint${ours.length === 1 ? '' : 's'} it had published.`);
        });
    } else {
      options.log.info('Matter is enabled for this bridge, but off for Lock Access ("matter": false).');
    }
    return INERT;
  }
  return new MatterRegistry(options, matter);
}
