// The plugin inside the test process, on Homebridge's own API object (the real HomebridgeAPI and
// PlatformAccessory, as Homebridge hands them to a platform), against the simulator: no Homebridge
// process, no HAP server, no mDNS. For tests that assert logs, files, registrations and accessory
// values, and for tests that need fake timers across the whole plugin. What only a real bridge
// proves (pairing, HAP reads and events, restarts of the process) stays in test/e2e/.
import type { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';

import type { API, Logging, PlatformAccessory, PlatformConfig } from 'homebridge';

import { HomebridgeAPI } from '../../node_modules/homebridge/dist/api.js';
import { User } from '../../node_modules/homebridge/dist/user.js';
import { LockAccessPlatform } from '../../src/platform.js';
import { PLATFORM_NAME } from '../../src/settings.js';
import { canListen, waitForListening } from './homebridge.js';

export interface InProcessLine {
  level: 'info' | 'success' | 'warn' | 'error' | 'debug';
  message: string;
}

/** A Homebridge `Logging` that keeps every line (Homebridge's own logger writes to the console). */
function capturingLog(lines: InProcessLine[]): Logging {
  const at = (level: InProcessLine['level']) => (message: string, ...parameters: unknown[]) => {
    lines.push({ level, message: [message, ...parameters.map(String)].join(' ') });
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

export interface InProcessPlatform {
  readonly api: API;
  readonly storagePath: string;
  readonly lines: InProcessLine[];
  /** Accessories registered and not unregistered, as Homebridge's bridge would publish them. */
  readonly accessories: Map<string, PlatformAccessory>;
  accessory(name: string): PlatformAccessory | undefined;
  /** The log as Homebridge would print it, one line per entry. */
  text(level?: InProcessLine['level']): string;
  /**
   * Homebridge's shutdown event, then waits until the listener's port is free and removes the storage
   * folder. Call it with real timers (the folder's removal waits in real time).
   */
  close(): Promise<void>;
}

/**
 * Constructs the platform with `config` as Homebridge does (constructor, then didFinishLaunching) on
 * a storage folder of its own, and waits until the webhook listener accepts connections on
 * `listenPort` (the port in `config`).
 */
export async function startInProcess(config: Record<string, unknown>, listenPort: number): Promise<InProcessPlatform> {
  const storagePath = await mkdtemp(join(tmpdir(), 'lock-access-inproc-'));
  // Homebridge's User keeps one storage path per process; this platform gets its own.
  class ScopedUser extends User {
    static override storagePath(): string {
      return storagePath;
    }
  }
  const api = new HomebridgeAPI();
  (api as unknown as { user: typeof User }).user = ScopedUser;
  const lines: InProcessLine[] = [];
  const accessories = new Map<string, PlatformAccessory>();
  // Homebridge's own events for these (its server listens to the same ones), by their string names.
  const events = api as unknown as EventEmitter;
  events.on('registerPlatformAccessories', (added: PlatformAccessory[]) => {
    for (const accessory of added) accessories.set(accessory.UUID, accessory);
  });
  events.on('unregisterPlatformAccessories', (removed: PlatformAccessory[]) => {
    for (const accessory of removed) accessories.delete(accessory.UUID);
  });
  const log = capturingLog(lines);
  // Homebridge keeps the platform object; here the API's listeners hold it.
  new LockAccessPlatform(log, config as PlatformConfig, api);
  api.signalFinished();
  await waitForListening(listenPort);
  return {
    api: api as unknown as API,
    storagePath,
    lines,
    accessories,
    accessory: (name) => [...accessories.values()].find((accessory) => accessory.displayName === name),
    text: (level) => lines.filter((line) => level === undefined || line.level === level).map((line) => line.message).join('\n'),
    async close() {
      api.signalShutdown();
      await waitForPortFree(listenPort);
      // The plugin's last files are written just after its listener closed.
      await rm(storagePath, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
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
