// One HomeKit accessory per lock, a view of the lock device: each of the lock's parts (the model's
// rule, lock-parts.ts) bound to its service once per change of the parts, and whatever the pass did
// not bind removed. It renders the device's changes and turns Apple Home's writes into the device's
// commands; it holds no state.
import type { API, Categories, Characteristic, CharacteristicValue, PlatformAccessory, Service } from 'homebridge';

import { setAccessoryInformation } from './accessory-information.js';
import type { LockChange } from '../model/device-changes.js';
import type { LockEvent } from '../model/events.js';
import type { LockAction } from '../model/lock-commands.js';
import type { LockDevice } from '../model/lock-device.js';
import type { LockState } from '../model/lock-state.js';
import { lockParts, partsFacts, partsFactsChanged, partsKey, type LockPart, type PartsFacts } from '../model/lock-parts.js';
import type { Logger } from '../util/logger.js';
import { renderBattery } from './battery-render.js';
import { guardAccessoryReads } from './offline-reads.js';
import { acquireService, findService, keepPrimary, showValue } from './services.js';
import { GuardView, LEFT_OPEN_SUBTYPE, LEFT_UNLOCKED_SUBTYPE } from './guard-view.js';
import { LockActivity } from './lock-activity.js';

export interface LockViewDeps {
  api: API;
  log: Logger;
}

export const KEYPAD_SUBTYPE = 'keypad';
/** Who asked for a command, as the log says it ("locking from Apple Home"). */
export const APPLE_HOME_ORIGIN = 'Apple Home';

export function lockUuid(api: API, id: string): string {
  return api.hap.uuid.generate('lock:' + id);
}

export function lockCategory(api: API): Categories {
  return api.hap.Categories.DOOR_LOCK;
}

/** The services an event of each kind can change; kinds not listed render everything. */
type Aspect = 'lock' | 'door' | 'battery';
const ASPECT_OF: Partial<Record<LockEvent['kind'], Aspect>> = { lockState: 'lock', doorState: 'door', battery: 'battery' };

/** What HomeKit shows for each lock state, made once per view: current and (when known) target. */
type ShownValues = Record<LockState['lock'], { current: number; target: number | undefined }>;

function shownValues(api: API): ShownValues {
  const C = api.hap.Characteristic;
  return {
    locked: { current: C.LockCurrentState.SECURED, target: C.LockTargetState.SECURED },
    unlocked: { current: C.LockCurrentState.UNSECURED, target: C.LockTargetState.UNSECURED },
    unknown: { current: C.LockCurrentState.UNKNOWN, target: undefined },
  };
}

/** The characteristics every lock or door event sets, looked up once per binding pass. */
interface LockCharacteristics {
  current: Characteristic | undefined;
  target: Characteristic | undefined;
  contact: Characteristic | undefined;
  contactActive: Characteristic | undefined;
}

export class LockAccessory {
  private readonly activity: LockActivity;
  private readonly guard: GuardView;
  private readonly unsubscribe: () => void;
  private readonly timers = new Set<NodeJS.Immediate>();
  private disposed = false;
  /** The name the services were last given by render(); undefined makes the next render name them. */
  private renderedName: string | undefined;
  /** Whether the read guards are set for an offline lock (undefined: not set yet). */
  private guardedOffline: boolean | undefined;
  /** The parts the services were last bound for, and the facts they were built from. */
  private shaped = '';
  private shapedFacts: PartsFacts | undefined;
  /** Found after each binding pass, when first needed: services change only in a pass. */
  private characteristics: LockCharacteristics | undefined;
  private readonly shownValues: ShownValues;

  constructor(
    private readonly deps: LockViewDeps,
    private readonly accessory: PlatformAccessory,
    private readonly device: LockDevice,
  ) {
    this.shownValues = shownValues(deps.api);
    this.activity = new LockActivity(deps.api, accessory, device);
    this.guard = new GuardView(deps.api, accessory, device);
    this.converge();
    this.render(true);
    this.unsubscribe = device.onChange((change) => {
      this.changed(change);
    });
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribe();
    for (const timer of this.timers) clearImmediate(timer);
    this.timers.clear();
  }

