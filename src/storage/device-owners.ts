// Which accounts hold each device and which one owns it (`device-accounts.json`), kept so the owner
// stays the same across restarts and each account knows its devices of the last run. Written only
// when the block has extra accounts: a block of one account keeps exactly the files it had.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

export const DEVICE_OWNERS_FILE = 'device-accounts.json';

const recordSchema = z.object({ owner: z.string().optional(), holders: z.array(z.string()) });
const fileSchema = z.object({ version: z.literal(1), devices: z.record(recordSchema) });

export type DeviceHolding = z.infer<typeof recordSchema>;

/** Every kept device's holders and owner, for readers outside the plugin (the settings page); empty when none is kept. */
export async function readDeviceHoldings(storage: Storage): Promise<Record<string, DeviceHolding>> {
  return (await storage.read(DEVICE_OWNERS_FILE, fileSchema))?.devices ?? {};
}

export class DeviceOwnersFile {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly storage: Storage,
    private readonly log: Logger,
    private devices: Record<string, DeviceHolding>,
  ) {}

  /** An unreadable file is logged and starts empty: the owner rule's other steps still choose an owner. */
  static async open(storage: Storage, log: Logger): Promise<DeviceOwnersFile> {
    try {
      const file = await storage.read(DEVICE_OWNERS_FILE, fileSchema);
      return new DeviceOwnersFile(storage, log, file?.devices ?? {});
    } catch (error) {
      log.warn(`Could not read ${storage.file(DEVICE_OWNERS_FILE)} (${errorText(error)}); each shared device's owner is chosen again.`);
      return new DeviceOwnersFile(storage, log, {});
    }
  }

  /** `lock:ID` -> its holders and owner of the last run; undefined when none was kept. */
  get(key: string): DeviceHolding | undefined {
    return this.devices[key];
  }

  /** Keeps `next` (every device) when it differs from what is kept. */
  set(next: Record<string, DeviceHolding>): void {
    if (JSON.stringify(next) === JSON.stringify(this.devices)) return;
    this.devices = next;
    const snapshot = { version: 1 as const, devices: next };
    this.writing = this.writing.then(() => this.storage.write(DEVICE_OWNERS_FILE, snapshot)).catch((error: unknown) => {
      this.log.warn(`Could not save ${DEVICE_OWNERS_FILE} (${errorText(error)}); the shared devices' owners are kept in memory and saved with the next change.`);
    });
  }

  flush(): Promise<void> {
    return this.writing;
  }
}
