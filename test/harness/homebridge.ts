// Starts a real Homebridge (2.x, or 1.x through the `homebridge1` alias) with this plugin from the
// repository, in a temp storage folder, and gives tests its log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The plugin's line once the devices are bound to HomeKit: before it, HAP may answer a read with the
 * accessory cache's old value, so a test that reads or waits for HAP starts from here.
 */
export const STARTED = /Started: \d+ locks? and \d+ doorbells? served/;

export type HomebridgeFlavour = 'homebridge' | 'homebridge1';

export interface HomebridgeOptions {
  /** The LockAccess platform block (or any platforms) to run. */
  platforms: Record<string, unknown>[];
  flavour?: HomebridgeFlavour;
  /** Reuse a storage folder (e.g. to restart with the accessory cache); a temp one by default. */
  storagePath?: string;
  bridgePort?: number;
  pin?: string;
  username?: string;
  debug?: boolean;
  /** Load this plugin (default) or another plugin folder. */
  pluginPath?: string;
  env?: Record<string, string>;
  /** The Node binary to run Homebridge on (the package matrix's Node 20 and 22); this process's by default. */
  node?: string;
  /** A Homebridge installed elsewhere (its bin script), instead of `flavour` from this repository. */
  homebridgeBin?: string;
  /** Arguments for Node before the script, e.g. `--import` of a probe. */
  nodeArgs?: string[];
  /** Runs Homebridge as this user and group (the tests run as root, which no file mode stops). */
  uid?: number;
  gid?: number;
  /** Extra bridge fields for config.json (e.g. `{ bind: ['lo'], matter: {…} }` for Matter); the harness's identity (username, port, pin) wins. */
  bridge?: Record<string, unknown>;
}

export interface RunningHomebridge {
  readonly storagePath: string;
  readonly bridgePort: number;
  readonly pin: string;
  readonly username: string;
  readonly child: ChildProcess;
  readonly logs: string[];
  /** Resolves with the first line (already logged or later) matching `pattern`. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Whether the process is still running. */
  readonly running: boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Removes the storage folder if the harness made it. */
  cleanup(): Promise<void>;
}

/**
 * A port for a server that another process will open (Homebridge's bridge, the plugin's listener).
 * Never from the kernel's ephemeral range (32768-60999 here), which outgoing connections draw their
 * source ports from: a port that listen(0) handed out and closed can be taken by any connection
 * before the child binds it. Each vitest worker draws from its own block, no port is handed out twice
 * in a process, and the port is checked free on 127.0.0.1 before it is handed out.
 */
