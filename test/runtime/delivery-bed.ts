// The bed of the delivery tests in process: fake timers that also run on by themselves (for the
// start's polling; a test jumps them ahead), the simulator and the plugin started once for the file,
// stopped and removed after it; stepping fake time and reading the delivery sensor on that plugin.
import { afterAll, beforeAll, vi } from 'vitest';

import { deliverySensorValue, withinFakeTime } from '../harness/fake-time-steps.js';
import type { InProcessPlatform } from '../harness/in-process.js';
import type { Simulator } from '../sim/index.js';

export interface DeliveryBed {
  readonly sim: Simulator;
  readonly plugin: InProcessPlatform;
  /** Steps fake time on until `probe` gives a value or `limitMs` of fake time have gone. */
  readonly within: <T>(limitMs: number, probe: () => T | undefined | Promise<T | undefined>, what: string) => Promise<T>;
  /** The "Lock Access Events Stopped" sensor's ContactSensorState. */
  readonly sensorValue: () => unknown;
}

export function deliveryBed(start: () => Promise<{ sim: Simulator; plugin: InProcessPlatform }>): DeliveryBed {
  let started: { sim: Simulator; plugin: InProcessPlatform } | undefined;
  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], shouldAdvanceTime: true });
    started = await start();
  });
  afterAll(async () => {
    vi.useRealTimers();
    await started?.plugin.stop();
    await started?.plugin.cleanup();
    await started?.sim.close();
  });
  const ready = () => {
    if (started === undefined) throw new Error('the plugin starts before the file\'s cases');
    return started;
  };
  return {
    get sim() {
      return ready().sim;
    },
    get plugin() {
      return ready().plugin;
    },
    within: (limitMs, probe, what) => withinFakeTime(ready().plugin, limitMs, probe, what),
    sensorValue: () => deliverySensorValue(ready().plugin),
  };
}
