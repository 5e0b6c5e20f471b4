// What a device is, per kind, as one zod schema: its id and name, and its settings. The config's
// entries are made of the same settings (config.ts adds what only the config knows: a missing name,
// hidden), discovery merges them into these entries, the device registry makes each device from
// one, and devices.json keeps it for the next start. Each setting is declared here once, with the
// words a user sees when it is wrong.
import { z } from 'zod/v3';

import { DEFAULT_MOTION_TIMEOUT_SECONDS } from '../settings.js';
import { fieldProblem } from '../util/field-messages.js';
import { transient } from '../util/transient.js';

/** 0 or absent: off; else 10 seconds to a day. */
function alertSeconds(field: string) {
  return z
    .number({ message: fieldProblem('config.field.seconds', { field }) })
    .int()
    .min(0, fieldProblem('config.field.offOrRange', { field, min: 10, max: 86400 }))
    .max(86400, fieldProblem('config.field.offOrRange', { field, min: 10, max: 86400 }))
    .refine((value) => value === 0 || value >= 10, { message: fieldProblem('config.field.offOrRange', { field, min: 10, max: 86400 }) })
    .optional();
}

/** A lock's settings. Absent, false and 0 mean off. */
export const lockSettingsSchema = z.object({
  doorSensor: z.boolean().default(false),
  /** For a lock already in HomeKit on its own: only its door sensor. Off when absent. */
  doorSensorOnly: z.boolean({ message: fieldProblem('config.field.switch', { field: 'doorSensorOnly' }) }).optional(),
  /** Lock again this many seconds after the lock is unlocked and the door closed (needs doorSensor). */
  autoLockSeconds: z.number({ message: fieldProblem('config.field.seconds', { field: 'autoLockSeconds' }) }).int().min(0, fieldProblem('config.field.offToMax', { field: 'autoLockSeconds', max: 3600 })).max(3600, fieldProblem('config.field.offToMax', { field: 'autoLockSeconds', max: 3600 })).optional(),
  /** A "Left Open" contact sensor trips after the door has been open this long. */
  leftOpenSeconds: alertSeconds('leftOpenSeconds'),
  /** A "Left Unlocked" contact sensor trips after the lock has been unlocked this long. */
  leftUnlockedSeconds: alertSeconds('leftUnlockedSeconds'),
});

/** A doorbell's settings. */
export const doorbellSettingsSchema = z.object({
  /** How long the motion sensor stays on after motion. */
  motionTimeoutSeconds: z.number().int().min(1, fieldProblem('config.field.atLeast', { field: 'motionTimeoutSeconds', min: 1 })).max(3600, fieldProblem('config.field.atMost', { field: 'motionTimeoutSeconds', max: 3600 })).default(DEFAULT_MOTION_TIMEOUT_SECONDS),
});

/** Someone whose unlocks and locks become an automation trigger: their switch is subtype `person:<userId>`. */
export const personSchema = z.object({ userId: z.string(), name: z.string() });

export const lockEntrySchema = z
  .object({
    kind: z.literal('lock'),
    id: z.string(),
    /** The name the config or the service gives. */
    name: z.string(),
    /** Whose unlocks and locks get a trigger of their own (the config's people, on every lock). */
    people: z.array(personSchema).readonly().optional(),
  })
  .merge(lockSettingsSchema);

export const doorbellEntrySchema = z.object({ kind: z.literal('doorbell'), id: z.string(), name: z.string() }).merge(doorbellSettingsSchema);

export const deviceEntrySchema = z.discriminatedUnion('kind', [lockEntrySchema, doorbellEntrySchema]);

export type DeviceEntry = z.infer<typeof deviceEntrySchema>;
export type LockEntry = z.infer<typeof lockEntrySchema>;
export type DoorbellEntry = z.infer<typeof doorbellEntrySchema>;
export type LockSettings = z.input<typeof lockSettingsSchema>;
export type DoorbellSettings = z.input<typeof doorbellSettingsSchema>;
export type Person = z.infer<typeof personSchema>;
export type DeviceKind = DeviceEntry['kind'];

// The settings' defaults, worked out once for a start's burst of entries (one per device, hundreds)
// rather than by a zod parse each; kept only while in use. onlyOn copies them, so they never change.
const lockDefaults = transient(() => ({ values: lockSettingsSchema.parse({}), keys: Object.keys(lockSettingsSchema.shape) }));
const doorbellDefaults = transient(() => ({ values: doorbellSettingsSchema.parse({}), keys: Object.keys(doorbellSettingsSchema.shape) }));

/**
 * The entry of a device with these settings (from a config entry, or none for a device only the
 * service lists): the settings every entry has (their defaults when not given), and of the others
 * only those that are on, so two entries that mean the same are the same.
 */
export function lockEntry(id: string, name: string, settings?: LockSettings): LockEntry {
  const defaults = lockDefaults();
  return { kind: 'lock', id, name, ...onlyOn(defaults.values, defaults.keys, settings) };
}

export function doorbellEntry(id: string, name: string, settings?: DoorbellSettings): DoorbellEntry {
  const defaults = doorbellDefaults();
  return { kind: 'doorbell', id, name, ...onlyOn(defaults.values, defaults.keys, settings) };
}

/** `defaults` with each of `keys` that `given` has: always for a key with a default, else only when it is on. */
function onlyOn<T extends Record<string, unknown>>(defaults: T, keys: readonly string[], given: object | undefined): T {
  const values: Record<string, unknown> = { ...given };
  const picked: Record<string, unknown> = { ...defaults };
  for (const key of keys) {
    const value = values[key];
    if (value !== undefined && (key in defaults || (value !== false && value !== 0))) picked[key] = value;
  }
  return picked as T;
}

/** `lock:ID` or `doorbell:ID`: one key space for both kinds. */
export function deviceKey(kind: DeviceKind, id: string): string {
  return `${kind}:${id}`;
}
