// Whether the service's callbacks reach the plugin, as the delivery watch last found out: a fact about
// the plugin's way in that the views show (HomeKit's "Lock Access Events Stopped" sensor).

/** `unknown` until the first verified callback or the first check. */
export type DeliveryState = 'unknown' | 'arriving' | 'notArriving';

export interface DeliveryFeed {
  readonly state: DeliveryState;
  /** Returns the function that stops following. */
  onChange(listener: (state: DeliveryState) => void): () => void;
}
