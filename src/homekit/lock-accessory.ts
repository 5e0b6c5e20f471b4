// One HomeKit accessory per lock: LockMechanism (primary), ContactSensor, Battery (lock, keypad),
// AccessoryInformation; state from callbacks via apply(), control from Apple Home via operate().
// Others (Matter) follow the applied state through onChange() and send commands through command().
import type { API, Categories, CharacteristicValue, PlatformAccessory } from 'homebridge';

import { errorText } from '../util/error-text.js';
import { setAccessoryInformation } from './accessory-information.js';
import { ChangeListeners, type ChangeListener } from '../model/change-listeners.js';
import type { LockDeps } from './device-deps.js';
import type { DeliveryContext } from '../model/event-time.js';
import type { LockEvent } from '../model/events.js';
import { LockCommands, type CommandOutcome, type LockAction } from '../model/lock-commands.js';
import {
  commandSucceeded,
  initialLockState,
  lockDisplayName,
  parseLockState,
  reduceLock,
  repairLockMarks,
  withEntryName,
  type LockState,
} from '../model/lock-state.js';
import { ContextSaver } from './persist-context.js';
import type { Person } from '../model/person-triggers.js';
import type { LockChange, LockFeed } from '../model/device-feeds.js';
import type { ReachabilityProof } from '../model/reachability.js';
import { renderBattery } from './battery-render.js';
import { guardAccessoryReads } from './read-handlers.js';
import { acquireService, ensureService, findService } from './services.js';
import { GuardView } from './guard-view.js';
import { WhoAndHow } from './who-and-how.js';

export interface LockAccessoryEntry {
  id: string;
  name: string;
  doorSensor: boolean;
  /** No LockMechanism or LockManagement: the lock is in HomeKit on its own. */
  doorSensorOnly?: boolean;
  /** A trigger switch per person. */
  people?: readonly Person[];
  /** The guard (absent or 0: off). */
  autoLockSeconds?: number | undefined;
  leftOpenSeconds?: number | undefined;
  leftUnlockedSeconds?: number | undefined;
}

/** Where the lock's state lives in accessory.context (persisted by Homebridge's accessory cache). */
export const LOCK_CONTEXT_KEY = 'lockAccess';
export const KEYPAD_SUBTYPE = 'keypad';

export function lockUuid(api: API, id: string): string {
  return api.hap.uuid.generate('lock:' + id);
}

export function lockCategory(api: API): Categories {
  return api.hap.Categories.DOOR_LOCK;
}

/** The services an event of each kind can change; kinds not listed render everything. */
type Aspect = 'lock' | 'door' | 'battery';
const ASPECT_OF: Partial<Record<LockEvent['kind'], Aspect>> = { lockState: 'lock', doorState: 'door', battery: 'battery' };

export type { LockChange } from '../model/device-feeds.js';

/** Who asked for a command, as the log says it ("locking from Apple Home"). */
const APPLE_HOME = 'Apple Home';

export class LockAccessory implements LockFeed {
  private current: LockState;
  private entry: LockAccessoryEntry;
  private readonly commands: LockCommands;
  private readonly saver: ContextSaver;
  private readonly changes: ChangeListeners<LockChange>;
  private readonly who: WhoAndHow;
  private readonly guard: GuardView;
  /** Who asked last for each action; the command that runs logs it. */
  private readonly origins: Record<LockAction, string> = { lock: APPLE_HOME, unlock: APPLE_HOME };
  private readonly timers = new Set<NodeJS.Immediate>();
  private disposed = false;
  /** The name the services were last given by render(); undefined makes the next render name them. */
  private renderedName: string | undefined;
  /** Whether the read guards are set for an offline lock (undefined: not set yet). */
  private guardedOffline: boolean | undefined;

