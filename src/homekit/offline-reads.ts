// Characteristics that answer reads themselves (Eve's history entries) keep their handler across
// the offline read guard: the guard replaces every read handler while the lock is offline and, when
// it is back, puts each characteristic's own handler back instead of leaving it without one.
import type { API, Characteristic, CharacteristicGetHandler, PlatformAccessory } from 'homebridge';

const own = new WeakMap<Characteristic, CharacteristicGetHandler>();

/** Binds a read handler that the offline guard restores when the lock is online again. */
export function bindOwnRead(characteristic: Characteristic, handler: CharacteristicGetHandler): void {
  own.set(characteristic, handler);
  characteristic.onGet(handler);
}

/** Online again: the characteristic's own read handler, or none (HAP answers with the value it holds). */
export function restoreOwnRead(characteristic: Characteristic): void {
  const handler = own.get(characteristic);
  if (handler) characteristic.onGet(handler);
  else characteristic.removeOnGet();
}

/**
 * Offline: every read of the accessory fails with SERVICE_COMMUNICATION_FAILURE, which Home shows
 * as No Response. Online: each characteristic's own read handler or none, so HAP answers from the
 * values the render keeps current without a round through a handler.
 */
export function guardAccessoryReads(api: API, accessory: PlatformAccessory, offline: boolean): void {
  const { hap } = api;
  for (const service of accessory.services) {
    for (const characteristic of service.characteristics) {
      if (!characteristic.props.perms.includes(hap.Perms.PAIRED_READ)) continue;
      if (offline) {
        characteristic.onGet(() => {
          throw new hap.HapStatusError(hap.HAPStatus.SERVICE_COMMUNICATION_FAILURE);
        });
      } else {
        restoreOwnRead(characteristic);
        // A read that failed while offline left its status behind; setting the value clears it.
        if (characteristic.statusCode !== hap.HAPStatus.SUCCESS) characteristic.updateValue(characteristic.value);
      }
    }
  }
}
