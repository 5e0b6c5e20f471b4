// Scripted runs of the patterns that used to leave a wrong state behind: a flapping
// bridge, a flapping battery, a lock clock reset to the past by a battery run-out, a lock clock that
// jumped ahead. Each run names the state it must end in, so tests and the demo can check it.
import type { ScenarioStep } from './scenario.js';

export interface StateScenario {
  steps: ScenarioStep[];
  /** What a client of the service must show after the last step. */
  endsWith: { lock?: 'locked' | 'unlocked'; bridge?: 'online' | 'offline'; lockBattery?: 'low' | 'normal' };
}

export interface ScenarioIds {
  lockId: string;
}

/** Offline, online, offline, online: the same bodies again and again, each one true when sent. */
export function bridgeFlapping({ lockId }: ScenarioIds, cycles = 2): StateScenario {
  const steps: ScenarioStep[] = [];
  for (let i = 0; i < cycles; i += 1) {
    steps.push({ event: 'bridge-offline', options: { lockId }, description: 'the Wi-Fi bridge loses its connection' });
    steps.push({ event: 'bridge-online', options: { lockId }, description: 'the Wi-Fi bridge is back' });
  }
  return { steps, endsWith: { bridge: 'online' } };
}

/** Low, fine, low: a lock whose batteries sag in the cold and recover in the sun, identical bodies. */
export function batteryFlapping({ lockId }: ScenarioIds): StateScenario {
  return {
    steps: [
      { event: 'lock-battery', options: { lockId, level: '2day' }, description: 'the lock warns: two days of battery left' },
      { event: 'lock-battery', options: { lockId, level: 'none' }, description: 'the batteries recover' },
      { event: 'lock-battery', options: { lockId, level: '2day' }, description: 'the lock warns again' },
    ],
    endsWith: { lockBattery: 'low' },
  };
}

/** Batteries ran out: the lock's clock starts again in 2000, the service says so, then the lock is used by hand and at the keypad. */
export function lockClockReset({ lockId }: ScenarioIds): StateScenario {
  return {
    steps: [
      { event: 'lock', options: { lockId, by: 'manual' }, description: 'locked by hand, the clock still right' },
      { event: 'lock-clock-reset', options: { lockId }, description: 'new batteries: the lock\'s clock starts at 2000-01-01 and the service reports lock_log_timestamp_drifted' },
      { event: 'unlock', options: { lockId, by: 'keypad' }, description: 'unlocked at the keypad, stamped in 2000' },
      { event: 'lock', options: { lockId, by: 'manual' }, description: 'locked by hand, stamped in 2000' },
      { event: 'unlock', options: { lockId, by: 'manual' }, description: 'unlocked by hand, stamped in 2000' },
    ],
    endsWith: { lock: 'unlocked' },
  };
}

/** The lock's clock jumps a year ahead for one event, then is set right again. */
export function lockClockJump({ lockId }: ScenarioIds): StateScenario {
  return {
    steps: [
      { event: 'lock-clock-jump', options: { lockId }, description: 'the lock\'s clock jumps a year ahead (nothing is sent)' },
      { event: 'unlock', options: { lockId, by: 'manual' }, description: 'unlocked by hand, stamped a year ahead' },
      { event: 'lock-clock-fix', options: { lockId }, description: 'the app sets the lock\'s clock right (nothing is sent)' },
      { event: 'lock', options: { lockId, by: 'manual' }, description: 'locked by hand, stamped now' },
    ],
    endsWith: { lock: 'locked' },
  };
}

export const STATE_SCENARIOS: Readonly<Record<string, (ids: ScenarioIds) => StateScenario>> = {
  'bridge-flapping': (ids) => bridgeFlapping(ids),
  'battery-flapping': batteryFlapping,
  'lock-clock-reset': lockClockReset,
  'lock-clock-jump': lockClockJump,
};
