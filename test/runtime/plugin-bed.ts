// The bed of the in-process plugin tests: before each case the simulator, a storage folder and a
// free listener port; after it every start shut down and both removed. `homebridge()` makes one
// Homebridge start's context on them: the real HomebridgeAPI of Homebridge 2 on the test's storage,
// the accessories it registers recorded, the log captured.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { API, MatterAccessory, PlatformAccessory } from 'homebridge';
import { afterEach, beforeEach } from 'vitest';

import { HomebridgeAPI } from '../../node_modules/homebridge/dist/api.js';
import { checkConfig } from '../../src/config.js';
import type { PluginContext } from '../../src/runtime/start-plugin.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../../src/settings.js';
import { Shutdown } from '../../src/util/shutdown.js';
import { freePort } from '../harness/homebridge.js';
import { until } from '../harness/until.js';
import { captureLog, type CapturedLog } from '../homekit/hap-env.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

/** Waits for `condition`; when it times out, the error also gives `context()` (the plugin's log lines, say). */
export async function waitFor(condition: () => boolean, context?: () => string): Promise<void> {
  try {
    await until(condition, String(condition));
  } catch (error) {
    if (context === undefined) throw error;
    throw new Error(`${(error as Error).message}\n${context()}`, { cause: error });
  }
}

export interface HomebridgeStart {
  api: API;
  context: PluginContext;
  registered: PlatformAccessory[];
  captured: CapturedLog;
  shutdown: Shutdown;
}

export interface StartOptions {
  cachedAccessories?: PlatformAccessory[];
  cachedMatter?: MatterAccessory[];
  /** Fields of the platform block over the simulator's (the webhook on the bed's port, delivery checks off). */
  config?: Record<string, unknown>;
  /** The API the plugin sees, made from Homebridge's own (Matter switched on, say). */
  api?: (api: API) => API;
}

export interface PluginBed {
  readonly sim: Simulator;
  readonly dir: string;
  readonly port: number;
  /** One Homebridge start's context; its shutdown runs after the case at the latest. */
  homebridge(options?: StartOptions): HomebridgeStart;
}

export function pluginBed(name: string, simulator: SimulatorOptions): PluginBed {
  let sim: Simulator | undefined;
  let dir: string | undefined;
  let port: number | undefined;
  const shutdowns: Shutdown[] = [];
  beforeEach(async () => {
    sim = await startSimulator(simulator);
    dir = await mkdtemp(join(tmpdir(), `${name}-`));
    port = await freePort();
  });
  afterEach(async () => {
    await Promise.all(shutdowns.splice(0).map((shutdown) => shutdown.run()));
    await sim?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the bed is made before each case');
    return value;
  };
  const bed: PluginBed = {
    get sim() {
      return ready(sim);
    },
    get dir() {
      return ready(dir);
    },
    get port() {
      return ready(port);
    },
    homebridge(options = {}) {
      const storage = bed.dir;
      const base = new HomebridgeAPI() as unknown as API;
      Object.defineProperty(base, 'user', { value: { storagePath: () => storage } });
      const registered: PlatformAccessory[] = [];
      base.registerPlatformAccessories = (_plugin, _platform, accessories) => {
        registered.push(...accessories);
      };
      const api = options.api?.(base) ?? base;
      const webhook = { publicUrl: `http://127.0.0.1:${bed.port}/lock-access`, listenHost: '127.0.0.1', listenPort: bed.port, deliveryCheckMinutes: 0 };
      const check = checkConfig(simPlatformConfig(bed.sim, bed.port, { webhook, ...options.config }));
      if (!check.ok) throw new Error('the test config should be valid');
      const { mainDisabled } = check;
      const captured = captureLog();
      const shutdown = new Shutdown();
      shutdowns.push(shutdown);
      const context: PluginContext = {
        api,
        log: captured.log,
        config: check.config,
        ...(mainDisabled === undefined ? {} : { mainDisabled }),
        cachedAccessories: options.cachedAccessories ?? [],
        cachedMatter: options.cachedMatter ?? [],
        pluginName: PLUGIN_NAME,
        platformName: PLATFORM_NAME,
        shutdown,
      };
      return { api, context, registered, captured, shutdown };
    },
  };
  return bed;
}
