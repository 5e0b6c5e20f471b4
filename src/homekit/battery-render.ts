// A lock's Battery service (the lock's own, or the keypad's) as the state says it.
import type { API, Service } from 'homebridge';

import { batteryWord } from '../model/battery-words.js';
import type { LockState } from '../model/lock-state.js';

/**
 * Before any battery event nothing warned (the service warns when batteries run low), but no level
 * was told either: the optional BatteryLevel appears with the first one. `naming` sets the name and
 * the constants, which change only with the device's name or services.
 */
export function renderBattery(api: API, service: Service | undefined, battery: LockState['battery'], label: string, naming: boolean): void {
  if (!service) return;
  const C = api.hap.Characteristic;
  if (naming) {
    service.updateCharacteristic(C.Name, label);
    service.updateCharacteristic(C.ChargingState, C.ChargingState.NOT_CHARGEABLE);
  }
  const word = battery ? batteryWord(battery.raw) : undefined;
  if (word) {
    service.updateCharacteristic(C.BatteryLevel, word.percent);
  } else if (service.testCharacteristic(C.BatteryLevel)) {
    service.removeCharacteristic(service.getCharacteristic(C.BatteryLevel));
  }
  // Low for any warning: HomeKit has no "critical", the level tells how low.
  const low = word !== undefined && word.warning !== 'none';
  service.updateCharacteristic(C.StatusLowBattery, low ? C.StatusLowBattery.BATTERY_LEVEL_LOW : C.StatusLowBattery.BATTERY_LEVEL_NORMAL);
}
