// Characteristics that answer reads themselves (Eve's history entries) keep their handler across
// the offline read guard: the guard replaces every read handler while the lock is offline and, when
// it is back, puts each characteristic's own handler back instead of leaving it without one.
import type { Characteristic, CharacteristicGetHandler } from 'homebridge';

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
