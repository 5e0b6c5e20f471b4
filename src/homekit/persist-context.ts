// Saves accessories' context after a change, so state survives even a hard stop of Homebridge.
// Homebridge also saves its accessory cache on a clean shutdown; this covers crashes and power cuts.
// Every save makes Homebridge serialise and write its whole cache synchronously, so the changes of
// all accessories are gathered into one update per interval instead of one per accessory.
import type { API, PlatformAccessory } from 'homebridge';

/**
 * Each save blocks the event loop while Homebridge serialises every accessory (tens of ms with a
 * hundred locks), which shows up as latency on callbacks and HomeKit reads arriving meanwhile. So
 * changes are saved once things have been quiet for a while, and during a long busy spell at least
 * every few minutes. A clean shutdown saves everything anyway; after a crash the start-up status
 * refresh catches up what was not saved.
 */
export const CONTEXT_SAVE_QUIET_MS = 10_000;
export const CONTEXT_SAVE_MAX_DELAY_MS = 5 * 60_000;

/** The accessories of one Homebridge API waiting to be saved, and the one timer that saves them. */
class SaveBatch {
  private readonly pending = new Set<PlatformAccessory>();
  private timer: NodeJS.Timeout | undefined;
  /** When the oldest unsaved change was made. */
  private since = 0;
  /** When the newest one was made. */
  private last = 0;
  private now: () => number = Date.now;

  constructor(private readonly api: API) {}

  add(accessory: PlatformAccessory, now: () => number): void {
    const at = now();
    this.now = now;
    if (this.pending.size === 0) this.since = at;
    this.last = at;
    this.pending.add(accessory);
    // Every change restarts the quiet period, up to the longest delay since the oldest change. The
    // timer is not re-armed per change (this runs for every callback): when it fires early, it
    // waits out the rest.
    this.timer ??= this.wait(this.due() - at);
  }

  /** The save is due a quiet spell after the newest change, at the latest the longest delay after the oldest. */
  private due(): number {
    return Math.min(this.last + CONTEXT_SAVE_QUIET_MS, this.since + CONTEXT_SAVE_MAX_DELAY_MS);
  }

  private wait(delay: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timer = undefined;
      const left = this.due() - this.now();
      if (left > 0 && this.pending.size > 0) this.timer = this.wait(left);
      else this.flush();
    }, Math.max(0, delay));
    timer.unref();
    return timer;
  }

  remove(accessory: PlatformAccessory): void {
    this.pending.delete(accessory);
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
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

/**
 * Saves every pending change now. Homebridge saves its cache before it calls shutdown listeners, so
 * what changed after that (callbacks answered while the plugin was closing) is saved here.
 */
export function flushContextSaves(api: API): void {
  batches.get(api)?.flush();
}

export class ContextSaver {
  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly now: () => number = Date.now,
  ) {}

  /** Coalesces bursts of changes, of this and every other accessory, into one cache write. */
  schedule(): void {
    batchFor(this.api).add(this.accessory, this.now);
  }

  dispose(): void {
    batchFor(this.api).remove(this.accessory);
  }
}
