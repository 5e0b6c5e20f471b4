// HomeKit's view of the device set: one accessory per device of the device registry, and the
// bridge-level "Lock Access" accessory of the delivery sensor. Every accessory of the plugin goes
// through here: adopts cached accessories, creates new ones, gives each device its accessory view,
// and unregisters in one sweep what the registry no longer has. The accessories keep no device
// truth: the registry does.
import type { API, PlatformAccessory } from 'homebridge';

import { DELIVERY_ACCESSORY_NAME, DELIVERY_SENSOR_NAME, DeliverySensor, deliveryAccessoryUuid } from './delivery-sensor.js';
import { DoorbellAccessory, doorbellUuid } from './doorbell-accessory.js';
import { LockAccessory, lockUuid } from './lock-accessory.js';
import type { FetchImage } from './snapshot-cache.js';
import type { VideoRoom } from '../video/video-room.js';
import type { DeliveryFeed } from '../model/delivery-state.js';
import type { DeviceRegistry, DeviceView } from '../model/device-registry.js';
import type { DoorbellDevice } from '../model/doorbell-device.js';
import { LockDevice } from '../model/lock-device.js';
import type { DeviceKind } from '../model/device-entry.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

export interface AccessoryRegistryOptions {
  api: API;
  log: Logger;
  devices: DeviceRegistry;
  /** Loads a doorbell's motion still. */
  fetchImage: FetchImage;
  /** Doorbell video (the camera view's stream); without it the camera refuses streams. */
  video?: VideoRoom;
  pluginName: string;
  platformName: string;
  /** Every accessory Homebridge restored from its cache for this plugin. */
  cached: readonly PlatformAccessory[];
  /**
   * The delivery sensor will be shown (webhook.deliverySensor with the delivery check on): it is made
   * with the devices' first accessories and registered with them, in one call.
   */
  deliverySensor?: boolean;
}

/** A device's accessory view, and the name its accessory was last saved with. */
interface Shown {
  device: LockDevice | DoorbellDevice;
  view: { dispose(): void };
  saved: string;
}

export class AccessoryRegistry implements DeviceView {
  private readonly accessories = new Map<string, PlatformAccessory>();
  /** By accessory UUID. */
  private readonly shown = new Map<string, Shown>();
  /** Accessories the bridge refused (full at 149): their devices run, HomeKit does not show them. */
  private readonly unpublished = new Set<string>();
  /** The delivery sensor, once made (with the first accessories, or when the watch hands its feed). */
  private sensor: DeliverySensor | undefined;

  constructor(private readonly options: AccessoryRegistryOptions) {
    for (const accessory of options.cached) this.accessories.set(accessory.UUID, accessory);
  }

  /**
   * Makes the accessories match the registry's devices: creates or updates an accessory for each
   * and, with `sweep`, unregisters every accessory of this plugin without a device.
   */
  synced(sweep: boolean): void {
    const { devices } = this.options;
    const keep = new Set<string>();
    const created: PlatformAccessory[] = [];
    const changed: PlatformAccessory[] = [];
    for (const device of [...devices.locks(), ...devices.doorbells()]) {
      const result = this.ensure(device);
      keep.add(result.accessory.UUID);
      if (result.created || this.unpublished.has(result.accessory.UUID)) created.push(result.accessory);
      else if (result.changed) changed.push(result.accessory);
    }
    // A device that left the registry takes its view along; its accessory goes with the sweep.
    for (const [uuid, shown] of this.shown) {
      if (!keep.has(uuid)) this.hide(uuid, shown);
    }
    // One call each: Homebridge rewrites its whole accessory cache (and HAP hashes the whole bridge
    // again) per call, so the delivery sensor comes in the devices' call rather than in one of its own.
    const sensor = this.earlySensor();
    this.publish(sensor === undefined ? created : [...created, sensor], changed);
    if (!sweep) return;
    // The bridge-level accessory is the delivery sensor's, not a device's: deliverySensor() decides on it.
    const bridge = deliveryAccessoryUuid(this.options.api);
    const stale = [...this.accessories.values()].filter((accessory) => !keep.has(accessory.UUID) && accessory.UUID !== bridge);
    for (const accessory of stale) this.accessories.delete(accessory.UUID);
    if (stale.length > 0) {
      this.options.api.unregisterPlatformAccessories(this.options.pluginName, this.options.platformName, stale);
      this.options.log.info(`Removed ${stale.length} accessor${stale.length === 1 ? 'y' : 'ies'} no longer wanted: ${stale.map((a) => a.displayName).join(', ')}`);
    }
  }

