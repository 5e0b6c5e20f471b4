// The service's battery words and what each says: how urgent it is and about how much charge is
// left. The model keeps the word; each view decides how to show it (HomeKit a level and a low flag,
// Matter a charge level and half-percent units). Keypad words are for the keypad only.

/** How urgent a battery word is. */
export type BatteryWarning = 'none' | 'low' | 'critical';

export interface BatteryWord {
  warning: BatteryWarning;
  /** About how much charge is left, in percent: the service says words, not levels, so this is the plugin's reading of them. */
  percent: number;
  /** The event log's words, where the word says more than its warning (how long the batteries last). */
  words?: string;
}

export const BATTERY_WORDS: Readonly<Record<string, BatteryWord>> = {
  lock_state_battery_warning_none: { warning: 'none', percent: 100, words: 'Lock battery OK' },
  lock_state_battery_warning_2week: { warning: 'low', percent: 15, words: 'Lock battery low: about 2 weeks left' },
  lock_state_battery_warning_1week: { warning: 'low', percent: 10, words: 'Lock battery low: about 1 week left' },
  lock_state_battery_warning_2day: { warning: 'critical', percent: 5, words: 'Lock battery very low: about 2 days left, replace it soon' },
  keypad_battery_none: { warning: 'none', percent: 100 },
  keypad_battery_warning: { warning: 'low', percent: 20 },
  keypad_battery_critical: { warning: 'critical', percent: 5 },
  battery_level_none: { warning: 'none', percent: 100 },
  battery_level_warning: { warning: 'low', percent: 20 },
  battery_level_critical: { warning: 'critical', percent: 5 },
};

/** What a battery word says, or undefined for a word the service's spec does not list. */
export function batteryWord(raw: string): BatteryWord | undefined {
  return Object.hasOwn(BATTERY_WORDS, raw) ? BATTERY_WORDS[raw] : undefined;
}
