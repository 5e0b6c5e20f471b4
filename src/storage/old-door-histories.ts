// Older versions kept each door's history in a file of its own (door-history-<hash>.json); the
// device records keep it now. Each is taken in once, and the old files go only after the records'
// file holds their histories.
import { z } from 'zod/v3';

import { deviceKey } from '../model/device-entry.js';
import { DOOR_HISTORY_KEY } from '../model/lock-device.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

const OLD_DOOR_HISTORY_FILE = /^door-history-[0-9a-f]{16}\.json$/;
const oldDoorHistorySchema = z.object({ lockId: z.string(), history: z.unknown() });

/** What the move needs of storage. */
export interface OldHistoryFiles {
  read<T>(name: string, schema: z.ZodType<T, z.ZodTypeDef, unknown>): Promise<T | undefined>;
  names(): Promise<string[]>;
  remove(name: string): Promise<void>;
}

/** What the move needs of the device records. */
export interface RecordsTakingHistories {
  adopt(key: string, entry: undefined, values: Record<string, unknown>): void;
  /** Resolves true once everything is on disk. */
  save(): Promise<boolean>;
}

export async function moveOldDoorHistories(files: OldHistoryFiles, records: RecordsTakingHistories, log: Logger): Promise<void> {
  let names: string[] = [];
  try {
    names = (await files.names()).filter((name) => OLD_DOOR_HISTORY_FILE.test(name));
  } catch (error) {
    log.warn(`Door histories of an earlier version could not be listed (${errorText(error)}).`);
  }
  if (names.length === 0) return;
  for (const name of names) {
    try {
      const old = await files.read(name, oldDoorHistorySchema);
      if (old) records.adopt(deviceKey('lock', old.lockId), undefined, { [DOOR_HISTORY_KEY]: old.history });
    } catch (error) {
      log.warn(`A door history of an earlier version could not be read and starts anew (${errorText(error)}).`);
    }
  }
  if (await records.save()) await Promise.all(names.map((name) => files.remove(name).catch(() => undefined)));
}
