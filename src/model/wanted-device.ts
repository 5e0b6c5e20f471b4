// A device the plugin should show: the outcome of the device-set rules, the entry the device
// registry makes each device from, and what it remembers for the next start.
import { z } from 'zod/v3';

export const wantedDeviceSchema = z.discriminatedUnion('kind', [
  /** doorSensorOnly: only the door sensor; absent means off. The guard settings: absent or 0 means off. */
  z.object({
    kind: z.literal('lock'), id: z.string(), name: z.string(), doorSensor: z.boolean(), doorSensorOnly: z.boolean().optional(),
    autoLockSeconds: z.number().optional(), leftOpenSeconds: z.number().optional(), leftUnlockedSeconds: z.number().optional(),
  }),
  z.object({ kind: z.literal('doorbell'), id: z.string(), name: z.string(), motionTimeoutSeconds: z.number() }),
]);

export type WantedDevice = z.infer<typeof wantedDeviceSchema>;
export type WantedLock = Extract<WantedDevice, { kind: 'lock' }>;
export type WantedDoorbell = Extract<WantedDevice, { kind: 'doorbell' }>;
export type DeviceKind = WantedDevice['kind'];

/** `lock:ID` or `doorbell:ID`: one key space for both kinds. */
export function deviceKey(kind: DeviceKind, id: string): string {
  return `${kind}:${id}`;
}
