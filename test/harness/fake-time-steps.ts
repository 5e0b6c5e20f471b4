// Stepping fake time on in a test of the plugin run in this process: a second of fake time, then a
// short real pause so the plugin's file writes and sockets can answer, until what the test waits
// for is there. Also the delivery sensor's value, which such tests read after each step.
import hap from '@homebridge/hap-nodejs';
import { vi } from 'vitest';

import { read } from '../homekit/hap-env.js';
import type { InProcessPlatform } from './in-process.js';

const { Service: S, Characteristic: C } = hap;

/** A pause on the real clock, taken before a test installs fake timers. */
export const realPause = ((realSetTimeout) => (ms: number) => new Promise<void>((resolve) => { realSetTimeout(resolve, ms); }))(globalThis.setTimeout);

/** Steps fake time on, a second at a time, until `probe` gives a value or `limitMs` of fake time have gone. */
export async function withinFakeTime<T>(plugin: InProcessPlatform, limitMs: number, probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (let waited = 0; ; waited += 1_000) {
    const value = await probe();
    if (value !== undefined) return value;
    if (waited >= limitMs) throw new Error(`no ${what} within ${String(limitMs / 1_000)} s of fake time\n${plugin.text()}`);
    await vi.advanceTimersByTimeAsync(1_000);
    await realPause(20);
  }
}

/** The "Lock Access Events Stopped" sensor's ContactSensorState. */
export function deliverySensorValue(plugin: InProcessPlatform): unknown {
  const accessory = plugin.accessory('Lock Access');
  if (!accessory) throw new Error('no "Lock Access" accessory');
  return read(accessory, S.ContactSensor, C.ContactSensorState, 'delivery');
}
