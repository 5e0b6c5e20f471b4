// Saves accessories' context soon after a change, so state survives even a hard stop of Homebridge.
// Homebridge also saves its accessory cache on a clean shutdown; this covers crashes and power cuts.
// Every save makes Homebridge serialise and write its whole cache synchronously, so the changes of
// all accessories are gathered into one update per interval instead of one per accessory.
import type { API, PlatformAccessory } from 'homebridge';

/**
 * Each save blocks the event loop while Homebridge serialises every accessory (tens of ms with a
 * hundred locks), which shows up as latency on callbacks and HomeKit reads arriving meanwhile. A
 * clean shutdown saves everything anyway; after a crash up to a minute of state changes may be
 * lost, which the start-up status refresh catches up.
 */
export const CONTEXT_SAVE_DELAY_MS = 60_000;

/** The accessories of one Homebridge API waiting to be saved, and the one timer that saves them. */
class SaveBatch {
  private readonly pending = new Set<PlatformAccessory>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly api: API) {}

  add(accessory: PlatformAccessory, delayMs: number): void {
    this.pending.add(accessory);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delayMs);
    this.timer.unref();
  }

  remove(accessory: PlatformAccessory): void {
    this.pending.delete(accessory);
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  flush(): void {
    // Only an accessory Homebridge already serves may be updated: updating an unregistered one would add it to the cache twice.
    const served = [...this.pending].filter((accessory) => accessory._associatedHAPAccessory.bridged);
    this.pending.clear();
    if (served.length > 0) this.api.updatePlatformAccessories(served);
  }
}

const batches = new WeakMap<API, SaveBatch>();

function batchFor(api: API): SaveBatch {
  let batch = batches.get(api);
  if (!batch) {
    batch = new SaveBatch(api);
    batches.set(api, batch);
  }
  return batch;
}

export class ContextSaver {
  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly delayMs = CONTEXT_SAVE_DELAY_MS,
  ) {}

  /** Coalesces bursts of changes, of this and every other accessory, into one cache write. */
  schedule(): void {
    batchFor(this.api).add(this.accessory, this.delayMs);
  }

  dispose(): void {
    batchFor(this.api).remove(this.accessory);
  }
}
