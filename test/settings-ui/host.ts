// Test host for the settings UI: the real Homebridge UI (homebridge-config-ui-x, standalone) on a
// temp storage folder that lists this repository as an installed plugin, and headless Chromium
// (Debian's package, driven by playwright-core) to click through it like a user.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type Browser, type BrowserContextOptions, type Frame, type Page } from 'playwright-core';
import { inject } from 'vitest';

import { REPO_ROOT, freePort, waitForListening } from '../harness/homebridge.js';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Chromium features turned off. Chromium keeps only the last `--disable-features`, so this list
 * repeats Playwright's own (playwright-core 1.65) and adds the address bar's popups (the
 * omnibox and its AI mode), which this Chromium preloads as a web page of their own for every
 * window: about 2 s of CPU per browser context, for a bar no headless test sees.
 */
const DISABLED_FEATURES = [
  // Playwright's.
  'AimEnabled', 'AvoidCorsURLLoaderRestartOnRedirect', 'AvoidUnnecessaryBeforeUnloadCheckSync', 'DestroyProfileOnBrowserClose',
  'HttpsFirstBalancedModeAutoEnable', 'HttpsUpgrades', 'LensOverlay', 'MediaRouter', 'NetworkTimeServiceQuerying',
  'OptimizationHints', 'PaintHolding', 'PreconnectToSearch', 'ThirdPartyStoragePartitioning',
  // The address bar's popups, and their preloading.
  'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup', 'PreloadTopChromeWebUI',
];
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  `--disable-features=${DISABLED_FEATURES.join(',')}`,
];

/**
 * The browser context of a settings-page test: a desktop window, and reduced motion, which the
 * Homebridge UI's icons honour. Without it an icon that fades forever (shown while the UI looks
 * for plugin updates, which never come here) makes Chromium draw 60 frames a second in three
 * processes for as long as the page is open.
 */
