// Whether this bridge runs Matter, asked without loading any of the plugin's Matter code: a
// bridge without Matter (most of them, and every Homebridge 1.x) never loads it.
import type { API, MatterAPI } from 'homebridge';

/** Matter's API when this bridge runs Matter: never on Homebridge 1.x, which has no isMatterEnabled. */
export function matterOf(api: API): MatterAPI | undefined {
  const probe = api as Partial<Pick<API, 'isMatterEnabled' | 'matter'>>;
  if (typeof probe.isMatterEnabled !== 'function') return undefined;
  try {
    return probe.isMatterEnabled() ? probe.matter : undefined;
  } catch {
    return undefined;
  }
}

export const MATTER_OFF_FOR_BRIDGE = 'Matter is not enabled for this bridge: the plugin publishes HomeKit accessories only.';
