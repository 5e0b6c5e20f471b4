// The real Homebridge UI (homebridge-config-ui-x, standalone) for `npm start`: it serves on
// 127.0.0.1 with a demo user whose password is new each run, and lists this repository as its only
// installed plugin, so the plugin's settings page shows the demo's status, devices and events.
import { spawn, type ChildProcess } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { waitForListening } from '../test/harness/homebridge.js';

export interface DemoUiOptions {
  /** The Homebridge storage folder the demo's Homebridge uses (config.json must exist). */
  storage: string;
  /** This repository: linked into the UI's plugin folder. */
  root: string;
  /** The Node to run the UI on. */
  node: string;
  onLine?: (line: string) => void;
}

export interface DemoUi {
  url: string;
  username: string;
  password: string;
  stop(): Promise<void>;
}

export const DEMO_UI_USER = 'demo';

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => { resolve(false); });
    server.listen(port, '127.0.0.1', () => server.close(() => { resolve(true); }));
  });
}

async function choosePort(preferred: number): Promise<number> {
  if (preferred > 0 && (await portFree(preferred))) return preferred;
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => { resolve(typeof address === 'object' && address ? address.port : 0); });
    });
  });
}

/** The UI's own password format (its auth.json): PBKDF2-SHA512, 1000 rounds, 64 bytes, hex. */
function userEntry(password: string): Record<string, unknown> {
  const salt = randomBytes(32).toString('hex');
  const hashedPassword = pbkdf2Sync(password, salt, 1000, 64, 'sha512').toString('hex');
  return { id: 1, username: DEMO_UI_USER, name: 'Demo', hashedPassword, salt, admin: true };
}

/**
 * Adds the UI's platform block to config.json; Homebridge skips it when started with
 * UIX_SERVICE_MODE=1 (the UI runs on its own, as hb-service runs it).
 */
export async function addUiPlatform(storage: string, port: number): Promise<void> {
  const configPath = join(storage, 'config.json');
  const config = JSON.parse(await readFile(configPath, 'utf8')) as { platforms?: Record<string, unknown>[] };
  config.platforms = [...(config.platforms ?? []).filter((p) => p.platform !== 'config'), { platform: 'config', name: 'Config', port, host: '127.0.0.1', auth: 'form' }];
  await writeFile(configPath, JSON.stringify(config, null, 2));
}

export interface DemoUiSetup {
  port: number;
  password: string;
}

/**
 * Readies the storage folder for the UI before Homebridge reads it: the UI's platform block in
 * config.json, auth.json with the demo user, and the plugin folder linking this repository.
 */
export async function prepareDemoUi(storage: string, root: string, preferredPort: number): Promise<DemoUiSetup> {
  const port = await choosePort(preferredPort);
  await addUiPlatform(storage, port);
  const password = randomBytes(6).toString('base64url');
  await writeFile(join(storage, 'auth.json'), JSON.stringify([userEntry(password)], null, 2), { mode: 0o600 });
  // The UI lists the plugins in its plugin folder: this repository under its package name, as the
  // package ships it. A copy: the UI serves a plugin's page only from files inside the plugin's folder
  // (a link to the repository itself would also loop through this folder).
  const plugin = join(storage, 'plugins', 'homebridge-lock-access');
  await mkdir(plugin, { recursive: true });
  for (const entry of ['package.json', 'config.schema.json', 'dist', 'homebridge-ui']) await cp(join(root, entry), join(plugin, entry), { recursive: true });
  if (!existsSync(join(plugin, 'node_modules'))) await symlink(join(root, 'node_modules'), join(plugin, 'node_modules'), 'dir');
  return { port, password };
}

/** Starts the UI on a storage folder readied by prepareDemoUi; resolves once it listens. */
export async function launchDemoUi(options: DemoUiOptions, setup: DemoUiSetup): Promise<DemoUi> {
  const standalone = join(options.root, 'node_modules', 'homebridge-config-ui-x', 'dist', 'bin', 'standalone.js');
  if (!existsSync(standalone)) throw new Error('homebridge-config-ui-x is not installed: run npm install');
  const { port, password } = setup;
  const plugins = join(options.storage, 'plugins');
  const child: ChildProcess = spawn(options.node, [standalone, '-U', options.storage, '-P', plugins, '-T'], {
    cwd: options.storage,
    env: { ...process.env, UIX_STRICT_PLUGIN_RESOLUTION: '1', FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<void>((resolve) => child.once('exit', () => { resolve(); }));
  await new Promise<void>((resolve, reject) => {
    const lines: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const clean = line.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '').trim();
        if (clean === '') continue;
        lines.push(clean);
        options.onLine?.(clean);
        if (/is listening on/.test(clean)) resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exit.then(() => { reject(new Error(`the Homebridge UI stopped before it was ready:\n${lines.slice(-20).join('\n')}`)); });
  });
  // The UI logs "is listening" just before it listens.
  await waitForListening(port);
  return {
    url: `http://127.0.0.1:${port}`,
    username: DEMO_UI_USER,
    password,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}
