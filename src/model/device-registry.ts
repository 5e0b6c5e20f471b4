// Owns every lock and doorbell: makes each from its entry, updates it when the entry changes, keeps
// what it must remember through the records, and disposes it when it leaves. The views (HomeKit,
// Matter, the status file's device list) attach as equal followers: each is told when the set
// changed and reads the devices here.
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import type { DeviceStore } from './device-store.js';
import { DoorbellDevice } from './doorbell-device.js';
import type { LockAction } from './lock-commands.js';
import { LockDevice } from './lock-device.js';
import { deviceKey, type DeviceEntry, type DeviceKind, type Person } from './device-entry.js';

/** A view of the device set: HomeKit's accessories, Matter's endpoints. */
export interface DeviceView {
  /** Devices were added, changed or removed; with `sweep` the set is complete, so whatever the view shows beyond it goes. */
  synced(sweep: boolean): void;
  /** One device left while running (a lock removed from the account). */
  removed(kind: DeviceKind, id: string): void;
  /** Shutdown: handlers and timers go; what is published stays for the next run. */
  dispose(): void;
}

/** Where devices keep their values (devices.json through DeviceRecords; memory in tests). */
export interface DeviceRecordsPort {
  remembered(): DeviceEntry[];
  setEntry(device: DeviceEntry): void;
  storeFor(key: string): DeviceStore;
  forget(key: string): void;
}

export interface DeviceRegistryDeps {
  log: Logger;
  clock: Clock;
  records: DeviceRecordsPort;
  /** A trigger per person on every lock. */
  people?: readonly Person[] | undefined;
  /** Sends a remote command to a lock; rejects when the service or the lock's bridge refused it. */
  operate: (lockId: string, action: LockAction) => Promise<void>;
  /** Plain words for why a command to a lock failed (and who sent it, when that is worth saying), ending with a full stop. */
  describeCommandFailure: (error: unknown, lockId: string) => string;
}

export class DeviceRegistry {
  private readonly lockDevices = new Map<string, LockDevice>();
  private readonly doorbellDevices = new Map<string, DoorbellDevice>();
  private readonly views = new Set<DeviceView>();

  constructor(private readonly deps: DeviceRegistryDeps) {}

  /** The devices served in the last run (served before the service can be asked). */
  remembered(): DeviceEntry[] {
    return this.deps.records.remembered();
  }

  lock(id: string): LockDevice | undefined {
    return this.lockDevices.get(id);
  }

  doorbell(id: string): DoorbellDevice | undefined {
    return this.doorbellDevices.get(id);
  }

  locks(): LockDevice[] {
    return [...this.lockDevices.values()];
  }

  doorbells(): DoorbellDevice[] {
    return [...this.doorbellDevices.values()];
  }

  lockIds(): string[] {
    return [...this.lockDevices.keys()];
  }

  doorbellIds(): string[] {
    return [...this.doorbellDevices.keys()];
  }

  /** The name the views show (config, discovery or lock_name_changed), or the id of an unknown device. */
  nameOf(kind: DeviceKind, id: string): string {
    return (kind === 'lock' ? this.lockDevices.get(id)?.name : this.doorbellDevices.get(id)?.name) ?? id;
  }

  /** Follows the device set; returns the function that detaches the view. */
  attach(view: DeviceView): () => void {
    this.views.add(view);
    return () => {
      this.views.delete(view);
    };
  }

  /** Makes the devices match `wanted`; with `sweep` every device not wanted leaves. Then every view follows. */
  sync(wanted: readonly DeviceEntry[], sweep: boolean): void {
    const keep = new Set<string>();
    for (const device of wanted) {
      this.ensure(device);
      keep.add(deviceKey(device.kind, device.id));
    }
    if (sweep) {
      for (const id of this.lockIds()) if (!keep.has(deviceKey('lock', id))) this.drop('lock', id);
      for (const id of this.doorbellIds()) if (!keep.has(deviceKey('doorbell', id))) this.drop('doorbell', id);
    }
    this.tell('show the devices', (view) => {
      view.synced(sweep);
    });
  }

  /** One device leaves while running; true when it was served. */
  remove(kind: DeviceKind, id: string): boolean {
    const served = this.drop(kind, id);
    this.tell(`remove ${kind} ${id}`, (view) => {
      view.removed(kind, id);
    });
    return served;
  }

  /** Shutdown: the views stop following first, then the devices stop their timers. */
  disposeAll(): void {
    this.tell('stop', (view) => {
      view.dispose();
    });
    this.views.clear();
    for (const device of [...this.lockDevices.values(), ...this.doorbellDevices.values()]) device.dispose();
    this.lockDevices.clear();
    this.doorbellDevices.clear();
  }

  private ensure(device: DeviceEntry): void {
    const { deps } = this;
    deps.records.setEntry(device);
    const store = () => deps.records.storeFor(deviceKey(device.kind, device.id));
    if (device.kind === 'doorbell') {
      const existing = this.doorbellDevices.get(device.id);
      if (existing) existing.update(device);
      else this.doorbellDevices.set(device.id, new DoorbellDevice({ log: deps.log, store: store(), clock: deps.clock }, device));
      return;
    }
    // Every lock has a trigger for each of the config's people.
    const entry = { ...device, people: deps.people ?? [] };
    const existing = this.lockDevices.get(device.id);
    if (existing) {
      existing.update(entry);
      return;
    }
    this.lockDevices.set(device.id, new LockDevice({ log: deps.log, operate: deps.operate, describeCommandFailure: deps.describeCommandFailure, store: store(), clock: deps.clock }, entry));
  }

  private drop(kind: DeviceKind, id: string): boolean {
    const devices: Map<string, { dispose(): void }> = kind === 'lock' ? this.lockDevices : this.doorbellDevices;
    const device = devices.get(id);
    devices.delete(id);
    this.deps.records.forget(deviceKey(kind, id));
    device?.dispose();
    return device !== undefined;
  }

  /** Each view on its own: a failing one never costs another its devices, nor crashes Homebridge. */
  private tell(what: string, run: (view: DeviceView) => void): void {
    for (const view of this.views) {
      try {
        run(view);
      } catch (error) {
        this.deps.log.error(`A view of the devices could not ${what} (${errorText(error)}); the others are not affected.`);
      }
    }
  }
}