export const UI_CONTEXT = { viewport: { width: 1280, height: 1400 }, reducedMotion: 'reduce' } as const satisfies BrowserContextOptions;
const UI_STANDALONE = join(REPO_ROOT, 'node_modules', 'homebridge-config-ui-x', 'dist', 'bin', 'standalone.js');

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserTestsUnavailable(): string | undefined {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium) to run the settings UI browser tests`;
  if (!existsSync(UI_STANDALONE)) return 'homebridge-config-ui-x is not installed (npm install)';
  return undefined;
}

/**
 * Copies the package as npm would ship it (dist, homebridge-ui, package.json, config.schema.json)
 * into `<dir>/homebridge-lock-access`, with the repository's node_modules beside it. Tests then run
 * what users install, and a rebuild of dist/ by someone else does not pull the floor from under them.
 */
export async function snapshotPackage(dir: string): Promise<string> {
  const target = join(dir, 'homebridge-lock-access');
  for (let attempt = 0; !existsSync(join(REPO_ROOT, 'dist', 'settings-ui', 'server-parts.js')) || !existsSync(join(REPO_ROOT, 'dist', 'index.js')); attempt += 1) {
    if (attempt > 120) throw new Error('dist/ is not built: run npm run build');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await mkdir(target, { recursive: true });
  for (const entry of ['dist', 'homebridge-ui', 'package.json', 'config.schema.json']) {
    await cp(join(REPO_ROOT, entry), join(target, entry), { recursive: true });
  }
  await symlink(join(REPO_ROOT, 'node_modules'), join(target, 'node_modules'), 'dir');
  return target;
}

/**
 * A temp storage folder for a browser test: this package installed in its plugins folder, and a
 * config.json with one bridge and the LockAccess block (credentials named after `name`, the
 * listener on a free port, the lock "Front Door") with `extra` on top.
 */
export async function uiTestStorage(name: string, username: string, extra: Record<string, unknown> = {}): Promise<{ storagePath: string; pluginsDir: string }> {
  const storagePath = await mkdtemp(join(tmpdir(), `lock-access-${name}-`));
  const pluginsDir = join(storagePath, 'plugins');
  await snapshotPackage(pluginsDir);
  const listenPort = await freePort();
  await writeFile(join(storagePath, 'config.json'), JSON.stringify({
    bridge: { name: `${name} test`, username, port: await freePort(), pin: '031-45-154' },
    platforms: [{
      platform: 'LockAccess', name: 'Lock Access',
      apiKey: `${name}-key`, clientId: `${name}-client`, clientSecret: `${name}-secret`,
      baseUrl: 'http://127.0.0.1:9/api', authUrl: 'http://127.0.0.1:9/oauth',
      webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort },
      locks: [{ id: 'LOCK-1', name: 'Front Door' }],
      ...extra,
    }],
  }, null, 2));
  return { storagePath, pluginsDir };
}

/**
 * config.json in `storagePath` once it is whole. The Homebridge UI saves by moving the file to its
 * backups and then writing the new one, so a read in between finds no file or half of one: such a
 * read waits for the write to end (up to 10 s), as Homebridge itself only reads it at start.
 */
export async function savedConfig(storagePath: string): Promise<{ platforms: Record<string, unknown>[] }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return JSON.parse(await readFile(join(storagePath, 'config.json'), 'utf8')) as { platforms: Record<string, unknown>[] };
    } catch (error) {
      const between = (error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError;
      if (!between || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** The LockAccess block of the config.json in `storagePath`, as the Homebridge UI saved it. */
export async function savedPluginBlock(storagePath: string): Promise<Record<string, unknown>> {
  const config = await savedConfig(storagePath);
  return config.platforms.find((p) => p.platform === 'LockAccess') as Record<string, unknown>;
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

export interface UiHost {
  url: string;
  port: number;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Prepares `storagePath` for the Homebridge UI (its own platform block with auth "none" and an admin
 * user) and starts it with `pluginDir` (holding homebridge-lock-access, see snapshotPackage) as its
 * plugin folder. The config.json must already hold the LockAccess block; the UI's block is added.
 * `env` reaches the plugin's settings server too (the UI starts it with its own environment).
 */
export async function startHomebridgeUi(storagePath: string, pluginDir: string, env: Readonly<Record<string, string>> = {}): Promise<UiHost> {
  const port = await freePort();
  const configPath = join(storagePath, 'config.json');
  const config = JSON.parse(await readFile(configPath, 'utf8')) as { platforms?: Record<string, unknown>[] };
  config.platforms = [...(config.platforms ?? []).filter((p) => p.platform !== 'config'), { platform: 'config', name: 'Config', port, auth: 'none', host: '127.0.0.1' }];
  await writeFile(configPath, JSON.stringify(config, null, 2));
  // With auth "none" the UI signs in as the first admin of auth.json; the password is never used.
  await writeFile(join(storagePath, 'auth.json'), JSON.stringify([{ id: 1, username: 'admin', name: 'Admin', hashedPassword: 'unused', salt: 'unused', admin: true }]));

  const child: ChildProcess = spawn(process.execPath, [UI_STANDALONE, '-U', storagePath, '-P', pluginDir, '-T'], {
    cwd: storagePath,
    env: { ...process.env, ...env, UIX_STRICT_PLUGIN_RESOLUTION: '1', FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const clean = line.replace(ANSI, '').trim();
        if (clean === '') continue;
        logs.push(clean);
        if (process.env.UI_LOG === '1') process.stderr.write(`[ui] ${clean}\n`);
        if (/is listening on/.test(clean)) resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exit.then(() => { reject(new Error(`the Homebridge UI exited before listening:\n${logs.join('\n')}`)); });
  });
  await listening;
  // The UI logs "is listening" just before it listens.
  await waitForListening(port);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    logs,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The run's shared Chromium (test/harness/browser-server.ts) when the browser lane launched one, else
 * a Chromium of this file's own. Either way, close() when done: for the shared one it only
 * disconnects, and what this file opened goes with it.
 */
export async function launchBrowser(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint') as string | undefined;
  if (endpoint !== undefined && endpoint !== '') return chromium.connect(endpoint);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** The Homebridge UI and a browser showing this plugin's settings page, opened by openSettingsPage. */
export interface OpenSettingsPage {
  page: Page;
  frame: Frame;
  /** Closes the browser and the UI and removes the storage folder. */
  close(): Promise<void>;
}

/** Starts the Homebridge UI on `storagePath` (see uiTestStorage), opens a browser on it and this plugin's settings page. */
export async function openSettingsPage(storagePath: string, pluginsDir: string): Promise<OpenSettingsPage> {
  const ui = await startHomebridgeUi(storagePath, pluginsDir);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => undefined);
    await ui.stop().catch(() => undefined);
    await rm(storagePath, { recursive: true, force: true });
  };
  try {
    browser = await launchBrowser();
    const context = await browser.newContext(UI_CONTEXT);
    const page = await context.newPage();
    return { page, frame: await openPluginSettings(page, ui), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** How often the settings page asks its server for news (POLL_MS in homebridge-ui/public/js/main.js). */
const NEWS_EVERY_MS = 3_000;

/**
 * Opens Plugins, then "Plugin Config" of this plugin, and returns the custom UI's frame once it is
 * ready. The browser context's clock is Playwright's (time flows as usual), so a test can move the
 * page to its next ask for news (`askForNews`) instead of waiting out the page's 3 s.
 */
export async function openPluginSettings(page: Page, ui: UiHost): Promise<Frame> {
  await page.clock.install();
  await page.goto(`${ui.url}/plugins`);
  const card = page.locator('app-plugin-card', { hasText: 'homebridge-lock-access' });
  await card.locator('[aria-label="Plugin Actions Dropdown"]').click();
  await card.locator('button.dropdown-item', { hasText: 'Plugin Config' }).click();
  const handle = await page.waitForSelector('iframe', { timeout: 30_000 });
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the settings iframe has no frame');
  // The page is shown (body display) once plugin-ui-utils says ready; our script then fills the badge.
  try {
    await frame.waitForSelector('#link-badge[data-state]', { timeout: 60_000 });
  } catch (error) {
    throw new Error(`the settings page did not get ready. Homebridge UI log:\n${ui.logs.slice(-30).join('\n')}`, { cause: error });
  }
  return frame;
}

/**
 * The settings page asks its server for news now rather than at its next 3 s: the clock of the
 * page (and of the Homebridge UI around it) jumps ahead by that much, as after a laptop lid was
 * closed for 3 s. Call it once the news exists on the plugin's side (a request the simulator saw, a
 * file written), then wait for what the page shows; a jump per wait keeps the Homebridge UI's own
 * timers (its socket's ping deadline, 45 s) far from due.
 */
export async function askForNews(page: Page): Promise<void> {
  await page.clock.fastForward(NEWS_EVERY_MS);
}

export interface AxeViolation {
  id: string;
  impact: string | null | undefined;
  help: string;
  /** Selector and HTML of each offending element. */
  nodes: string[];
}

/**
 * axe-core (WCAG 2 A and AA rules, best practices) over the whole document of the settings frame,
 * as the user's browser gets it from the Homebridge UI (its wrapper page around our index.html
 * included); only serious and critical findings.
 */
export async function axeViolations(frame: Frame): Promise<AxeViolation[]> {
  const loaded = await frame.evaluate(() => 'axe' in window);
  if (!loaded) await frame.addScriptTag({ path: join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
  const found = await frame.evaluate(async () => {
    interface AxeResult { violations: { id: string; impact?: string | null; help: string; nodes: { target: unknown[]; html: string; failureSummary?: string }[] }[] }
    const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<AxeResult> } }).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)} ${n.html.slice(0, 160)} ${n.failureSummary ?? ''}`.replace(/\s+/g, ' ')),
    }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
