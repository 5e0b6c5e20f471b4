// The plugin's Matter endpoints: a view of the device registry beside HomeKit's, following the
// registry's devices for state, settings and commands. Cached endpoints are registered again on each start (so their command handlers
// are attached); endpoints of devices that left are removed. Homebridge 1.x, a bridge without
// Matter, or `"matter": false`: no registry at all (matter-view.ts).
import type { API, MatterAPI, MatterAccessory } from 'homebridge';

import { doublingDelay } from '../util/backoff.js';
import { errorText } from '../util/error-text.js';
import { SingleRun } from '../util/single-run.js';
import type { Logger } from '../util/logger.js';
import { MatterDevice } from './matter-device.js';
import type { EndpointPlan } from './matter-endpoints.js';
import { MatterPublisher } from './matter-publisher.js';
import { doorbellSource, lockSource, type MatterSource } from './matter-sources.js';
import type { DeviceRegistry, DeviceView } from '../model/device-registry.js';
import { CommandSupersededError, type LockAction } from '../model/lock-commands.js';
import { deviceKey, type DeviceKind } from '../model/device-entry.js';

/** Who asks, in the lock's log lines. */
const MATTER_ORIGIN = 'a Matter controller';
/** A registration that did not take is tried again after this, doubling up to the longest wait. */
export const MATTER_RETRY_FIRST_MS = 30_000;
export const MATTER_RETRY_MAX_MS = 10 * 60_000;

/** What Matter needs of the device registry: the devices whose state it follows. */
export type ServedDevices = Pick<DeviceRegistry, 'locks' | 'doorbells' | 'lock'>;

export interface MatterRegistryOptions {
  api: API;
  log: Logger;
  registry: ServedDevices;
  /** Matter accessories Homebridge restored from its cache (configureMatterAccessory). */
  cached: readonly MatterAccessory[];
  /** The platform option `matter` (default true). */
  wanted: boolean;
  pluginName: string;
  platformName: string;
}

interface Held {
  device: MatterDevice;
  /** What the device was made from; a different one makes a new MatterDevice. */
  signature: string;
  accessory: object;
}

function deviceOfCached(accessory: MatterAccessory): string | undefined {
  const context = (accessory.context as Record<string, unknown> | undefined)?.lockAccess;
  const device = context !== null && typeof context === 'object' ? (context as Record<string, unknown>).device : undefined;
  return typeof device === 'string' ? device : undefined;
}

export class MatterRegistry implements DeviceView {
  private readonly publisher: MatterPublisher;
  private readonly held = new Map<string, Held>();
  /** Endpoints registered (and confirmed) in this run, by UUID. */
  private readonly published = new Map<string, { device: string; accessory: MatterAccessory }>();
  /** Endpoints Homebridge restored from its cache that this run has not registered again yet. */
  private readonly cached = new Map<string, MatterAccessory>();
  private readonly failures = new Map<string, number>();
  private readonly removedDevices = new Set<string>();
  private authoritative = false;
  private readonly runs = new SingleRun(
    () => this.reconcileOnce(),
    (error: unknown) => {
      this.options.log.warn(`Matter: the endpoints could not be brought up to date (${errorText(error)}); trying again later.`);
      this.scheduleRetry();
    },
    () => this.stopped,
  );
  private retryTimer: NodeJS.Timeout | undefined;
  /** Registrations that did not take in a row. */
  private retryFailures = 0;
  private firstRun = true;
  private stopped = false;

  /** Made by matterView (matter-view.ts) once this bridge runs Matter and the plugin wants it. */
  constructor(
    private readonly options: MatterRegistryOptions,
    private readonly matter: MatterAPI,
  ) {
    this.publisher = new MatterPublisher({ matter, log: options.log, pluginName: options.pluginName, platformName: options.platformName });
    for (const accessory of options.cached) this.cached.set(accessory.UUID, accessory);
  }

  /** Whether an endpoint is registered and following its device (for tests and status). */
  isPublished(uuid: string): boolean {
    return this.published.has(uuid);
  }

  /** UUIDs of the endpoints published now. */
  publishedUuids(): string[] {
    return [...this.published.keys()];
  }

  /** Resolves when no reconcile is running or queued (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.runs.current) await this.runs.current;
  }

  /** The device registry changed; the endpoints follow. */
  synced(sweep: boolean): void {
    if (sweep) this.authoritative = true;
    this.reconcile();
  }

  /** A device left at run time (lock_user_remove): its endpoints go now. */
  removed(kind: DeviceKind, id: string): void {
    this.removedDevices.add(deviceKey(kind, id));
    this.reconcile();
  }

