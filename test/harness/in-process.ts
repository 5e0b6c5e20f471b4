// The plugin inside the test process, on Homebridge's own API object (the real HomebridgeAPI and
// PlatformAccessory, as Homebridge hands them to a platform), against the simulator: no Homebridge
// process, no HAP server, no mDNS. For tests that assert logs, files, registrations and accessory
// values, and for tests that need fake timers across the whole plugin. What only a real bridge
// proves (pairing, HAP reads and events, the built package, process signals) stays with
// startHomebridge. A restart is what Homebridge does: shutdown, then a new platform on the same
// storage that is handed the accessories from Homebridge's cache first.
import type { EventEmitter } from 'node:events';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { API, Logging, PlatformAccessory, PlatformConfig } from 'homebridge';

import { HomebridgeAPI } from '../../node_modules/homebridge/dist/api.js';
import { PlatformAccessory as HomebridgeAccessory } from '../../node_modules/homebridge/dist/platformAccessory.js';
import { User } from '../../node_modules/homebridge/dist/user.js';
import { LockAccessPlatform } from '../../src/platform.js';
import { PLATFORM_NAME } from '../../src/settings.js';
import { canListen, waitForListening } from './homebridge.js';

export interface InProcessLine {
  level: 'info' | 'success' | 'warn' | 'error' | 'debug';
  message: string;
}

/** A Homebridge `Logging` that keeps every line (Homebridge's own logger writes to the console). */
function capturingLog(lines: InProcessLine[], logs: string[]): Logging {
  const at = (level: InProcessLine['level']) => (message: string, ...parameters: unknown[]) => {
    const text = [message, ...parameters.map(String)].join(' ');
    lines.push({ level, message: text });
    logs.push(text);
  };
  const log = Object.assign((message: string, ...parameters: unknown[]) => { at('info')(message, ...parameters); }, {
    prefix: PLATFORM_NAME,
    info: at('info'),
    success: at('success'),
    warn: at('warn'),
    error: at('error'),
    debug: at('debug'),
    log: (level: string, message: string, ...parameters: unknown[]) => { at(level === 'warn' || level === 'error' || level === 'debug' ? level : 'info')(message, ...parameters); },
  });
  return log;
}

export interface InProcessOptions {
  /** The LockAccess platform block; its webhook.listenPort is the listener the start waits for. */
  platform: Record<string, unknown>;
  /** Reuse a storage folder (a restart); a temp one by default, removed by cleanup(). */
  storagePath?: string;
  /** Accessories from Homebridge's cache of the run before (see `cache()`). */
  cached?: PlatformAccessory[];
}

export interface InProcessPlatform {
  readonly api: API;
  readonly storagePath: string;
  readonly lines: InProcessLine[];
  /** The messages of `lines`, as RunningHomebridge's logs (without Homebridge's date and prefix). */
  readonly logs: string[];
  /** Accessories registered and not unregistered, as Homebridge's bridge would publish them. */
  readonly accessories: Map<string, PlatformAccessory>;
  accessory(name: string): PlatformAccessory | undefined;
  /** The log as Homebridge would print it, one line per entry. */
  text(level?: InProcessLine['level']): string;
  /** Resolves with the first message (already logged or later) matching `pattern`; polls in real time. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /**
   * Homebridge's shutdown event, then waits until the listener's port is free and the plugin's last
   * files are written. Waits in real time, so call it with real timers.
   */
  stop(): Promise<void>;
  /** The accessories as Homebridge's cache would hand them to the next run (serialised and read back). */
  cache(): PlatformAccessory[];
  /** Removes the storage folder if the harness made it. */
  cleanup(): Promise<void>;
}

/**
 * Constructs the platform as Homebridge does (constructor, cached accessories, didFinishLaunching)
 * and waits until the webhook listener accepts connections.
 */
