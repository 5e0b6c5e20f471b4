// Homebridge lifecycle, as in the plugin template: the constructor checks the config,
// configureAccessory only caches, didFinishLaunching starts the plugin's stages, shutdown stops them.
// A broken account or webhook setting logs what to fix and does nothing else; a mistake inside one
// device or person entry leaves that entry out and everything else runs.
import type { API, DynamicPlatformPlugin, Logging, MatterAccessory, PlatformAccessory, PlatformConfig } from 'homebridge';

import { checkConfig } from './config.js';
import { startPlugin } from './runtime/start-plugin.js';
import { PLATFORM_NAME, PLUGIN_NAME } from './settings.js';
import { errorText } from './util/error-text.js';
import { Shutdown } from './util/shutdown.js';

export class LockAccessPlatform implements DynamicPlatformPlugin {
  private readonly cached: PlatformAccessory[] = [];
  /** Matter endpoints Homebridge 2 restored from its cache; registered again on start. */
  private readonly cachedMatter: MatterAccessory[] = [];
  /** Every part of the running plugin says here how it stops; Homebridge's shutdown runs it. */
  private readonly shutdown = new Shutdown();

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
    const { config, mainDisabled } = check;
    if (mainDisabled !== undefined) {
      this.log.error(`The main account (the top-level account fields) is disabled until you fix it in the plugin settings (${mainDisabled.text}); it sends nothing. The extra accounts with their own API key, client id and client secret run.`);
    }

    api.on('didFinishLaunching', () => {
      const disabledAccountIds = check.disabledAccounts.flatMap((entry) => (entry.id === undefined ? [] : [entry.id]));
      const context = { api, log, config, ...(mainDisabled === undefined ? {} : { mainDisabled }), disabledAccountIds, cachedAccessories: this.cached, cachedMatter: this.cachedMatter, pluginName: PLUGIN_NAME, platformName: PLATFORM_NAME, shutdown: this.shutdown };
      startPlugin(context).catch((error: unknown) => {
        // The stages handle their own failures; this is the last guard so Homebridge never crashes.
        log.error(`Lock Access could not start: ${errorText(error)}`);
      });
    });
    api.on('shutdown', () => {
      void this.shutdown.run();
    });
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
