// The one battery table: each battery word of the service, with what HomeKit shows (level and low
// flag), what Matter shows (batChargeLevel: 0 OK, 1 warning, 2 critical) and, for the lock's own
// battery, the words of the event log. Keypad batteries are HomeKit-only (no Matter charge level).
export interface BatteryWord {
  level: number;
  low: boolean;
  /** Matter's batChargeLevel for the lock's own battery; keypad words have none. */
  charge?: 0 | 1 | 2;
  /** The event log's words for the lock's own battery. */
  words?: string;
}

export const BATTERY_TABLE: Readonly<Record<string, BatteryWord>> = {
  lock_state_battery_warning_none: { level: 100, low: false, charge: 0, words: 'Lock battery OK' },
  lock_state_battery_warning_2week: { level: 15, low: true, charge: 1, words: 'Lock battery low: about 2 weeks left' },
  lock_state_battery_warning_1week: { level: 10, low: true, charge: 1, words: 'Lock battery low: about 1 week left' },
  lock_state_battery_warning_2day: { level: 5, low: true, charge: 2, words: 'Lock battery very low: about 2 days left, replace it soon' },
  keypad_battery_none: { level: 100, low: false },
  keypad_battery_warning: { level: 20, low: true },
  keypad_battery_critical: { level: 5, low: true },
  battery_level_none: { level: 100, low: false, charge: 0 },
  battery_level_warning: { level: 20, low: true, charge: 1 },
  battery_level_critical: { level: 5, low: true, charge: 2 },
};
