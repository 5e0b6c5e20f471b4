// Who and how on one lock accessory: LockManagement with the last action, a switch per
// person that fires once per real unlock or lock, and the door's history for the Eve app. The lock
// accessory converges these with its own services and hands over every applied event.
import type { API, PlatformAccessory, Service } from 'homebridge';

import type { DoorHistorySource } from './door-history-store.js';
import { EVE_HISTORY_SERVICE_UUID } from './eve-characteristics.js';
import { EveDoorHistory } from './eve-door-service.js';
import type { LockChange } from '../model/device-changes.js';
import { LAST_ACTION, commandAction, lastActionOf } from '../model/last-action.js';
import { AUTO_LOCK_ORIGIN } from '../model/lock-guard.js';
import { convergeLockManagement, showLastAction } from './lock-management-service.js';
import { convergePersonSwitches, isPersonSwitch, pressPersonSwitch } from './person-switches.js';
import { personTrigger, type Person } from '../model/person-triggers.js';
import type { Logger } from '../util/logger.js';

export interface WhoAndHowShape {
  name: string;
  doorSensorOnly: boolean;
  people: readonly Person[];
  /** The lock's ContactSensor when it has one: the door history goes with it. */
  contact: Service | undefined;
}

/** Reasons a person's trigger stays quiet that someone waiting for an automation wants to read. */
const WORTH_SAYING = new Set(['it arrived more than 60 seconds late', 'the same event arrived twice', 'an older event arrived after a newer one']);

export class WhoAndHow {
  private readonly eve: EveDoorHistory;
  private people = new Map<string, Person>();
  private peopleIds: ReadonlySet<string> = new Set();
  private lockServices = true;
  private lastFired: string | undefined;

  constructor(
    private readonly deps: { api: API; log: Logger; now?: (() => number) | undefined; doorHistory?: DoorHistorySource | undefined },
    private readonly accessory: PlatformAccessory,
    lockId: string,
  ) {
    this.eve = new EveDoorHistory(deps.api, accessory, deps.doorHistory?.forLock(lockId), deps.now ?? Date.now);
  }

  /** Acquires what the shape wants and prunes what it no longer wants. */
  converge(shape: WhoAndHowShape): void {
    this.lockServices = !shape.doorSensorOnly;
    this.people = new Map(shape.people.map((person) => [person.userId, person]));
    this.peopleIds = new Set(this.people.keys());
    convergeLockManagement(this.deps.api, this.accessory, this.lockServices, shape.name);
    convergePersonSwitches(this.deps.api, this.accessory, shape.people);
    this.eve.converge(shape.contact, shape.name);
  }

  /** Services this class manages: the lock accessory's sweep of stray services leaves them alone. */
  owns(service: Service): boolean {
    const { Service: S } = this.deps.api.hap;
    return [S.LockManagement.UUID, S.ServiceLabel.UUID, EVE_HISTORY_SERVICE_UUID].includes(service.UUID) || isPersonSwitch(this.deps.api, service);
  }

  /**
   * Every event of this lock after the lock device took it, applied or found older than one already
   * applied (a stale one). `log` is the lock's own (it prefixes the lock's name).
   */
  apply(change: Extract<LockChange, { cause: 'event' | 'stale' }>, log: Logger): void {
    const { event } = change;
    const context = { ...change.context, applied: change.cause === 'event' };
    if (change.byAutoLock) {
      // The lock callback that follows the plugin's own auto-lock: secured by the auto-secure
      // timeout, and no person's trigger fires (nobody locked it).
      if (context.applied && this.lockServices) showLastAction(this.deps.api, this.accessory, LAST_ACTION.securedByAutoSecureTimeout);
      return;
    }
    if (context.applied) {
      const action = lastActionOf(event);
      if (action !== undefined && this.lockServices) showLastAction(this.deps.api, this.accessory, action);
      if (event.kind === 'doorState' && event.state !== 'init' && event.state !== 'unknown') {
        this.eve.record(event.at ?? context.receivedAt, event.state !== 'closed');
      }
    }
    const decision = personTrigger(event, { ...context, people: this.peopleIds, lastFired: this.lastFired });
    if (decision.fire) {
      pressPersonSwitch(this.deps.api, this.accessory, decision.userId, decision.press);
      this.lastFired = decision.key;
      const who = this.people.get(decision.userId)?.name ?? decision.userId;
      log.debug(`${who}'s automation trigger: ${decision.press} press.`);
    } else if (WORTH_SAYING.has(decision.reason)) {
      const userId = event.kind === 'lockState' ? event.actor.userId : undefined;
      const who = userId === undefined ? 'the person' : (this.people.get(userId)?.name ?? userId);
      log.info(`${who}'s automation trigger stays quiet: ${decision.reason}.`);
    }
  }

  /** A lock or unlock from Apple Home (or the plugin's own auto-lock) went through. */
  commandSucceeded(action: 'lock' | 'unlock', origin?: string): void {
    if (!this.lockServices) return;
    const autoLock = origin === AUTO_LOCK_ORIGIN && action === 'lock';
    showLastAction(this.deps.api, this.accessory, autoLock ? LAST_ACTION.securedByAutoSecureTimeout : commandAction(action));
  }
}
