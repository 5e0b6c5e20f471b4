// Owns the platform's accessories: adopts cached ones, creates new ones, converges each to the
// wanted device list, and unregisters in one sweep what is no longer wanted.
import type { API, PlatformAccessory } from 'homebridge';

import type { DeviceDeps } from '../homekit/device-deps.js';
import { DoorbellAccessory, doorbellUuid } from '../homekit/doorbell-accessory.js';
import { LockAccessory, lockUuid } from '../homekit/lock-accessory.js';
import type { Person } from '../model/person-triggers.js';
import type { Logger } from '../util/logger.js';
import type { DevicePublisher } from './device-publisher.js';
import { wantedDeviceSchema, type DeviceKind, type WantedDevice } from './wanted-device.js';

/** Where the registry keeps the wanted device in accessory.context, so a cached accessory can be served before discovery. */
const CONTEXT_KEY = 'lockAccessDevice';

export interface AccessoryRegistryOptions {
  api: API;
  log: Logger;
  deps: DeviceDeps;
  pluginName: string;
  platformName: string;
  cached: readonly PlatformAccessory[];
  /** A trigger switch per person on every lock (design 7b). */
  people?: readonly Person[];
}

export class AccessoryRegistry implements DevicePublisher {
  private readonly accessories = new Map<string, PlatformAccessory>();
  private readonly locks = new Map<string, LockAccessory>();
  private readonly doorbells = new Map<string, DoorbellAccessory>();

  constructor(private readonly options: AccessoryRegistryOptions) {
    for (const accessory of options.cached) this.accessories.set(accessory.UUID, accessory);
  }

  /** Devices remembered in the accessory cache from the last run (used when the service cannot be asked). */
  cachedDevices(): WantedDevice[] {
    const devices: WantedDevice[] = [];
    for (const accessory of this.accessories.values()) {
      const parsed = wantedDeviceSchema.safeParse((accessory.context as Record<string, unknown>)[CONTEXT_KEY]);
      if (parsed.success) devices.push(parsed.data);
    }
    return devices;
  }

  lock(id: string): LockAccessory | undefined {
    return this.locks.get(id);
  }

  doorbell(id: string): DoorbellAccessory | undefined {
    return this.doorbells.get(id);
  }

  lockIds(): string[] {
    return [...this.locks.keys()];
  }

  doorbellIds(): string[] {
    return [...this.doorbells.keys()];
  }

  /** The name Apple Home shows (config, discovery or lock_name_changed), or the id for an unknown device. */
  nameOf(kind: DeviceKind, id: string): string {
    return (kind === 'lock' ? this.locks.get(id)?.name : this.accessories.get(this.uuidOf(kind, id))?.displayName) ?? id;
  }

  /**
   * Makes the accessories match `wanted`: creates or updates each wanted device and, when `sweep`
   * is set, unregisters every accessory of this plugin that is not wanted.
   */
  sync(wanted: readonly WantedDevice[], sweep: boolean): void {
    const keep = new Set<string>();
    const created: PlatformAccessory[] = [];
    const changed: PlatformAccessory[] = [];
    for (const device of wanted) {
      const result = this.ensure(device);
      keep.add(result.accessory.UUID);
      if (result.created) created.push(result.accessory);
      else if (result.changed) changed.push(result.accessory);
    }
    // One call each: Homebridge rewrites its whole accessory cache (and re-announces the bridge) per call.
    this.publish(created, changed);
    if (!sweep) return;
    const stale = [...this.accessories.values()].filter((accessory) => !keep.has(accessory.UUID));
    for (const accessory of stale) this.forget(accessory);
    if (stale.length > 0) {
      this.options.api.unregisterPlatformAccessories(this.options.pluginName, this.options.platformName, stale);
      this.options.log.info(`Removed ${stale.length} accessor${stale.length === 1 ? 'y' : 'ies'} no longer wanted: ${stale.map((a) => a.displayName).join(', ')}`);
    }
  }

  /** Adds (or updates) one device at run time, e.g. after a lock_user_add callback. */
  add(device: WantedDevice): void {
    const result = this.ensure(device);
    this.publish(result.created ? [result.accessory] : [], result.changed && !result.created ? [result.accessory] : []);
  }

  /** Removes one device at run time, e.g. after a lock_user_remove callback. */
  remove(kind: DeviceKind, id: string): boolean {
    const accessory = this.accessories.get(this.uuidOf(kind, id));
    if (!accessory) return false;
    this.forget(accessory);
    this.options.api.unregisterPlatformAccessories(this.options.pluginName, this.options.platformName, [accessory]);
    this.options.log.info(`Removed ${accessory.displayName} (${kind} ${id}) from HomeKit.`);
    return true;
  }

  disposeAll(): void {
    for (const lock of this.locks.values()) lock.dispose();
    for (const doorbell of this.doorbells.values()) doorbell.dispose();
    this.locks.clear();
    this.doorbells.clear();
  }

  private uuidOf(kind: DeviceKind, id: string): string {
    return kind === 'lock' ? lockUuid(this.options.api, id) : doorbellUuid(this.options.api, id);
  }

  private publish(created: PlatformAccessory[], changed: PlatformAccessory[]): void {
    const { api, log, pluginName, platformName } = this.options;
    if (created.length > 0) {
      api.registerPlatformAccessories(pluginName, platformName, created);
      log.info(`Added to HomeKit: ${created.map((a) => a.displayName).join(', ')}.`);
    }
    if (changed.length > 0) api.updatePlatformAccessories(changed);
  }

  private ensure(device: WantedDevice): { accessory: PlatformAccessory; created: boolean; changed: boolean } {
    const { api } = this.options;
    const uuid = this.uuidOf(device.kind, device.id);
    let accessory = this.accessories.get(uuid);
    let created = false;
    if (!accessory) {
      const category = device.kind === 'lock' ? api.hap.Categories.DOOR_LOCK : api.hap.Categories.VIDEO_DOORBELL;
      accessory = new api.platformAccessory(device.name, uuid, category);
      this.accessories.set(uuid, accessory);
      created = true;
    }
    const context = accessory.context as Record<string, unknown>;
    const changed = JSON.stringify(context[CONTEXT_KEY]) !== JSON.stringify(device);
    context[CONTEXT_KEY] = { ...device };

    if (device.kind === 'lock') {
      const entry = { id: device.id, name: device.name, doorSensor: device.doorSensor, doorSensorOnly: device.doorSensorOnly === true, people: this.options.people ?? [] };
      const existing = this.locks.get(device.id);
      if (existing) existing.update(entry);
      else this.locks.set(device.id, new LockAccessory(this.options.deps, accessory, entry));
    } else {
      const entry = { id: device.id, name: device.name, motionTimeoutSeconds: device.motionTimeoutSeconds };
      const existing = this.doorbells.get(device.id);
      if (existing) existing.update(entry);
      else this.doorbells.set(device.id, new DoorbellAccessory(this.options.deps, accessory, entry));
    }
    return { accessory, created, changed };
  }

  private forget(accessory: PlatformAccessory): void {
    this.accessories.delete(accessory.UUID);
    const parsed = wantedDeviceSchema.safeParse((accessory.context as Record<string, unknown>)[CONTEXT_KEY]);
    if (!parsed.success) return;
    if (parsed.data.kind === 'lock') {
      this.locks.get(parsed.data.id)?.dispose();
      this.locks.delete(parsed.data.id);
    } else {
      this.doorbells.get(parsed.data.id)?.dispose();
      this.doorbells.delete(parsed.data.id);
    }
  }
}