  constructor(
    private readonly deps: LockDeps,
    private readonly accessory: PlatformAccessory,
    entry: LockAccessoryEntry,
  ) {
    this.entry = { ...entry };
    const stored: unknown = (accessory.context as Record<string, unknown>)[LOCK_CONTEXT_KEY];
    const cached = parseLockState(stored);
    if (stored !== undefined && !cached) deps.log.warn(`${entry.name}: the saved state could not be read, so it starts fresh.`);
    const repaired = cached === undefined ? undefined : repairLockMarks(cached, (deps.now ?? Date.now)());
    if (repaired !== cached) deps.log.info(`${entry.name}: the saved event times lay in the future (a lock clock that ran ahead), so ordering starts again from now.`);
    this.current = withEntryName(repaired ?? initialLockState(), entry.name);
    this.commands = new LockCommands((action) => this.execute(action));
    this.saver = new ContextSaver(deps.api, accessory);
    this.changes = new ChangeListeners(deps.log, () => this.name);
    this.who = new WhoAndHow(deps, accessory, entry.id);
    this.guard = new GuardView(deps, accessory, this, this.entry, (at) => { this.who.autoLockSent(at); });
    this.converge();
    this.render(true);
    this.store();
  }

  get state(): LockState {
    return this.current;
  }

  get name(): string {
    return lockDisplayName(this.current, this.entry.name);
  }

  /** Applies one callback event (already verified, parsed and de-duplicated by the receiver). */
  apply(event: LockEvent, context: DeliveryContext): void {
    if (this.disposed) return;
    if (event.lockId !== this.entry.id) {
      this.deps.log.debug(`${this.name}: ignored an event for another lock (${event.lockId}).`);
      return;
    }
    const wasOnline = this.current.online;
    const shapeBefore = this.shape();
    const result = reduceLock(this.current, event, context);
    this.current = result.state;
    if (!result.applied) {
      this.deps.log.debug(`${this.name}: ${result.text}: older than the last event of its kind, so it changes nothing.`);
      this.who.apply(event, { ...context, applied: false }, this.name);
      this.store();
      return;
    }
    // Services change only with the name or a first door or keypad event; re-checking them on every
    // event showed in profiles.
    if (this.shape() !== shapeBefore) this.converge();
    // The mapping table sets both current and target from operation/status events.
    this.render(event.kind === 'lockState', ASPECT_OF[event.kind]);
    this.who.apply(event, { ...context, applied: true }, this.name);
    // Offline, whatever this event added (a first battery level, a first last action) must fail reads too.
    if (!this.current.online) this.guardReads();
    this.store();
    this.changes.emit({ cause: 'event', state: this.current, event });
    // Logged after HomeKit has the change: a log line is a synchronous write that can wait on a
    // slow reader of Homebridge's output.
    const reachabilityChanged = wasOnline !== this.current.online;
    if (event.kind === 'lockState' && event.source === 'status') this.deps.log.debug(`${this.name}: ${result.text}.`);
    else if (!(event.kind === 'online' && reachabilityChanged)) this.deps.log.info(`${this.name}: ${result.text}.`);
    if (reachabilityChanged) this.logReachability(event.kind === 'online' ? 'online' : 'status');
  }

  private logReachability(proof: ReachabilityProof): void {
    if (!this.current.online) {
      this.deps.log.warn(`${this.name}: the lock's Wi-Fi bridge is offline; Apple Home shows No Response until it is back.`);
    } else if (proof === 'online') {
      this.deps.log.info(`${this.name}: the lock's Wi-Fi bridge is back online.`);
    } else {
      this.deps.log.info(`${this.name}: the lock's Wi-Fi bridge answered ${proof === 'status' ? 'a status request' : 'a command'}, so it is back online.`);
    }
  }

  /** Config or discovery changed this lock's entry (name, door sensor). */
  update(entry: LockAccessoryEntry): void {
    if (this.disposed) return;
    this.entry = { ...entry };
    this.current = withEntryName(this.current, entry.name);
    this.converge();
    this.render(false);
    this.store();
  }

  /** Follows every applied change; returns the function that stops following. */
  onChange(listener: ChangeListener<LockChange>): () => void {
    return this.changes.add(listener);
  }

