// When "No Response" ends: the service reports a bridge offline after about five
// minutes of silence, but not every return is announced with `online`. Anything that could only
// have come through the bridge proves it answers again.
import type { LockEvent } from './events.js';

/** What proved the bridge reachable. */
export type ReachabilityProof = 'online' | 'status' | 'command';

/**
 * `online`, or a `status` callback: the service sends one only after the bridge answered its
 * status request. Operation callbacks do not count: the app can upload a lock's log over Bluetooth.
 */
export function reachabilityProof(event: LockEvent): ReachabilityProof | undefined {
  if (event.kind === 'online' && event.online) return 'online';
  if (event.kind === 'lockState' && event.source === 'status') return 'status';
  return undefined;
}
