// What every device keeps across restarts, in one file (devices.json under lock-access/): its entry
// (so a device can be served before the service is asked), its state, the choices made from a
// controller (auto-lock delay, chime) and its door history. Storage is handed in as a port; state
// is written after a quiet moment, a user's choice at once.
import { z } from 'zod/v3';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';
import type { DeviceStore } from './device-store.js';
import { DOOR_HISTORY_KEY } from './lock-device.js';
import { deviceEntrySchema, deviceKey, type DeviceEntry } from './device-entry.js';

export const DEVICES_FILE = 'devices.json';
/** Older versions kept each door's history in a file of its own: read once, then removed. */
const OLD_DOOR_HISTORY_FILE = /^door-history-[0-9a-f]{16}\.json$/;
const QUIET_MS = 1_000;
const MAX_DELAY_MS = 10_000;

/** What the records need of storage: atomic JSON files under lock-access/ (src/storage.ts). */
export interface RecordFiles {
  read<T>(name: string, schema: z.ZodType<T, z.ZodTypeDef, unknown>): Promise<T | undefined>;
  write(name: string, value: unknown, options?: { compact?: boolean }): Promise<void>;
  names(): Promise<string[]>;
  remove(name: string): Promise<void>;
}

const recordSchema = z.object({ entry: z.unknown().optional(), values: z.record(z.unknown()) });
const fileSchema = z.object({ version: z.literal(1), devices: z.record(recordSchema) });
const oldDoorHistorySchema = z.object({ lockId: z.string(), history: z.unknown() });

interface DeviceRecord {
  entry?: DeviceEntry | undefined;
  values: Record<string, unknown>;
}

export class DeviceRecords {
  private readonly writer: QuietWriter;

  private constructor(
    private readonly files: RecordFiles,
    private readonly records: Map<string, DeviceRecord>,
    private readonly log: Logger,
  ) {
    this.writer = new QuietWriter({
      write: () => this.write(),
      quietMs: QUIET_MS,
      maxDelayMs: MAX_DELAY_MS,
      onError: (error) => {
        log.warn(`The devices' saved state could not be written (${errorText(error)}); it is tried again with the next change.`);
      },
    });
  }

  /** Reads the file (an unreadable one is reported, and the devices start fresh) and takes in older versions' door histories. */
  static async open(files: RecordFiles, log: Logger): Promise<DeviceRecords> {
    const records = new Map<string, DeviceRecord>();
    try {
      const file = await files.read(DEVICES_FILE, fileSchema);
      for (const [key, record] of Object.entries(file?.devices ?? {})) {
        const entry = deviceEntrySchema.safeParse(record.entry);
        records.set(key, { entry: entry.success ? entry.data : undefined, values: record.values });
      }
    } catch (error) {
      log.warn(`The devices' saved state could not be read (${errorText(error)}); they start from what the service reports.`);
    }
    const opened = new DeviceRecords(files, records, log);
    await opened.takeOldDoorHistories();
    return opened;
  }

  /** The devices served in the last run, as they were then. */
  remembered(): DeviceEntry[] {
    return [...this.records.values()].flatMap((record) => (record.entry === undefined ? [] : [record.entry]));
  }

  /**
   * Values an older version kept elsewhere (the accessory cache): each is taken only where the
   * record has none, so running this again never undoes a newer value.
   */
  adopt(key: string, entry: DeviceEntry | undefined, values: Record<string, unknown>): void {
    const record = this.recordOf(key);
    if (record.entry === undefined && entry !== undefined) record.entry = entry;
    for (const [name, value] of Object.entries(values)) {
      if (value !== undefined && !(name in record.values)) record.values[name] = value;
    }
    this.writer.markDirty();
  }

  /** The device is served with this entry. */
  setEntry(device: DeviceEntry): void {
    const record = this.recordOf(deviceKey(device.kind, device.id));
    if (JSON.stringify(record.entry) === JSON.stringify(device)) return;
    record.entry = { ...device };
    this.writer.touch();
  }

  /** Where one device keeps its values. */
  storeFor(key: string): DeviceStore {
    let gone = false;
    return {
      read: (name) => this.records.get(key)?.values[name],
      write: (name, value, when) => {
        if (gone) return;
        this.recordOf(key).values[name] = value;
        if (when === 'batched') {
          this.writer.touch();
          return;
        }
        this.writer.markDirty();
        void this.writer.flush();
      },
      dispose: () => {
        gone = true;
      },
    };
  }

  /** The device left: nothing of it is kept. */
  forget(key: string): void {
    if (this.records.delete(key)) this.writer.touch();
  }

  /** Writes now; true once everything is on disk (so the older copies may go). */
  async save(): Promise<boolean> {
    this.writer.markDirty();
    await this.writer.flush();
    return !this.writer.pending;
  }

  /** Writes what changed (shutdown). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private recordOf(key: string): DeviceRecord {
    let record = this.records.get(key);
    if (!record) {
      record = { values: {} };
      this.records.set(key, record);
    }
    return record;
  }

  private write(): Promise<void> {
    const devices = Object.fromEntries([...this.records].map(([key, record]) => [key, record.entry === undefined ? { values: record.values } : record]));
    return this.files.write(DEVICES_FILE, { version: 1, devices }, { compact: true });
  }

  private async takeOldDoorHistories(): Promise<void> {
    let names: string[] = [];
    try {
      names = (await this.files.names()).filter((name) => OLD_DOOR_HISTORY_FILE.test(name));
    } catch (error) {
      this.log.warn(`Door histories of an earlier version could not be listed (${errorText(error)}).`);
    }
    if (names.length === 0) return;
    for (const name of names) {
      try {
        const old = await this.files.read(name, oldDoorHistorySchema);
        if (old) this.adopt(deviceKey('lock', old.lockId), undefined, { [DOOR_HISTORY_KEY]: old.history });
      } catch (error) {
        this.log.warn(`A door history of an earlier version could not be read and starts anew (${errorText(error)}).`);
      }
    }
    // The old files go only once their histories are safely in the new file.
    if (await this.save()) await Promise.all(names.map((name) => this.files.remove(name).catch(() => undefined)));
  }
}