const handedOut = new Set<number>();
const PORT_BLOCK = 1_000;
const PORT_BASE = 20_000;
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? '0') % 12;
  const first = PORT_BASE + worker * PORT_BLOCK;
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = first + Math.floor(Math.random() * PORT_BLOCK);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${first} and ${first + PORT_BLOCK - 1}`);
}

/** Whether 127.0.0.1:port is free to listen on. */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => { resolveFree(false); });
    server.listen(port, '127.0.0.1', () => {
      server.close(() => { resolveFree(true); });
    });
  });
}

/** Resolves once 127.0.0.1:port accepts a connection (some servers log "listening" just before they do). */
export async function waitForListening(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolveOpen) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolveOpen(true); });
      socket.once('error', () => { socket.destroy(); resolveOpen(false); });
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

function randomUsername(): string {
  const bytes = Array.from({ length: 6 }, () => Math.floor(Math.random() * 256).toString(16).padStart(2, '0').toUpperCase());
  return bytes.join(':');
}

// eslint-disable-next-line no-control-regex -- strips terminal colour codes from Homebridge's output
const ANSI = /\u001b\[[0-9;]*m/g;
const MAX_LOG_LINES = 50_000;

/** The test file (or script) that asked for a Homebridge, from the call stack. */
function callerFile(): string {
  const frames = (new Error().stack ?? '').split('\n');
  const test = frames.find((frame) => /\.test\.ts/.test(frame)) ?? frames.find((frame) => !frame.includes('harness/homebridge')) ?? '';
  return /(test\/[\w/.-]+\.ts|scripts\/[\w/.-]+\.ts|bench\/[\w/.-]+\.ts)/.exec(test)?.[1] ?? 'unknown';
}

export async function startHomebridge(options: HomebridgeOptions): Promise<RunningHomebridge> {
  const ownStorage = options.storagePath === undefined;
  const storagePath = options.storagePath ?? (await mkdtemp(join(tmpdir(), 'lock-access-hb-')));
  await mkdir(storagePath, { recursive: true });
  const bridgePort = options.bridgePort ?? (await freePort());
  const pin = options.pin ?? '031-45-154';
  const username = options.username ?? randomUsername();
  const config = {
    bridge: { name: 'Lock Access Test Bridge', bind: ['127.0.0.1'], advertiser: 'ciao', ...options.bridge, username, port: bridgePort, pin },
    accessories: [],
    platforms: options.platforms,
  };
  await writeFile(join(storagePath, 'config.json'), JSON.stringify(config, null, 2));
  // How many Homebridge processes a run starts, and which files start them (docs/development.md).
  const countTo = process.env.LOCK_ACCESS_COUNT_STARTS;
  if (countTo !== undefined && countTo !== '') await appendFile(countTo, `${callerFile()}\n`);

  const flavour = options.flavour ?? 'homebridge';
  const bin = options.homebridgeBin ?? (flavour === 'homebridge' ? join(REPO_ROOT, 'node_modules', 'homebridge', 'bin', 'homebridge.js') : join(REPO_ROOT, 'node_modules', 'homebridge1', 'bin', 'homebridge'));
  const args = [...(options.nodeArgs ?? []), bin, '-U', storagePath, '-P', options.pluginPath ?? REPO_ROOT, '--strict-plugin-resolution', '-I', '-Q', '-T'];
  if (options.debug ?? false) args.push('-D');
  const child = spawn(options.node ?? process.execPath, args, {
    cwd: storagePath,
    env: { ...process.env, ...options.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });

  const logs: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  let exited = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolveExit({ code, signal });
    });
  });
  const onData = (buffer: string) => {
    for (const raw of buffer.split('\n')) {
      const line = (raw.includes('\u001b') ? raw.replace(ANSI, '') : raw).trimEnd();
      if (line === '') continue;
      logs.push(line);
      // Long benchmark runs log a line per event: keep the newest lines, in large steps.
      if (logs.length > MAX_LOG_LINES) logs.splice(0, MAX_LOG_LINES / 5);
      if (process.env.HB_LOG === '1') process.stderr.write(`[hb] ${line}\n`);
      for (const waiter of waiters) {
        if (waiter.pattern.test(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  };
  let pendingOut = '';
  let pendingErr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const text = pendingOut + chunk;
    const cut = text.lastIndexOf('\n');
    pendingOut = text.slice(cut + 1);
    onData(text.slice(0, cut + 1));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const text = pendingErr + chunk;
    const cut = text.lastIndexOf('\n');
    pendingErr = text.slice(cut + 1);
    onData(text.slice(0, cut + 1));
  });

  const running: RunningHomebridge = {
    storagePath,
    bridgePort,
    pin,
    username,
    child,
    logs,
    get running() {
      return !exited;
    },
    waitForLog(pattern, timeoutMs = 30_000) {
      const found = logs.find((line) => pattern.test(line));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<string>((resolveLine, reject) => {
        const waiter = { pattern, resolve: (line: string) => { clearTimeout(timer); resolveLine(line); } };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`Homebridge did not log ${pattern} within ${timeoutMs} ms. Last lines:\n${logs.slice(-40).join('\n')}`));
        }, timeoutMs);
        waiters.add(waiter);
        void exit.then(() => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new Error(`Homebridge exited before logging ${pattern}. Last lines:\n${logs.slice(-40).join('\n')}`));
        });
      });
    },
    async stop(graceMs = 10_000) {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const result = await exit;
        clearTimeout(timer);
        return result;
      }
      return exit;
    },
    async cleanup() {
      if (ownStorage) await rm(storagePath, { recursive: true, force: true });
    },
  };
  return running;
}
