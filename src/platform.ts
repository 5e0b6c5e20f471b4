// Homebridge lifecycle: checks the config, then (once wired) starts cloud, receiver and accessories.
import type { API, DynamicPlatformPlugin, Logging, PlatformAccessory, PlatformConfig } from 'homebridge';

import { checkConfig } from './config.js';

export class LockAccessPlatform implements DynamicPlatformPlugin {
  private readonly cached = new Map<string, PlatformAccessory>();

  constructor(
    private readonly log: Logging,
    private readonly rawConfig: PlatformConfig,
    private readonly api: API,
  ) {
    const check = checkConfig(rawConfig);
    if (!check.ok) {
      const parts: string[] = [];
      if (check.missing.length > 0) parts.push(`missing: ${check.missing.join(', ')}`);
      parts.push(...check.problems);
      this.log.error(`Lock Access is not configured, so it does nothing until you fix the settings (${parts.join('; ')}).`);
      return;
    }
  }

  configureAccessory(accessory: PlatformAccessory): void {
    this.cached.set(accessory.UUID, accessory);
  }
}