  /** A device left while running (a lock_user_remove): its accessory goes now. */
  removed(kind: DeviceKind, id: string): void {
    const uuid = this.uuidOf(kind, id);
    const accessory = this.accessories.get(uuid);
    const shown = this.shown.get(uuid);
    if (shown) this.hide(uuid, shown);
    if (!accessory) return;
    this.accessories.delete(uuid);
    this.options.api.unregisterPlatformAccessories(this.options.pluginName, this.options.platformName, [accessory]);
    this.options.log.info(`Removed ${accessory.displayName} (${kind} ${id}) from HomeKit.`);
  }

  /** Shutdown: the views stop following; the accessories stay cached for the next run. */
  dispose(): void {
    for (const shown of this.shown.values()) shown.view.dispose();
    this.shown.clear();
  }

  /**
   * The bridge-level "Lock Access" accessory with the delivery sensor following `feed`, registered
   * when it is new; without a feed (the sensor or the delivery check is off) a cached one goes.
   */
  deliverySensor(feed: DeliveryFeed | undefined): { dispose(): void } {
    const { api, log, pluginName, platformName } = this.options;
    const uuid = deliveryAccessoryUuid(api);
    const cached = this.accessories.get(uuid);
    if (feed === undefined) {
      this.sensor?.dispose();
      this.sensor = undefined;
      if (cached !== undefined) {
        this.accessories.delete(uuid);
        api.unregisterPlatformAccessories(pluginName, platformName, [cached]);
        log.info(`Removed the "${DELIVERY_SENSOR_NAME}" sensor from HomeKit (webhook.deliverySensor is off, or the delivery check is).`);
      }
      return { dispose: () => undefined };
    }
    if (this.sensor !== undefined) {
      const early = this.sensor;
      early.follow(feed);
      return early;
    }
    const accessory = cached ?? new api.platformAccessory(DELIVERY_ACCESSORY_NAME, uuid, api.hap.Categories.SENSOR);
    this.accessories.set(uuid, accessory);
    const sensor = new DeliverySensor(api, accessory, feed);
    this.sensor = sensor;
    // A full bridge refuses it: the log, the status file and the settings page still tell.
    if (cached === undefined) {
      this.register([accessory]);
    }
    return sensor;
  }

  /** The delivery sensor's accessory when it is wanted and not made yet; returned when it is new (to register). */
  private earlySensor(): PlatformAccessory | undefined {
    if (this.options.deliverySensor !== true || this.sensor !== undefined) return undefined;
    const { api } = this.options;
    const uuid = deliveryAccessoryUuid(api);
    const cached = this.accessories.get(uuid);
    const accessory = cached ?? new api.platformAccessory(DELIVERY_ACCESSORY_NAME, uuid, api.hap.Categories.SENSOR);
    this.accessories.set(uuid, accessory);
    this.sensor = new DeliverySensor(api, accessory);
    return cached === undefined ? accessory : undefined;
  }

  /** The accessory of a device (tests, and the status of what HomeKit shows). */
  accessoryOf(kind: DeviceKind, id: string): PlatformAccessory | undefined {
    return this.accessories.get(this.uuidOf(kind, id));
  }

  /** Names of the devices whose accessories the bridge refused: they run, but HomeKit does not show them. */
  notShown(): string[] {
    const bridge = deliveryAccessoryUuid(this.options.api);
    return [...this.unpublished].filter((uuid) => uuid !== bridge).map((uuid) => this.accessories.get(uuid)?.displayName ?? uuid);
  }

  private uuidOf(kind: DeviceKind, id: string): string {
    return kind === 'lock' ? lockUuid(this.options.api, id) : doorbellUuid(this.options.api, id);
  }

  private publish(created: PlatformAccessory[], changed: PlatformAccessory[]): void {
    const { api, log } = this.options;
    if (created.length > 0) {
      const refused = this.register(created);
      const added = created.filter((a) => !refused.includes(a));
      const bridge = deliveryAccessoryUuid(api);
      const devices = added.filter((a) => a.UUID !== bridge);
      if (devices.length > 0) log.info(`Added to HomeKit: ${devices.map((a) => a.displayName).join(', ')}.`);
    }
    if (changed.length > 0) api.updatePlatformAccessories(changed);
  }

