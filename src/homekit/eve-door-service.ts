// "When was the door last opened?": Eve's history service beside the contact sensor, and Eve's
// opening count and last-opened time on it. Apple Home ignores these; the Eve app shows them.
import type { API, CharacteristicValue, PlatformAccessory, Service } from 'homebridge';

import type { DoorHistoryFile } from './door-history-store.js';
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
import {
  historyEntries,
  historyStatus,
  lastActivation,
  newDoorHistory,
  parseDoorHistory,
  recordDoor,
  requestedEntry,
  resetDoorCount,
  type DoorHistoryState,
} from './eve-door-history.js';
import { bindOwnRead } from './offline-reads.js';

const END_OF_TRANSFER = Buffer.from([0]).toString('base64');

export class EveDoorHistory {
  private state: DoorHistoryState;
  /** Where the running transfer continues; undefined when Eve has not asked (or got everything). */
  private cursor: number | undefined;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly file: DoorHistoryFile | undefined,
    private readonly now: () => number,
  ) {
    const nowSeconds = Math.round(now() / 1000);
    this.state = parseDoorHistory(file?.load(), nowSeconds) ?? newDoorHistory(nowSeconds);
  }

  /** With a contact sensor, the history service exists and both carry Eve's characteristics; without, it is pruned. */
  converge(contact: Service | undefined, name: string): void {
    const { hap } = this.api;
    if (!contact) {
      const stale = findEveHistoryService(this.accessory);
      if (stale) this.accessory.removeService(stale);
      return;
    }
    const history = acquireEveHistoryService(hap, this.accessory, `${name} History`);
    acquireEveCharacteristic(hap, history, HISTORY_REQUEST).onSet((value) => {
      this.cursor = (typeof value === 'string' ? requestedEntry(Buffer.from(value, 'base64')) : undefined) ?? this.state.firstEntry;
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
  }

  /** An applied door event: open or ajar (true) or closed (false), at its own time or when it arrived. */
  record(atMs: number, open: boolean): void {
    const change = recordDoor(this.state, Math.round(Math.min(atMs, this.now()) / 1000), open);
    if (!change.recorded) return;
    this.state = change.state;
    this.render();
    this.file?.save(this.state);
  }

  get history(): DoorHistoryState {
    return this.state;
  }

  private resetCount(value: CharacteristicValue): void {
    this.state = resetDoorCount(this.state, typeof value === 'number' ? Math.max(0, Math.round(value)) : 0);
    this.render();
    this.file?.save(this.state);
  }

  private nextEntries(): string {
    if (this.cursor === undefined) return END_OF_TRANSFER;
    const { data, next } = historyEntries(this.state, this.cursor);
    this.cursor = next > this.state.lastEntry && data.length === 1 ? undefined : next;
    return data.toString('base64');
  }

  private render(): void {
    const { hap } = this.api;
    const history = findEveHistoryService(this.accessory);
    const contact = this.accessory.services.find((s) => s.UUID === hap.Service.ContactSensor.UUID);
    if (!history || !contact) return;
    history.characteristics.find((c) => c.UUID === HISTORY_STATUS.uuid)?.updateValue(historyStatus(this.state).toString('base64'));
    history.characteristics.find((c) => c.UUID === RESET_TOTAL.uuid)?.updateValue(this.state.resetTotal ?? 0);
    contact.characteristics.find((c) => c.UUID === LAST_ACTIVATION.uuid)?.updateValue(lastActivation(this.state));
    contact.characteristics.find((c) => c.UUID === TIMES_OPENED.uuid)?.updateValue(this.state.timesOpened);
  }
}