  /**
   * Runs a remote command through this lock's one serialiser, as Apple Home's writes do, and
   * rejects when it failed, so another controller (Matter) can answer with a failure.
   */
  async command(action: LockAction, origin: string): Promise<void> {
    if (this.disposed) throw new Error(`${this.name} is no longer served`);
    const outcome = await this.request(action, origin);
    if (!outcome.ok) throw outcome.error instanceof Error ? outcome.error : new Error(errorText(outcome.error));
  }

  dispose(): void {
    this.disposed = true;
    this.guard.dispose();
    for (const timer of this.timers) clearImmediate(timer);
    this.timers.clear();
    this.changes.clear();
    this.saver.dispose();
  }

  /** What the set of services and their names depend on. */
  private shape(): string {
    return `${this.name}\n${String(this.entry.doorSensor || this.current.doorSensorSeen)}\n${String(this.current.keypadSeen)}`;
  }

  /** Services follow config and state: acquired when wanted, pruned when not, handlers bound each time. */
  private converge(): void {
    this.renderedName = undefined;
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const name = this.name;
    if (this.accessory.displayName !== name) this.accessory.updateDisplayName(name);
    setAccessoryInformation(this.deps.api, this.accessory, { model: 'Smart Lock', serial: this.entry.id, name });

    // Door sensor only: the lock is in HomeKit on its own, so its contact sensor leads instead.
    const doorSensorOnly = this.entry.doorSensorOnly === true;
    const lock = ensureService(this.accessory, S.LockMechanism, !doorSensorOnly, name);
    if (lock) {
      if (!lock.isPrimaryService) lock.setPrimaryService(true);
      lock.getCharacteristic(C.LockTargetState).onSet((value) => {
        this.onTargetSet(value);
      });
    }
    const contact = ensureService(this.accessory, S.ContactSensor, doorSensorOnly || this.entry.doorSensor || this.current.doorSensorSeen, `${name} Door`);
    if (contact && contact.isPrimaryService !== doorSensorOnly) contact.setPrimaryService(doorSensorOnly);
    acquireService(this.accessory, S.Battery, `${name} Battery`);
    ensureService(this.accessory, S.Battery, this.current.keypadSeen, `${name} Keypad Battery`, KEYPAD_SUBTYPE);
    this.who.converge({ name, doorSensorOnly, people: this.entry.people ?? [], contact });
    this.guard.converge(this.entry, name);

    // Anything else a cached accessory carries (from an older version or config) is no longer valid.
    const wanted = new Set([S.AccessoryInformation.UUID, S.LockMechanism.UUID, S.ContactSensor.UUID, S.Battery.UUID]);
    for (const service of [...this.accessory.services]) {
      const strayBattery = service.UUID === S.Battery.UUID && service.subtype !== undefined && service.subtype !== '' && service.subtype !== KEYPAD_SUBTYPE;
      if ((!wanted.has(service.UUID) && !this.who.owns(service)) || strayBattery) this.accessory.removeService(service);
    }
    // Read guards are bound by the render that follows, once every characteristic exists.
  }

  private guardReads(): void {
    guardAccessoryReads(this.deps.api, this.accessory, !this.current.online);
    this.guardedOffline = !this.current.online;
  }

  private lockValue(): { current: number; target: number | undefined } {
    const C = this.deps.api.hap.Characteristic;
    switch (this.current.lock) {
      case 'locked':
        return { current: C.LockCurrentState.SECURED, target: C.LockTargetState.SECURED };
      case 'unlocked':
        return { current: C.LockCurrentState.UNSECURED, target: C.LockTargetState.UNSECURED };
      case 'unknown':
        return { current: C.LockCurrentState.UNKNOWN, target: undefined };
    }
  }

