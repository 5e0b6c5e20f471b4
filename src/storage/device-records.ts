// What every device keeps across restarts, in one file (devices.json under lock-access/): its entry
// (so a device can be served before the service is asked), its state, the choices made from a
// controller (auto-lock delay, chime) and its door history. Storage is handed in as a port; state
// is written after a quiet moment, a user's choice at once. A file that cannot be read for a while
// is never written over (only a damaged one is replaced), and a failed write is tried again.
import { z } from 'zod/v3';

import { deviceEntrySchema, deviceKey, type DeviceEntry } from '../model/device-entry.js';
import type { DeviceRecordsPort } from '../model/device-registry.js';
import type { DeviceStore } from '../model/device-store.js';
import { errorText } from '../util/error-text.js';
import { KeptFileRetry, readKept, type KeptRead } from '../util/kept-file.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';
import { moveOldDoorHistories } from './old-door-histories.js';

export const DEVICES_FILE = 'devices.json';
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

interface DeviceRecord {
  entry?: DeviceEntry | undefined;
  values: Record<string, unknown>;
}

type DevicesFile = z.infer<typeof fileSchema>;

function recordsOf(file: DevicesFile | undefined): Map<string, DeviceRecord> {
  const records = new Map<string, DeviceRecord>();
  for (const [key, record] of Object.entries(file?.devices ?? {})) {
    const entry = deviceEntrySchema.safeParse(record.entry);
    records.set(key, { entry: entry.success ? entry.data : undefined, values: record.values });
  }
  return records;
}

export class DeviceRecords implements DeviceRecordsPort {
  private readonly writer: QuietWriter;
  private readonly writeRetry = new KeptFileRetry();
  private readonly readRetry = new KeptFileRetry();
  /** The file could not be read yet: it may hold what the devices kept, so nothing is written over it. */
  private unread = false;
  /** Devices that left while the file could not be read: what the file kept of them goes too. */
  private readonly forgottenUnread = new Set<string>();

  private constructor(
    private readonly files: RecordFiles,
    private readonly records: Map<string, DeviceRecord>,
    private readonly log: Logger,
  ) {
    this.writer = new QuietWriter({
      write: () => this.write(),
      quietMs: QUIET_MS,
      maxDelayMs: MAX_DELAY_MS,
      retry: this.writeRetry,
      onError: (error) => {
        // Once per fault, not at every try.
        if (this.writeRetry.failures === 0) log.warn(`${DEVICES_FILE} (the devices' saved state) could not be written (${errorText(error)}); it is tried again shortly.`);
      },
      onRecovered: () => {
        log.info(`${DEVICES_FILE} is written again; nothing of the devices' saved state was lost.`);
      },
    });
  }

  /**
   * Reads the file and takes in older versions' door histories. A damaged file is reported and
   * replaced (the devices start from what the service reports); one that cannot be read is kept,
   * not written over, and read again until it can be.
   */
  static async open(files: RecordFiles, log: Logger): Promise<DeviceRecords> {
    const read = await readKept(() => files.read(DEVICES_FILE, fileSchema));
    const opened = new DeviceRecords(files, recordsOf(read.kind === 'found' ? read.value : undefined), log);
    if (read.kind === 'damaged') {
      log.warn(`${DEVICES_FILE} (the devices' saved state) was damaged (${read.reason}); it is replaced, and the devices start from what the service reports.`);
    }
    if (read.kind === 'unreadable') {
      log.warn(`${DEVICES_FILE} (the devices' saved state) could not be read (${read.reason}); it is kept, not written over, and read again: until then the devices start from what the service reports. If this lasts, check the disk and the permissions of the plugin's storage folder.`);
      opened.unread = true;
      opened.readRetry.failed(() => void opened.readAgain());
    }
    await moveOldDoorHistories(files, opened, log);
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
    if (this.unread) this.forgottenUnread.add(key);
    if (this.records.delete(key)) this.writer.touch();
  }

  /** Writes now; true once everything is on disk (so the older copies may go). Never while the file could not be read yet. */
  async save(): Promise<boolean> {
    this.writer.markDirty();
    await this.writer.flush();
    return !this.unread && !this.writer.pending;
  }

  /** Writes what changed. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Shutdown: writes what changed, then tries nothing more. */
  async close(): Promise<void> {
    await this.writer.flush();
    this.stop();
  }

  /** No more reads or writes tried again later. */
  stop(): void {
    this.readRetry.stop();
    this.writeRetry.stop();
  }

  /**
   * The file that could not be read at start, read again. Once it can be, what it kept stays and
   * what this run learnt or chose is laid over it, value by value; then it is written.
   */
  private async readAgain(): Promise<void> {
    const read: KeptRead<DevicesFile> = await readKept(() => this.files.read(DEVICES_FILE, fileSchema));
    if (read.kind === 'unreadable') {
      this.readRetry.failed(() => void this.readAgain());
      return;
    }
    for (const [key, kept] of recordsOf(read.kind === 'found' ? read.value : undefined)) {
      if (this.forgottenUnread.has(key)) continue;
      const now = this.records.get(key);
      this.records.set(key, { entry: now?.entry ?? kept.entry, values: { ...kept.values, ...now?.values } });
    }
    this.unread = false;
    this.forgottenUnread.clear();
    this.log.info(`${DEVICES_FILE} can be read again: what it kept stays, with this run's changes added. Choices kept in it (the chime, the auto-lock delay) apply again from the next restart.`);
    this.writer.markDirty();
    await this.writer.flush();
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
    // Held, not dropped: the records keep every change, written once the file could be read.
    if (this.unread) return Promise.resolve();
    const devices = Object.fromEntries([...this.records].map(([key, record]) => [key, record.entry === undefined ? { values: record.values } : record]));
    return this.files.write(DEVICES_FILE, { version: 1, devices }, { compact: true });
  }
}
