// Owns the platform's accessories: adopts cached ones, creates new ones, converges each to the
// wanted device list, and unregisters in one sweep what is no longer wanted.
import type { API, PlatformAccessory } from 'homebridge';

import { accessoryStore } from './context-store.js';
import type { DeviceDeps } from './device-deps.js';
import { DoorbellAccessory, doorbellUuid } from './doorbell-accessory.js';
import { LockAccessory, lockUuid } from './lock-accessory.js';
import { DoorbellDevice, type DoorbellEntry } from '../model/doorbell-device.js';
import { LockDevice, type LockEntry } from '../model/lock-device.js';
import type { Person } from '../model/person-triggers.js';
import { clockWithNow } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import type { DevicePublisher } from '../model/device-views.js';
import { wantedDeviceSchema, type DeviceKind, type WantedDevice } from '../model/wanted-device.js';

/** Where the registry keeps the wanted device in accessory.context, so a cached accessory can be served before discovery. */
const CONTEXT_KEY = 'lockAccessDevice';

export interface AccessoryRegistryOptions {
  api: API;
  log: Logger;
  deps: DeviceDeps;
  pluginName: string;
  platformName: string;
  cached: readonly PlatformAccessory[];
  /** A trigger switch per person on every lock. */
  people?: readonly Person[];
  /** A lock's bridge went offline or came back (by an event or a command): the status file follows. */
  reachabilityChanged?: (lockId: string) => void;
}

/** A device and its HomeKit view, made and disposed together. */
interface Served<D> {
  device: D;
  view: { dispose(): void };
}

export class AccessoryRegistry implements DevicePublisher {
  private readonly accessories = new Map<string, PlatformAccessory>();
  private readonly locks = new Map<string, Served<LockDevice>>();
  private readonly doorbells = new Map<string, Served<DoorbellDevice>>();
  /** Accessories the bridge refused (full at 149): their devices run, HomeKit does not show them. */
  private readonly unpublished = new Set<string>();

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

  lock(id: string): LockDevice | undefined {
    return this.locks.get(id)?.device;
  }

  doorbell(id: string): DoorbellDevice | undefined {
    return this.doorbells.get(id)?.device;
  }

  lockIds(): string[] {
    return [...this.locks.keys()];
  }

  doorbellIds(): string[] {
    return [...this.doorbells.keys()];
  }

  /** The name Apple Home shows (config, discovery or lock_name_changed), or the id for an unknown device. */
  nameOf(kind: DeviceKind, id: string): string {
    return (kind === 'lock' ? this.locks.get(id)?.device.name : this.accessories.get(this.uuidOf(kind, id))?.displayName) ?? id;
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
      if (result.created || this.unpublished.has(result.accessory.UUID)) created.push(result.accessory);
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
    const again = result.created || this.unpublished.has(result.accessory.UUID);
    this.publish(again ? [result.accessory] : [], result.changed && !again ? [result.accessory] : []);
  }

  /** Names of the devices whose accessories the bridge refused: they run, but HomeKit does not show them. */
  notShown(): string[] {
    return [...this.unpublished].map((uuid) => this.accessories.get(uuid)?.displayName ?? uuid);
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
    for (const served of [...this.locks.values(), ...this.doorbells.values()]) dispose(served);
    this.locks.clear();
    this.doorbells.clear();
  }

  private uuidOf(kind: DeviceKind, id: string): string {
    return kind === 'lock' ? lockUuid(this.options.api, id) : doorbellUuid(this.options.api, id);
  }

  private publish(created: PlatformAccessory[], changed: PlatformAccessory[]): void {
    const { api, log } = this.options;
    if (created.length > 0) {
      const refused = this.register(created);
      const added = created.filter((a) => !refused.includes(a));
      if (added.length > 0) log.info(`Added to HomeKit: ${added.map((a) => a.displayName).join(', ')}.`);
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
      if (newlyRefused.length > 0) {
        const names = newlyRefused.map((a) => a.displayName).join(', ');
        log.warn(
          /more than \d+ Accessories/i.test(errorText(error))
            ? `The Homebridge bridge is full (HomeKit allows 149 accessories per bridge, counting every plugin on it), so these are not shown in HomeKit: ${names}. They still get their webhooks and their events (see the event log). To show them, run Lock Access as a child bridge: in the Homebridge UI open Plugins, Lock Access, ⋮, Bridge settings, turn the child bridge on and restart.`
            : `These could not be added to HomeKit (${errorText(error)}): ${names}. They still get their webhooks and their events (see the event log); the plugin tries again at its next sync.`,
        );
      }
      return refused;
    }
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
      const entry: LockEntry = {
        id: device.id, name: device.name, doorSensor: device.doorSensor, doorSensorOnly: device.doorSensorOnly === true, people: this.options.people ?? [],
        autoLockSeconds: device.autoLockSeconds, leftOpenSeconds: device.leftOpenSeconds, leftUnlockedSeconds: device.leftUnlockedSeconds,
      };
      const existing = this.locks.get(device.id);
      if (existing) existing.device.update(entry);
      else this.locks.set(device.id, this.serveLock(accessory, entry));
    } else {
      const entry: DoorbellEntry = { id: device.id, name: device.name, motionTimeoutSeconds: device.motionTimeoutSeconds };
      const existing = this.doorbells.get(device.id);
      if (existing) existing.device.update(entry);
      else this.doorbells.set(device.id, this.serveDoorbell(accessory, entry));
    }
    return { accessory, created, changed };
  }

  private serveLock(accessory: PlatformAccessory, entry: LockEntry): Served<LockDevice> {
    const { api, deps, reachabilityChanged } = this.options;
    const device = new LockDevice({ log: deps.log, operate: deps.operate, describeCommandFailure: deps.describeCommandFailure, store: accessoryStore(api, accessory, deps.now), clock: clockWithNow(deps.now) }, entry);
    const view = new LockAccessory({ api, log: deps.log, doorHistory: deps.doorHistory, now: deps.now }, accessory, device);
    // One follower for every way reachability changes: an online notice, a status report, a command.
    let online = device.state.online;
    device.onChange((change) => {
      if (change.state.online === online) return;
      online = change.state.online;
      reachabilityChanged?.(entry.id);
    });
    return { device, view };
  }

  private serveDoorbell(accessory: PlatformAccessory, entry: DoorbellEntry): Served<DoorbellDevice> {
    const { api, deps } = this.options;
    const device = new DoorbellDevice({ log: deps.log, store: accessoryStore(api, accessory, deps.now), clock: clockWithNow(deps.now) }, entry);
    return { device, view: new DoorbellAccessory({ api, log: deps.log, fetchImage: deps.fetchImage }, accessory, device) };
  }

  private forget(accessory: PlatformAccessory): void {
    this.accessories.delete(accessory.UUID);
    const parsed = wantedDeviceSchema.safeParse((accessory.context as Record<string, unknown>)[CONTEXT_KEY]);
    if (!parsed.success) return;
    const served = parsed.data.kind === 'lock' ? this.locks : this.doorbells;
    const held = served.get(parsed.data.id);
    if (held) dispose(held);
    served.delete(parsed.data.id);
  }
}

/** Whether HAP took the accessory onto the bridge (Homebridge's platform accessory wraps HAP's). */
function isBridged(accessory: PlatformAccessory): boolean {
  const hap = (accessory as unknown as { _associatedHAPAccessory?: { bridged?: boolean } })._associatedHAPAccessory;
  return hap?.bridged === true;
}

/** The view first: it stops following before the device clears its followers. */
function dispose(served: Served<{ dispose(): void }>): void {
  served.view.dispose();
  served.device.dispose();
}