  /**
   * Registers new accessories and returns those the bridge refused. A HomeKit bridge holds at most
   * 149 accessories, counting every plugin on it; HAP throws partway through a batch once it is
   * full. Refusal never stops the rest of the start-up (webhooks, the event log): the devices keep
   * running unseen, the log names them and suggests a child bridge, and the next sync tries again.
   */
  private register(created: PlatformAccessory[]): PlatformAccessory[] {
    const { api, log, pluginName, platformName } = this.options;
    try {
      api.registerPlatformAccessories(pluginName, platformName, created);
      for (const accessory of created) this.unpublished.delete(accessory.UUID);
      return [];
    } catch (error) {
      const refused = created.filter((accessory) => !isBridged(accessory));
      const added = created.filter((accessory) => isBridged(accessory));
      // Homebridge had put the refused ones in its cache before HAP threw: take them out again,
      // so a restart does not try to restore them; its removal step then throws for accessories
      // that were never bridged, which is expected here.
      try {
        api.unregisterPlatformAccessories(pluginName, platformName, refused);
      } catch {
        // nothing more to undo
      }
      // Saves Homebridge's accessory cache with the ones that were added (the throw skipped that).
      if (added.length > 0) api.updatePlatformAccessories(added);
      for (const accessory of added) this.unpublished.delete(accessory.UUID);
      const newlyRefused = refused.filter((accessory) => !this.unpublished.has(accessory.UUID));
      for (const accessory of refused) this.unpublished.add(accessory.UUID);
      // The delivery sensor may share the devices' call: it is no device, and says so on its own.
      const bridge = deliveryAccessoryUuid(api);
      const devices = newlyRefused.filter((accessory) => accessory.UUID !== bridge);
      if (devices.length > 0) log.warn(devicesRefused(devices.map((a) => a.displayName).join(', '), error));
      if (devices.length < newlyRefused.length) log.warn(`The "${DELIVERY_SENSOR_NAME}" sensor could not be added to HomeKit (${errorText(error)}); the log and the plugin settings still say when events stop arriving.`);
      return refused;
    }
  }

  private ensure(device: LockDevice | DoorbellDevice): { accessory: PlatformAccessory; created: boolean; changed: boolean } {
    const { api } = this.options;
    const lock = device instanceof LockDevice ? device : undefined;
    const kind: DeviceKind = lock ? 'lock' : 'doorbell';
    const uuid = this.uuidOf(kind, device.entry.id);
    let accessory = this.accessories.get(uuid);
    let created = false;
    if (!accessory) {
      const category = lock ? api.hap.Categories.DOOR_LOCK : api.hap.Categories.VIDEO_DOORBELL;
      accessory = new api.platformAccessory(device.name, uuid, category);
      this.accessories.set(uuid, accessory);
      created = true;
    }
    let shown = this.shown.get(uuid);
    if (shown && shown.device !== device) {
      this.hide(uuid, shown);
      shown = undefined;
    }
    if (!shown) {
      // What Homebridge's cache holds: a new accessory is saved whole when it is registered.
      const saved = accessory.displayName;
      const view = lock ? new LockAccessory({ api, log: this.options.log }, accessory, lock) : new DoorbellAccessory({ api, log: this.options.log, fetchImage: this.options.fetchImage, ...(this.options.video === undefined ? {} : { video: this.options.video }) }, accessory, device as DoorbellDevice);
      shown = { device, view, saved };
      this.shown.set(uuid, shown);
    }
    // Homebridge keeps the name an accessory was cached with: a renamed device's accessory is saved again.
    const changed = shown.saved !== device.name;
    shown.saved = device.name;
    return { accessory, created, changed };
  }

  private hide(uuid: string, shown: Shown): void {
    shown.view.dispose();
    this.shown.delete(uuid);
  }
}

/** Why devices' accessories are not shown, and what to do. */
function devicesRefused(names: string, error: unknown): string {
  return /more than \d+ Accessories/i.test(errorText(error))
    ? `The Homebridge bridge is full (HomeKit allows 149 accessories per bridge, counting every plugin on it), so these are not shown in HomeKit: ${names}. They still get their webhooks and their events (see the event log). To show them, run Lock Access as a child bridge: in the Homebridge UI open Plugins, Lock Access, ⋮, Bridge settings, turn the child bridge on and restart.`
    : `These could not be added to HomeKit (${errorText(error)}): ${names}. They still get their webhooks and their events (see the event log); the plugin tries again at its next sync.`;
}

/** Whether HAP took the accessory onto the bridge (Homebridge's platform accessory wraps HAP's). */
function isBridged(accessory: PlatformAccessory): boolean {
  const hap = (accessory as unknown as { _associatedHAPAccessory?: { bridged?: boolean } })._associatedHAPAccessory;
  return hap?.bridged === true;
}