  private changed(change: LockChange): void {
    switch (change.cause) {
      case 'event':
        // Parts change only with the name or a first door or keypad event; building and binding
        // them again on every event showed in profiles.
        if (this.partsMayHaveChanged() && partsKey(this.parts()) !== this.shaped) this.converge();
        // The mapping table sets both current and target from operation/status events.
        this.render(change.event.kind === 'lockState', ASPECT_OF[change.event.kind]);
        this.activity.apply(change);
        // Offline, whatever this event added (a first battery level, a first last action) must fail reads too.
        if (!change.state.online) this.guardReads();
        return;
      case 'stale':
        return;
      case 'command':
        this.activity.commandSucceeded();
        // A newer wish already waiting keeps its target; otherwise the target settles on the new state.
        this.render(change.settled);
        return;
      case 'commandFailed':
        if (!change.superseded) this.revertTarget(change.action);
        return;
      case 'entry':
        this.converge();
        this.render(false);
        return;
      case 'alerts':
        this.guard.render(change.alerts);
        return;
    }
  }

  private parts(): LockPart[] {
    const { entry, state, name } = this.device;
    this.shapedFacts = partsFacts(state, name);
    return lockParts(entry, state, name);
  }

  private partsMayHaveChanged(): boolean {
    return this.shapedFacts === undefined || partsFactsChanged(this.shapedFacts, this.device.state, this.device.name);
  }

  private lockCharacteristics(): LockCharacteristics {
    if (this.characteristics) return this.characteristics;
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const lock = findService(this.accessory, S.LockMechanism);
    const door = findService(this.accessory, S.ContactSensor);
    this.characteristics = {
      current: lock?.getCharacteristic(C.LockCurrentState),
      target: lock?.getCharacteristic(C.LockTargetState),
      contact: door?.getCharacteristic(C.ContactSensorState),
      contactActive: door?.getCharacteristic(C.StatusActive),
    };
    return this.characteristics;
  }

  /** Binds each of the lock's parts; any service the pass did not bind (a part gone, an older version's) is removed. */
  private converge(): void {
    this.renderedName = undefined;
    this.characteristics = undefined;
    const parts = this.parts();
    this.shaped = partsKey(parts);
    const { entry, name } = this.device;
    if (this.accessory.displayName !== name) this.accessory.updateDisplayName(name);
    setAccessoryInformation(this.deps.api, this.accessory, { model: 'Smart Lock', serial: entry.id, name });
    const bound = new Set<Service>();
    const information = findService(this.accessory, this.deps.api.hap.Service.AccessoryInformation);
    if (information) bound.add(information);
    this.guard.startPass();
    this.activity.startPass();
    for (const part of parts) for (const service of this.bind(part)) bound.add(service);
    for (const service of [...this.accessory.services]) if (!bound.has(service)) this.accessory.removeService(service);
    // Read guards are bound by the render that follows, once every characteristic exists.
  }

  /** One part's services, created when the cached accessory lacks them, with their handlers. */
  private bind(part: LockPart): Service[] {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    switch (part.kind) {
      case 'mechanism': {
        const lock = acquireService(this.accessory, S.LockMechanism, part.name);
        keepPrimary(lock);
        lock.getCharacteristic(C.LockTargetState).onSet((value) => {
          this.onTargetSet(value);
        });
        return [lock];
      }
      case 'management': {
        const management = this.activity.bindManagement(part.name);
        this.guard.bindTimeout(management);
        return [management];
      }
      case 'door': {
        const contact = acquireService(this.accessory, S.ContactSensor, part.name);
        if (contact.isPrimaryService !== part.primary) contact.setPrimaryService(part.primary);
        return [contact, this.activity.bindDoorHistory(contact)];
      }
      case 'battery':
        return [acquireService(this.accessory, S.Battery, part.name)];
      case 'keypadBattery':
        return [acquireService(this.accessory, S.Battery, part.name, KEYPAD_SUBTYPE)];
      case 'leftOpen':
        return [this.guard.bindAlert(LEFT_OPEN_SUBTYPE, part.name)];
      case 'leftUnlocked':
        return [this.guard.bindAlert(LEFT_UNLOCKED_SUBTYPE, part.name)];
      case 'person':
        return this.activity.bindPerson(part);
    }
  }

