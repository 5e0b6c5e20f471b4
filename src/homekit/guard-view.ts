// The lock guard as HomeKit shows it: a "Left Open" and a "Left Unlocked" contact sensor (Home can
// notify when they trip), and AutoSecurityTimeout on LockManagement, which shows the auto-lock
// delay and lets Eve and other apps change it. A change made from HomeKit is kept across restarts
// in the accessory cache and wins until the config value itself changes.
import type { API, PlatformAccessory } from 'homebridge';

import type { LockFeed } from '../model/device-feeds.js';
import { LockGuard, type GuardAlerts, type GuardSettings } from '../model/lock-guard.js';
import type { Logger } from '../util/logger.js';
import { ensureService, findService } from './services.js';

export const LEFT_OPEN_SUBTYPE = 'left-open';
export const LEFT_UNLOCKED_SUBTYPE = 'left-unlocked';
const GUARD_CONTEXT_KEY = 'lockAccessGuard';

export interface GuardEntry {
  id: string;
  doorSensor: boolean;
  doorSensorOnly?: boolean | undefined;
  autoLockSeconds?: number | undefined;
  leftOpenSeconds?: number | undefined;
  leftUnlockedSeconds?: number | undefined;
}

/** What the accessory cache keeps: the config value the HomeKit change was made against, and the change. */
interface SavedDelay {
  configSeconds: number;
  homekitSeconds: number;
}

function savedDelay(accessory: PlatformAccessory): SavedDelay | undefined {
  const raw = (accessory.context as Record<string, unknown>)[GUARD_CONTEXT_KEY] as Partial<SavedDelay> | undefined;
  return typeof raw?.configSeconds === 'number' && typeof raw.homekitSeconds === 'number' ? { configSeconds: raw.configSeconds, homekitSeconds: raw.homekitSeconds } : undefined;
}

export class GuardView {
  private readonly guard: LockGuard;
  private entry: GuardEntry;
  private name = '';
  private warnedNoSensor = false;

  constructor(
    private readonly deps: { api: API; log: Logger; now?: () => number },
    private readonly accessory: PlatformAccessory,
    lock: LockFeed,
    entry: GuardEntry,
    onAutoLockSent: (at: number) => void,
  ) {
    this.entry = { ...entry };
    const now = deps.now ?? Date.now;
    this.guard = new LockGuard({
      lock,
      settings: () => this.settings(),
      clock: { now, setTimeout: (fn, ms) => setTimeout(fn, ms).unref(), clearTimeout: (handle) => { clearTimeout(handle as NodeJS.Timeout); } },
      log: deps.log,
      onAlerts: (alerts) => {
        this.render(alerts);
      },
      onAutoLockSent,
    });
  }

  /** The delay in force: a HomeKit change, unless the config value changed since it was made. */
  autoLockSeconds(): number {
    const config = this.entry.autoLockSeconds ?? 0;
    const saved = savedDelay(this.accessory);
    return saved !== undefined && saved.configSeconds === config ? saved.homekitSeconds : config;
  }

  /** Services follow the entry; the countdowns start over when the settings changed. */
  converge(entry: GuardEntry, name: string): void {
    const changed = JSON.stringify(entry) !== JSON.stringify(this.entry);
    this.entry = { ...entry };
    this.name = name;
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    ensureService(this.accessory, S.ContactSensor, (entry.leftOpenSeconds ?? 0) > 0, `${name} Left Open`, LEFT_OPEN_SUBTYPE);
    ensureService(this.accessory, S.ContactSensor, (entry.leftUnlockedSeconds ?? 0) > 0, `${name} Left Unlocked`, LEFT_UNLOCKED_SUBTYPE);
    const management = findService(this.accessory, S.LockManagement);
    if (management) {
      const timeout = management.getCharacteristic(C.LockManagementAutoSecurityTimeout);
      timeout.onSet((value) => {
        this.homekitDelay(Number(value));
      });
      timeout.updateValue(this.autoLockSeconds());
    }
    if ((entry.autoLockSeconds ?? 0) > 0 && !entry.doorSensor && !entry.doorSensorOnly && !this.warnedNoSensor) {
      this.warnedNoSensor = true;
      this.deps.log.warn(`${name}: autoLockSeconds needs a door sensor ("doorSensor": true on this lock): the plugin locks only once it knows the door is closed, so auto-lock stays off.`);
    }
    this.render(this.guard.current);
    if (changed) this.guard.settingsChanged();
  }

  dispose(): void {
    this.guard.dispose();
  }

  private settings(): GuardSettings {
    return {
      doorSensor: this.entry.doorSensor || this.entry.doorSensorOnly === true,
      autoLockSeconds: this.autoLockSeconds(),
      leftOpenSeconds: this.entry.leftOpenSeconds ?? 0,
      leftUnlockedSeconds: this.entry.leftUnlockedSeconds ?? 0,
    };
  }

  /** Eve (or another app) wrote AutoSecurityTimeout: kept across restarts; 0 turns auto-lock off. */
  private homekitDelay(seconds: number): void {
    const value = Math.max(0, Math.min(3600, Math.round(seconds)));
    (this.accessory.context as Record<string, unknown>)[GUARD_CONTEXT_KEY] = { configSeconds: this.entry.autoLockSeconds ?? 0, homekitSeconds: value } satisfies SavedDelay;
    this.deps.api.updatePlatformAccessories([this.accessory]);
    this.deps.log.info(`${this.name}: auto-lock ${value === 0 ? 'turned off' : `set to ${value} s`} from HomeKit.`);
    this.guard.settingsChanged();
  }

  private render(alerts: GuardAlerts): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const show = (subtype: string, on: boolean, label: string) => {
      const service = findService(this.accessory, S.ContactSensor, subtype);
      if (!service) return;
      service.updateCharacteristic(C.Name, label);
      service.updateCharacteristic(C.ContactSensorState, on ? C.ContactSensorState.CONTACT_NOT_DETECTED : C.ContactSensorState.CONTACT_DETECTED);
    };
    show(LEFT_OPEN_SUBTYPE, alerts.leftOpen, `${this.name} Left Open`);
    show(LEFT_UNLOCKED_SUBTYPE, alerts.leftUnlocked, `${this.name} Left Unlocked`);
  }
}
