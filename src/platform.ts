// Homebridge lifecycle, as in the plugin template: the constructor checks the config,
// configureAccessory only caches, didFinishLaunching starts the runtime, shutdown stops it.
// A broken account or webhook setting logs what to fix and does nothing else; a mistake inside one
// device or person entry leaves that entry out and everything else runs.
import type { API, DynamicPlatformPlugin, Logging, MatterAccessory, PlatformAccessory, PlatformConfig } from 'homebridge';

import { checkConfig, type LockAccessConfig } from './config.js';
import type { DeviceRegistry, DeviceView } from './model/device-registry.js';
import { MATTER_OFF_FOR_BRIDGE, matterOf } from './matter/matter-on-bridge.js';
import { Runtime } from './runtime/plugin-wiring.js';
import { PLATFORM_NAME, PLUGIN_NAME } from './settings.js';
import { errorText } from './util/error-text.js';

export class LockAccessPlatform implements DynamicPlatformPlugin {
  private readonly cached: PlatformAccessory[] = [];
  /** Matter endpoints Homebridge 2 restored from its cache; registered again on start. */
  private readonly cachedMatter: MatterAccessory[] = [];
  private runtime: Runtime | undefined;
  private shuttingDown = false;

  constructor(
    private readonly log: Logging,
    rawConfig: PlatformConfig,
    private readonly api: API,
  ) {
    const check = checkConfig(rawConfig);
    if (!check.ok) {
      const parts: string[] = [];
      if (check.missing.length > 0) parts.push(`missing: ${check.missing.join(', ')}`);
      parts.push(...check.problems);
      this.log.error(`Lock Access is not configured, so it does nothing until you fix the settings (${parts.join('; ')}).`);
      // Cached accessories stay as they are: a typo in the config must not wipe the user's Home setup.
      return;
    }
    for (const warning of check.warnings) this.log.warn(warning);
    for (const entry of check.disabled) this.log.error(entry);
    const config = check.config;

    api.on('didFinishLaunching', () => {
      this.launch(config).catch((error: unknown) => {
        // start() handles its own failures; this is the last guard so Homebridge never crashes.
        log.error(`Lock Access could not start: ${errorText(error)}`);
      });
    });
    api.on('shutdown', () => {
      this.shuttingDown = true;
      void this.runtime?.stop();
    });
  }

  private async launch(config: LockAccessConfig): Promise<void> {
    const views = await this.matterViews(config);
    if (this.shuttingDown) return;
    const runtime = new Runtime({ api: this.api, log: this.log, config, cachedAccessories: this.cached, pluginName: PLUGIN_NAME, platformName: PLATFORM_NAME, views });
    this.runtime = runtime;
    await runtime.start();
  }

  /**
   * Matter shows the same device set as HomeKit, synced after HomeKit's registry. Its code is
   * loaded only on a bridge that runs Matter.
   */
  private async matterViews(config: LockAccessConfig): Promise<((registry: DeviceRegistry) => DeviceView)[]> {
    if (!matterOf(this.api)) {
      this.log.debug(MATTER_OFF_FOR_BRIDGE);
      return [];
    }
    const { matterView } = await import('./matter/matter-view.js');
    const { api, log } = this;
    return [(registry) => matterView({ api, log, registry, cached: this.cachedMatter, wanted: config.matter, pluginName: PLUGIN_NAME, platformName: PLATFORM_NAME })];
  }

  /** Homebridge hands back accessories from its cache before launch; the runtime adopts them. */
  configureAccessory(accessory: PlatformAccessory): void {
    this.cached.push(accessory);
  }

  /** Homebridge 2 with Matter hands back cached Matter endpoints before launch; they are registered again on start. */
  configureMatterAccessory(accessory: MatterAccessory): void {
    this.cachedMatter.push(accessory);
  }
}
