// Older versions kept each device's state, the auto-lock delay chosen in HomeKit and the chime
// switch in its accessory's context (Homebridge's accessory cache). The device registry keeps them
// now: they move over once, and leave the context only after the registry's file holds them.
import type { PlatformAccessory } from 'homebridge';

import { deviceEntrySchema, deviceKey, type DeviceEntry } from '../model/device-entry.js';

/** The keys older versions used in accessory.context; the devices keep the same names. */
const DEVICE_KEY = 'lockAccessDevice';
const VALUE_KEYS = ['lockAccess', 'lockAccessGuard', 'lockAccessDoorbell', 'lockAccessChime'];

/** What the migration needs of the device records. */
export interface RecordsTaking {
  adopt(key: string, entry: DeviceEntry | undefined, values: Record<string, unknown>): void;
  /** Resolves true once everything is on disk. */
  save(): Promise<boolean>;
}

/** Moves what cached accessories still carry into the records; true when there was something to move. */
export async function moveContextToRecords(accessories: readonly PlatformAccessory[], records: RecordsTaking): Promise<boolean> {
  const moved: PlatformAccessory[] = [];
  for (const accessory of accessories) {
    const context = accessory.context as Record<string, unknown>;
    const entry = deviceEntrySchema.safeParse(context[DEVICE_KEY]);
    if (!entry.success) continue;
    const values = Object.fromEntries(VALUE_KEYS.filter((key) => context[key] !== undefined).map((key) => [key, context[key]]));
    records.adopt(deviceKey(entry.data.kind, entry.data.id), entry.data, values);
    moved.push(accessory);
  }
  if (moved.length === 0 || !(await records.save())) return false;
  // Homebridge saves its cache (without these) with the next update or at shutdown.
  for (const accessory of moved) {
    const context = accessory.context as Record<string, unknown>;
    for (const key of [DEVICE_KEY, ...VALUE_KEYS]) Reflect.deleteProperty(context, key);
  }
  return true;
}