  private guardReads(): void {
    const offline = !this.device.state.online;
    guardAccessoryReads(this.deps.api, this.accessory, offline);
    this.guardedOffline = offline;
  }

  /** LockCurrentState for the lock's state. */
  private currentValue(): number {
    return this.shownValues[this.device.state.lock].current;
  }

  /** LockTargetState for the lock's state; none while it is unknown. */
  private targetValue(): number | undefined {
    return this.shownValues[this.device.state.lock].target;
  }

  /**
   * Pushes state into the characteristics; `setTarget` also moves LockTargetState to match. `only`
   * limits it to the services one event can change: each update runs through HAP's change events,
   * which showed in profiles of a busy listener.
   */
  private render(setTarget: boolean, only?: Aspect): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const { state, name } = this.device;
    // Names and constants are set only after a change of name or services, not on every event.
    const naming = this.renderedName !== name;
    this.renderedName = name;
    const wants = (aspect: Aspect) => naming || only === undefined || only === aspect;
    const shown = this.lockCharacteristics();
    if (wants('lock') && shown.current) {
      if (naming) findService(this.accessory, S.LockMechanism)?.updateCharacteristic(C.Name, name);
      showValue(shown.current, this.currentValue());
      const target = setTarget ? this.targetValue() : undefined;
      if (target !== undefined && shown.target) showValue(shown.target, target);
    }
    if (wants('door') && shown.contact) {
      if (naming) findService(this.accessory, S.ContactSensor)?.updateCharacteristic(C.Name, `${name} Door`);
      if (state.door === 'closed') showValue(shown.contact, C.ContactSensorState.CONTACT_DETECTED);
      if (state.door === 'open' || state.door === 'ajar') showValue(shown.contact, C.ContactSensorState.CONTACT_NOT_DETECTED);
      // Nothing unknown is shown as known: until a first real position the sensor says it is not active.
      if (shown.contactActive) showValue(shown.contactActive, state.door !== 'unknown');
    }
    if (wants('battery')) {
      renderBattery(this.deps.api, findService(this.accessory, S.Battery), state.battery, `${name} Battery`, naming);
      renderBattery(this.deps.api, findService(this.accessory, S.Battery, KEYPAD_SUBTYPE), state.keypadBattery, `${name} Keypad Battery`, naming);
    }
    // Setting an optional characteristic (ChargingState) adds it, so guards are bound after that.
    if (naming || this.guardedOffline !== !state.online) this.guardReads();
  }

  /**
   * Apple Home wrote LockTargetState. The remote command can take far longer than HAP's write timeout
   * (a bridge timeout alone is a 408 after many seconds), so the handler answers at once and the
   * outcome follows: Home shows "Locking…/Unlocking…" while target and current differ, then current
   * follows the target on success, or the target reverts on failure. The command starts on the next
   * turn of the event loop because HAP stores the written target only after this handler returns; a
   * revert made earlier would be overwritten.
   */
  private onTargetSet(value: CharacteristicValue): void {
    const C = this.deps.api.hap.Characteristic;
    const action: LockAction = value === C.LockTargetState.SECURED ? 'lock' : 'unlock';
    // The auto-lock countdown stops at the write, not when the command runs or succeeds.
    this.device.targetWritten();
    const timer = setImmediate(() => {
      this.timers.delete(timer);
      if (this.disposed) return;
      void this.device.request(action, APPLE_HOME_ORIGIN);
    });
    this.timers.add(timer);
  }

  /** Back to the current state; when that is unknown, to the opposite of what failed. */
  private revertTarget(action: LockAction): void {
    const C = this.deps.api.hap.Characteristic;
    const lock = findService(this.accessory, this.deps.api.hap.Service.LockMechanism);
    const target = this.targetValue() ?? (action === 'lock' ? C.LockTargetState.UNSECURED : C.LockTargetState.SECURED);
    lock?.updateCharacteristic(C.LockTargetState, target);
  }
}
