// The views stage: everything that follows the device registry attaches to it as an equal (HomeKit's
// accessories, Matter's endpoints, the status file's device list) and the event log follows the
// routed events; then the devices of config and the last run are served at once.
import { imageFetcher } from '../cloud/image-fetch.js';
import { startupDevices } from '../cloud/device-set.js';
import { AccessoryRegistry } from '../homekit/accessory-registry.js';
import type { matterView } from '../matter/matter-view.js';
import type { DeviceView } from '../model/device-registry.js';
import { DeviceStatusView } from '../status/device-status.js';
import { Storage } from '../storage.js';
import { httpAllowedBy } from '../util/fetch-trust.js';
import type { VideoRoom } from '../video/video-room.js';
import type { Link, PluginContext } from './link-stage.js';
import type { Listener } from './listener-stage.js';
import { startVideo } from './video.js';

/** Matter's view maker, loaded only on a bridge that runs Matter. */
export type MatterViews = typeof matterView;

export interface Views {
  /** Doorbell video: the recordings HomeKit's cameras stream, and the ffmpeg they run. */
  readonly video: VideoRoom;
  /** Every accessory of the plugin: the devices' and the delivery sensor's. */
  readonly homekit: AccessoryRegistry;
  /** Matter's endpoints; undefined on a bridge without Matter. */
  readonly matter: DeviceView | undefined;
  readonly status: DeviceStatusView;
}

/**
 * Synchronous on purpose: it runs in the same turn as the listener's start, so no callback is
 * delivered before its device is served.
 */
export function viewsStage(context: PluginContext, link: Link, listener: Listener, matterViews: MatterViews | undefined, videoCheckAfter: Promise<void>): Views {
  const { api, log, config, pluginName, platformName, shutdown } = context;
  const { registry } = listener;
  const video = startVideo(config, log, (doorbellId) => listener.accounts.clientFor('doorbell', doorbellId), link.publisher, Storage.under(api.user.storagePath()), videoCheckAfter);
  // At once: every ffmpeg gets its SIGTERM before Homebridge's own exit can come.
  shutdown.on('halt', () => video.stop());
  const fetchImage = imageFetcher(httpAllowedBy(config.baseUrl));
  const deliverySensor = config.webhook.deliverySensor && config.webhook.deliveryCheckMinutes > 0;
  const homekit = new AccessoryRegistry({ api, log, devices: registry, fetchImage, video, pluginName, platformName, cached: context.cachedAccessories, deliverySensor });
  // Matter shows the same device set as HomeKit, synced after it.
  const matter = matterViews === undefined ? undefined : matterViews({ api, log, registry, cached: context.cachedMatter, wanted: config.matter, pluginName, platformName });
  const status = new DeviceStatusView(registry, link.publisher);
  for (const view of [homekit, matter, status]) if (view !== undefined) registry.attach(view);
  // The event log and the status file's last callbacks follow each routed event.
  listener.router.routed.follow((routed) => {
    link.publisher.record(routed);
  });
  // Serve what we know at once: configured devices plus those cached from the last run.
  const { holdings } = listener.accounts;
  if (holdings === undefined) registry.sync(startupDevices(config, registry.remembered()), !config.discoverDevices);
  else for (const unit of [link.main, ...link.extras]) holdings.report(unit.account.id, startupDevices(unit.account, holdings.remembered(unit.account.id)), !unit.account.discoverDevices);
  return { video, homekit, matter, status };
}
