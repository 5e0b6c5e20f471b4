// Saves an accessory's context soon after a change, so state survives even a hard stop of Homebridge.
// Homebridge also saves its accessory cache on a clean shutdown; this covers crashes and power cuts.
import type { API, PlatformAccessory } from 'homebridge';

export class ContextSaver {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly delayMs = 1000,
  ) {}

  /** Coalesces bursts of changes into one cache write. */
  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.delayMs);
    this.timer.unref();
  }

  save(): void {
    // Only an accessory Homebridge already serves may be updated: updating an unregistered one would add it to the cache twice.
    if (this.accessory._associatedHAPAccessory.bridged) this.api.updatePlatformAccessories([this.accessory]);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
