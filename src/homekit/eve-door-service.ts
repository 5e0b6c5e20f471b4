// "When was the door last opened?": Eve's history service beside the contact sensor, and Eve's
// opening count and last-opened time on it, rendered from the lock's door history (model state).
// Apple Home ignores these; the Eve app shows them.
import type { API, CharacteristicValue, PlatformAccessory, Service } from 'homebridge';

import { lastActivation, type DoorHistoryState } from '../model/door-history.js';
import {
  acquireEveCharacteristic,
  acquireEveHistoryService,
  findEveHistoryService,
  HISTORY_ENTRIES,
  HISTORY_REQUEST,
  HISTORY_STATUS,
  LAST_ACTIVATION,
  RESET_TOTAL,
  SET_TIME,
  TIMES_OPENED,
} from './eve-characteristics.js';
import { historyEntries, historyStatus, requestedEntry } from './eve-door-history.js';
import { bindOwnRead } from './offline-reads.js';

const END_OF_TRANSFER = Buffer.from([0]).toString('base64');

/** What Eve's binding needs of the lock: its door history, and the reset of the opening count. */
export interface DoorHistoryOwner {
  readonly doorHistory: DoorHistoryState;
  resetDoorCount(resetTotal: number): void;
}

export class EveDoorHistory {
  /** Where the running transfer continues; undefined when Eve has not asked (or got everything). */
  private cursor: number | undefined;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly lock: DoorHistoryOwner,
  ) {}

  /** Binds the door's history: Eve's history service beside the contact sensor, Eve's characteristics on both. */
  bind(contact: Service, name: string): Service {
    const { hap } = this.api;
    const history = acquireEveHistoryService(hap, this.accessory, `${name} History`);
    acquireEveCharacteristic(hap, history, HISTORY_REQUEST).onSet((value) => {
      this.cursor = (typeof value === 'string' ? requestedEntry(Buffer.from(value, 'base64')) : undefined) ?? this.lock.doorHistory.firstEntry;
    });
    bindOwnRead(acquireEveCharacteristic(hap, history, HISTORY_ENTRIES), () => this.nextEntries());
    // Eve sets its clock here; the plugin keeps its own time.
    acquireEveCharacteristic(hap, history, SET_TIME).onSet(() => undefined);
    acquireEveCharacteristic(hap, history, RESET_TOTAL).onSet((value) => {
      this.resetCount(value);
    });
    acquireEveCharacteristic(hap, history, HISTORY_STATUS);
    acquireEveCharacteristic(hap, contact, LAST_ACTIVATION);
    acquireEveCharacteristic(hap, contact, TIMES_OPENED);
    this.render();
    return history;
  }

  private resetCount(value: CharacteristicValue): void {
    this.lock.resetDoorCount(typeof value === 'number' ? Math.max(0, Math.round(value)) : 0);
    this.render();
  }

  private nextEntries(): string {
    if (this.cursor === undefined) return END_OF_TRANSFER;
    const history = this.lock.doorHistory;
    const { data, next } = historyEntries(history, this.cursor);
    this.cursor = next > history.lastEntry && data.length === 1 ? undefined : next;
    return data.toString('base64');
  }

  /** Shows the lock's door history (after each door event, and a reset). */
  render(): void {
    const { hap } = this.api;
    const state = this.lock.doorHistory;
    const history = findEveHistoryService(this.accessory);
    const contact = this.accessory.services.find((s) => s.UUID === hap.Service.ContactSensor.UUID);
    if (!history || !contact) return;
    history.characteristics.find((c) => c.UUID === HISTORY_STATUS.uuid)?.updateValue(historyStatus(state).toString('base64'));
    history.characteristics.find((c) => c.UUID === RESET_TOTAL.uuid)?.updateValue(state.resetTotal ?? 0);
    contact.characteristics.find((c) => c.UUID === LAST_ACTIVATION.uuid)?.updateValue(lastActivation(state));
    contact.characteristics.find((c) => c.UUID === TIMES_OPENED.uuid)?.updateValue(state.timesOpened);
  }
}