  /** Shutdown: followers and timers go; the endpoints stay published for the next run. */
  dispose(): void {
    this.stop();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const { device } of this.held.values()) device.dispose();
    this.held.clear();
  }

  /** One reconcile at a time; a request meanwhile runs once more after it. */
  private reconcile(): void {
    this.runs.request();
  }

  private async reconcileOnce(): Promise<void> {
    const served = this.followServed();
    const wanted = new Map<string, { plan: EndpointPlan; device: MatterDevice }>();
    for (const { device } of this.held.values()) {
      for (const [uuid, plan] of device.wanted()) wanted.set(uuid, { plan, device });
    }

    // Endpoints no longer wanted: a part a device dropped, a device that left, or (once the device
    // set is authoritative) anything else of ours. Before that, an unknown cached endpoint may
    // belong to a device discovery has not listed yet.
    const stale: MatterAccessory[] = [];
    const removable = (device: string | undefined) =>
      this.authoritative || (device !== undefined && (served.has(device) || this.removedDevices.has(device)));
    for (const [uuid, entry] of this.published) {
      if (!wanted.has(uuid) && removable(entry.device)) stale.push(entry.accessory);
    }
    for (const [uuid, accessory] of this.cached) {
      if (!wanted.has(uuid) && removable(deviceOfCached(accessory))) stale.push(accessory);
    }
    this.removedDevices.clear();
    if (stale.length > 0) {
      for (const accessory of stale) {
        this.published.delete(accessory.UUID);
        this.cached.delete(accessory.UUID);
        this.failures.delete(accessory.UUID);
        for (const { device } of this.held.values()) device.detach(accessory.UUID);
      }
      await this.publisher.unregister(stale);
      this.options.log.info(`Matter: removed ${stale.map((a) => a.displayName).join(', ')}.`);
    }

    // A rename: the endpoints were told their new label; Homebridge's cached copies learn it here.
    for (const [uuid, entry] of this.published) {
      const plan = wanted.get(uuid);
      if (!plan || plan.plan.label === entry.accessory.displayName) continue;
      const accessory = this.publisher.accessoryOf(plan.plan, plan.device.source.handlers(plan.plan));
      this.published.set(uuid, { device: entry.device, accessory });
      await this.publisher.refreshCache(accessory);
    }

    const added: string[] = [];
    const firstFailures: string[] = [];
    let restored = 0;
    let failing = false;
    for (const [uuid, { plan, device }] of wanted) {
      if (this.stopped) return;
      if (this.published.has(uuid)) continue;
      const accessory = this.publisher.accessoryOf(plan, device.source.handlers(plan));
      const fromCache = this.cached.has(uuid);
      const ok = await this.publisher.register(accessory, plan);
      // A method, not a field read: Homebridge may shut down while a registration is confirmed.
      if (this.isStopped()) return;
      if (!ok) {
        failing = true;
        const attempts = (this.failures.get(uuid) ?? 0) + 1;
        this.failures.set(uuid, attempts);
        if (attempts === 1) firstFailures.push(plan.label);
        continue;
      }
      this.cached.delete(uuid);
      this.published.set(uuid, { device: plan.device, accessory });
      if (this.failures.delete(uuid)) this.options.log.info(`Matter: ${plan.label} is published now.`);
      if (fromCache) restored += 1;
      else added.push(plan.label);
      await device.attach(uuid);
    }

    if (added.length > 0) this.options.log.info(`Matter: published ${added.join(', ')}.`);
    if (this.firstRun) {
      this.firstRun = false;
      const count = this.published.size;
      this.options.log.info(`Matter: ${count} endpoint${count === 1 ? '' : 's'} ready for Google Home, Alexa and other Matter apps${restored > 0 ? ` (${restored} kept from the last run)` : ''}.`);
    }
    if (firstFailures.length > 0) {
      this.options.log.warn(`Matter: ${firstFailures.join(', ')} could not be published (the Homebridge log above may say why); trying again in ${Math.round(this.nextRetryDelay() / 1000)} s.`);
    }
    if (failing) this.scheduleRetry();
    else this.retryFailures = 0;
  }

  /** Makes `held` match the registry's devices; returns their keys. */
  private followServed(): Set<string> {
    const { registry } = this.options;
    const next = new Map<string, { signature: string; accessory: object; source: () => MatterSource }>();
    for (const lock of registry.locks()) {
      const { id } = lock.entry;
      next.set(deviceKey('lock', id), {
        signature: JSON.stringify(lock.entry),
        accessory: lock,
        source: () => lockSource(lock, (action) => this.command(id, action)),
      });
    }
    for (const doorbell of registry.doorbells()) {
      const { id } = doorbell.entry;
      next.set(deviceKey('doorbell', id), { signature: JSON.stringify(doorbell.entry), accessory: doorbell, source: () => doorbellSource(doorbell, { id, name: doorbell.name }) });
    }
    for (const [key, held] of this.held) {
      const wanted = next.get(key);
      if (!wanted || wanted.accessory !== held.accessory || wanted.signature !== held.signature) {
        held.device.dispose();
        this.held.delete(key);
      }
    }
    for (const [key, wanted] of next) {
      const existing = this.held.get(key);
      if (existing) {
        existing.device.refresh();
        continue;
      }
      const device = new MatterDevice(wanted.source(), this.publisher, () => {
        this.reconcile();
      });
      this.held.set(key, { device, signature: wanted.signature, accessory: wanted.accessory });
      // A device made anew (its accessory or entry changed: a rename, a door sensor switched) follows
      // its endpoints that are already published, starting with their whole state.
      for (const [uuid, entry] of this.published) if (entry.device === key) void device.attach(uuid);
    }
    return new Set(next.keys());
  }

  /** A lockDoor/unlockDoor from a controller: the lock's one command path; a failure answers FAILURE. */
  private async command(id: string, action: LockAction): Promise<void> {
    const lock = this.options.registry.lock(id);
    if (!lock) throw new this.matter.status.Failure(`lock ${id} is not served by Lock Access`);
    try {
      await lock.command(action, MATTER_ORIGIN);
    } catch (error) {
      // A failure is already logged by the lock; a command replaced before it ran is not.
      if (error instanceof CommandSupersededError) lock.log.info(`the ${action} from ${MATTER_ORIGIN} did not run: ${error.message}.`);
      throw new this.matter.status.Failure(errorText(error));
    }
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private nextRetryDelay(): number {
    return doublingDelay(this.retryFailures + 1, { firstMs: MATTER_RETRY_FIRST_MS, maxMs: MATTER_RETRY_MAX_MS });
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped) return;
    const delay = this.nextRetryDelay();
    this.retryFailures += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.reconcile();
    }, delay);
    this.retryTimer.unref();
  }
}
