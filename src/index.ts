import type { API } from 'homebridge';

import { LockAccessPlatform } from './platform.js';
import { PLATFORM_NAME, PLUGIN_NAME } from './settings.js';

/** Homebridge calls this once when it loads the plugin. */
export default (api: API): void => {
  api.registerPlatform(PLUGIN_NAME, PLATFORM_NAME, LockAccessPlatform);
};