export async function startInProcess(options: InProcessOptions): Promise<InProcessPlatform> {
  const ownStorage = options.storagePath === undefined;
  const storagePath = options.storagePath ?? (await mkdtemp(join(tmpdir(), 'lock-access-inproc-')));
  const listenPort = Number((options.platform.webhook as { listenPort?: unknown } | undefined)?.listenPort);
  // Homebridge's User keeps one storage path per process; this platform gets its own.
  class ScopedUser extends User {
    static override storagePath(): string {
      return storagePath;
    }
  }
  const api = new HomebridgeAPI();
  (api as unknown as { user: typeof User }).user = ScopedUser;
  const lines: InProcessLine[] = [];
  const logs: string[] = [];
  const accessories = new Map<string, PlatformAccessory>();
  // Homebridge's own events for these (its server listens to the same ones), by their string names.
  const events = api as unknown as EventEmitter;
  events.on('registerPlatformAccessories', (added: PlatformAccessory[]) => {
    for (const accessory of added) accessories.set(accessory.UUID, accessory);
  });
  events.on('unregisterPlatformAccessories', (removed: PlatformAccessory[]) => {
    for (const accessory of removed) accessories.delete(accessory.UUID);
  });
  const platform = new LockAccessPlatform(capturingLog(lines, logs), options.platform as PlatformConfig, api);
  // Homebridge restores its cache before didFinishLaunching; restored accessories are published too.
  for (const accessory of options.cached ?? []) {
    accessories.set(accessory.UUID, accessory);
    platform.configureAccessory(accessory);
  }
  api.signalFinished();
  if (Number.isInteger(listenPort) && listenPort > 0) await waitForListening(listenPort);
  let stopped = false;
  return {
    api,
    storagePath,
    lines,
    logs,
    accessories,
    accessory: (name) => [...accessories.values()].find((accessory) => accessory.displayName === name),
    text: (level) => lines.filter((line) => level === undefined || line.level === level).map((line) => line.message).join('\n'),
    async waitForLog(pattern, timeoutMs = 30_000) {
      for (let waited = 0; ; waited += 50) {
        const found = logs.find((line) => pattern.test(line));
        if (found !== undefined) return found;
        if (waited >= timeoutMs) throw new Error(`the plugin did not log ${String(pattern)} within ${String(timeoutMs)} ms. Last lines:\n${logs.slice(-40).join('\n')}`);
        await sleep(50);
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      api.signalShutdown();
      if (Number.isInteger(listenPort) && listenPort > 0) await waitForPortFree(listenPort);
      // The plugin's last files are written just after its listener closed.
      await waitForQuietFolder(storagePath);
    },
    cache: () => [...accessories.values()].map((accessory) => {
      const json = JSON.parse(JSON.stringify(HomebridgeAccessory.serialize(accessory))) as unknown;
      return HomebridgeAccessory.deserialize(json as Parameters<typeof HomebridgeAccessory.deserialize>[0]);
    }),
    async cleanup() {
      if (ownStorage) await rm(storagePath, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    },
  };
}

/**
 * Polls with node:timers/promises, which fake timers leave alone (they replace the globals), so it
 * waits in real time also under fake timers: closing lets callbacks in flight finish first.
 */
async function waitForPortFree(port: number, timeoutMs = 15_000): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 50) {
    if (await canListen(port)) return;
    await sleep(50);
  }
  throw new Error(`the listener on port ${String(port)} did not close within ${String(timeoutMs)} ms`);
}

/** The newest modification time of any file under `dir` (0 when it is empty or gone). */
async function newestChange(dir: string): Promise<number> {
  let newest = 0;
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  for (const entry of entries) {
    const info = await stat(join(dir, entry)).catch(() => undefined);
    if (info) newest = Math.max(newest, info.mtimeMs);
  }
  return newest;
}

/** Waits until nothing under `dir` has changed for 200 ms (at most 5 s). */
async function waitForQuietFolder(dir: string): Promise<void> {
  let last = await newestChange(dir);
  for (let quiet = 0, waited = 0; quiet < 200 && waited < 5_000; waited += 50) {
    await sleep(50);
    const now = await newestChange(dir);
    quiet = now === last ? quiet + 50 : 0;
    last = now;
  }
}