  /**
   * Pushes state into the characteristics; `setTarget` also moves LockTargetState to match. `only`
   * limits it to the services one event can change: each update runs through HAP's change events,
   * which showed in profiles of a busy listener.
   */
  private render(setTarget: boolean, only?: Aspect): void {
    const { Service: S, Characteristic: C } = this.deps.api.hap;
    const name = this.name;
    // Names and constants are set only after a change of name or services, not on every event.
    const naming = this.renderedName !== name;
    this.renderedName = name;
    const wants = (aspect: Aspect) => naming || only === undefined || only === aspect;
    const lock = wants('lock') ? findService(this.accessory, S.LockMechanism) : undefined;
    if (lock) {
      const value = this.lockValue();
      if (naming) lock.updateCharacteristic(C.Name, name);
      lock.updateCharacteristic(C.LockCurrentState, value.current);
      if (setTarget && value.target !== undefined) lock.updateCharacteristic(C.LockTargetState, value.target);
    }
    const door = wants('door') ? findService(this.accessory, S.ContactSensor) : undefined;
    if (door) {
      if (naming) door.updateCharacteristic(C.Name, `${name} Door`);
      if (this.current.door === 'closed') door.updateCharacteristic(C.ContactSensorState, C.ContactSensorState.CONTACT_DETECTED);
      if (this.current.door === 'open' || this.current.door === 'ajar') door.updateCharacteristic(C.ContactSensorState, C.ContactSensorState.CONTACT_NOT_DETECTED);
      // Nothing unknown is shown as known: until a first real position the sensor says it is not active.
      door.updateCharacteristic(C.StatusActive, this.current.door !== 'unknown');
    }
    if (wants('battery')) {
      renderBattery(this.deps.api, findService(this.accessory, S.Battery), this.current.battery, `${name} Battery`, naming);
      renderBattery(this.deps.api, findService(this.accessory, S.Battery, KEYPAD_SUBTYPE), this.current.keypadBattery, `${name} Keypad Battery`, naming);
    }
    // Setting an optional characteristic (ChargingState) adds it, so guards are bound after that.
    if (naming || this.guardedOffline !== !this.current.online) this.guardReads();
  }

  private store(): void {
    (this.accessory.context as Record<string, unknown>)[LOCK_CONTEXT_KEY] = this.current;
    this.saver.schedule();
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
    const timer = setImmediate(() => {
      this.timers.delete(timer);
      if (this.disposed) return;
      void this.request(action, APPLE_HOME);
    });
    this.timers.add(timer);
  }

  private request(action: LockAction, origin: string): Promise<CommandOutcome> {
    if (this.commands.current === action && this.commands.next === undefined) {
      this.deps.log.debug(`${this.name}: ${action} is already on its way; joining it.`);
    } else {
      this.deps.log.info(`${this.name}: ${action === 'lock' ? 'locking' : 'unlocking'} from ${origin}.`);
    }
    this.origins[action] = origin;
    return this.commands.request(action);
  }

  /** Rejects when the command failed (after reporting it), so those who joined it learn the outcome. */
  private async execute(action: LockAction): Promise<void> {
    const origin = this.origins[action];
    try {
      await this.deps.operate(this.entry.id, action);
    } catch (error) {
      this.failed(action, origin, error);
      throw error;
    }
    if (this.disposed) return;
    const wasOnline = this.current.online;
    this.current = commandSucceeded(this.current, action === 'lock' ? 'locked' : 'unlocked');
    this.who.commandSucceeded(action, origin);
    this.deps.log.info(`${this.name}: ${action === 'lock' ? 'locked' : 'unlocked'} from ${origin}.`);
    // A newer wish already waiting keeps its target; otherwise the target settles on the new state.
    this.render(this.commands.next === undefined);
    this.store();
    if (!wasOnline) this.logReachability('command');
    this.changes.emit({ cause: 'command', state: this.current, action });
  }

  private failed(action: LockAction, origin: string, error: unknown): void {
    if (this.disposed) return;
    this.deps.log.error(`${this.name}: could not ${action} from ${origin}: ${this.deps.describeCommandFailure(error)}`);
    if (this.commands.next !== undefined) return;
    const C = this.deps.api.hap.Characteristic;
    const lock = findService(this.accessory, this.deps.api.hap.Service.LockMechanism);
    // Revert to the current state; when that is unknown, to the opposite of what failed.
    const target = this.lockValue().target ?? (action === 'lock' ? C.LockTargetState.UNSECURED : C.LockTargetState.SECURED);
    lock?.updateCharacteristic(C.LockTargetState, target);
  }
}
