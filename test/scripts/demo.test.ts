// `npm start` shows everything. The demo (scripts/demo.ts) runs the simulator, a real
// Homebridge with the plugin and the real Homebridge UI; a newcomer signs in with the printed
// credentials, opens the plugin's settings page and watches it fill as the scripted day runs.
// `--no-ui` keeps the terminal-only demo. Two accounts run in the one block: the main one and "Cabin".
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';

import { CameraViewer, streamServices } from '../harness/camera-viewer.js';
import { HapController } from '../harness/hap.js';
import { REPO_ROOT } from '../harness/homebridge.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';
import { browserTestsUnavailable, launchBrowser, openPluginSettings, UI_CONTEXT } from '../settings-ui/host.js';

interface DemoRun {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

const runs: DemoRun[] = [];
const folders: string[] = [];
let browser: Browser | undefined;

afterEach(async () => {
  await browser?.close().catch(() => undefined);
  browser = undefined;
  for (const run of runs.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGINT');
      const timer = setTimeout(() => run.child.kill('SIGKILL'), 20_000);
      await run.exited;
      clearTimeout(timer);
    }
  }
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
}, 60_000);

async function startDemo(args: string[]): Promise<DemoRun> {
  const storage = await mkdtemp(join(tmpdir(), 'lock-access-demo-'));
  folders.push(storage);
  // One process (node with the tsx loader), so stopping it stops the demo's own children too.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--storage', storage, ...args], { cwd: REPO_ROOT, stdio: 'pipe' });
  let out = '';
  const waiters = new Set<{ pattern: RegExp; resolve: (match: RegExpExecArray) => void }>();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const waiter of waiters) {
      const match = waiter.pattern.exec(out);
      if (match) {
        waiters.delete(waiter);
        waiter.resolve(match);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const run: DemoRun = {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 90_000) {
      const found = pattern.exec(out);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { pattern, resolve: (match: RegExpExecArray) => { clearTimeout(timer); resolve(match); } };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`the demo did not print ${pattern} within ${timeoutMs} ms:\n${out.slice(-3000)}`));
        }, timeoutMs);
        waiters.add(waiter);
        void exited.then(() => {
          if (!waiters.delete(waiter)) return;
          clearTimeout(timer);
          reject(new Error(`the demo stopped before printing ${pattern}:\n${out.slice(-3000)}`));
        });
      });
    },
  };
  runs.push(run);
  return run;
}

/** fetch, failing with the demo's output when the address cannot be reached. */
async function fetchOrSay(run: DemoRun, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw new Error(`${url} cannot be reached (${String(error)}). The demo printed:\n${run.output().slice(-4000)}`, { cause: error });
  }
}

/**
 * The scripted day's recording plays in the doorbell's camera view: a real controller pairs with the
 * demo's Homebridge and opens the camera, once the day is over.
 */
async function cameraPlaysRecording(run: DemoRun): Promise<void> {
  const port = Number((await run.waitFor(/bridge port (\d+)/))[1]);
  await run.waitFor(/The scripted day is over/, 120_000);
  // Said on the lines after that one: waited for, since the output may arrive in pieces.
  await run.waitFor(/Doorbell video \(the bundled ffmpeg\)/, 10_000);
  const storage = folders.at(-1) ?? '';
  const config = JSON.parse(await readFile(join(storage, 'config.json'), 'utf8')) as { bridge: { username: string; pin: string } };
  const controller = await HapController.pair({ port, username: config.bridge.username, pin: config.bridge.pin });
  try {
    const doorbell = (await controller.accessories()).find((accessory) => accessory.services.some((service) => service.type === '121'));
    const ids = doorbell === undefined ? undefined : streamServices(doorbell)[0];
    if (!ids) throw new Error('no doorbell camera in the demo');
    const viewer = await CameraViewer.setUp(controller, ids, { ffmpeg: testFfmpeg() });
    try {
      expect(await viewer.start({ ffmpeg: testFfmpeg() })).toBe(0);
      await expect.poll(() => viewer.frames().changes, { timeout: 20_000 }).toBeGreaterThan(10);
      await run.waitFor(/the camera view plays the recording/);
    } finally {
      await viewer.end().catch(() => undefined);
      viewer.close();
    }
  } finally {
    await controller.close();
  }
}

describe('npm start', () => {
  it('with --no-ui: Homebridge, the simulator and the scripted day in the terminal, no Homebridge UI', async () => {
    const run = await startDemo(['--no-ui', '--once', '--interval', '200']);
    await run.waitFor(/Webhooks registered/);
    await run.waitFor(/Stopped\./, 120_000);
    expect(await run.exited).toBe(0);
    const out = run.output();
    expect(out).toMatch(/Front Door\s+Unlocked by Jamie Guest at the keypad/);
    // Two accounts in one block: Cabin registers its own lock and user hook (the shared front door
    // is registered by the main account alone), and its lock's callback arrives on its own path.
    expect(out).toMatch(/accounts\s+the main one .* and Cabin \(cabin: the Cabin Door, and the Front Door shared with it\)/);
    expect(out).toMatch(/Webhooks registered \(main account: [a-z, ]+; Cabin: (user, lock|lock, user)\)/);
    expect(out).toMatch(/Cabin Door\s+Unlocked .*Casey Cabin/);
    expect(out).toMatch(/Front Doorbell\s+Recording available/);
    expect(out).not.toMatch(/Homebridge UI/);
  }, 150_000);

  const unavailable = browserTestsUnavailable();
  // With a browser (always in the gate) the Homebridge UI test below checks this on its own demo run:
  // one demo run fewer. Without one that test is skipped, so the camera check gets a run of its own.
  if (unavailable !== undefined) {
    console.warn(`Skipping the demo's Homebridge UI test: ${unavailable}`);
    it('the scripted day\'s recording plays in the doorbell\'s camera view (a real controller pairs and opens the camera)', async () => {
      await cameraPlaysRecording(await startDemo(['--no-ui', '--interval', '200']));
    }, 180_000);
  }

  it.skipIf(unavailable !== undefined)('the Homebridge UI on a printed address: sign in with the printed credentials, watch the settings page fill, play the recording; the recording also plays in the doorbell\'s camera view (a real controller pairs and opens the camera)', async () => {
    // The page shows the day's events from the plugin's event log whether it opens during the day or
    // after (that it fills in live is settings-ui.test.ts's check): the shortest step, not half a second.
    const run = await startDemo(['--interval', '200', '--ui-port', '0']);
    const [, url = '', username = '', password = ''] = await run.waitFor(/Homebridge UI: (http:\/\/127\.0\.0\.1:\d+)\s+\(user (\S+), password (\S+)\)/);
    // The credentials work, and only they do.
    const login = (pass: string) => fetchOrSay(run, `${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: pass }) });
    expect((await login(password)).status).toBe(201);
    expect((await login(`${password}x`)).status).toBe(403);

    browser = await launchBrowser();
    const page = await (await browser.newContext(UI_CONTEXT)).newPage();
    await page.goto(`${url}/login`);
    await page.locator('input[type="password"]').waitFor({ timeout: 30_000 });
    await page.locator('input:not([type="password"]):not([type="hidden"]):not([type="checkbox"])').first().fill(username);
    await page.locator('input[type="password"]').fill(password);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL((address) => !address.pathname.startsWith('/login'), { timeout: 30_000 });
    const frame = await openPluginSettings(page, { url, port: Number(new URL(url).port), logs: [], stop: () => Promise.resolve() });

    await expect.poll(() => frame.locator('#link-badge').getAttribute('data-state'), { timeout: 60_000 }).toBe('linked');
    await expect.poll(() => frame.locator('#registrations tbody tr[data-kind]').count(), { timeout: 60_000 }).toBe(3);
    // Front Door (shared with Cabin, one device), Front Doorbell and Cabin's own Cabin Door.
    await expect.poll(() => frame.locator('#devices tbody tr[data-kind]').count(), { timeout: 30_000 }).toBe(3);
    // The day runs after the address was printed: the event log shows it on the page.
    const rows = frame.locator('#events tbody tr');
    await expect.poll(async () => (await rows.allTextContents()).join('\n'), { timeout: 90_000 }).toMatch(/Recording available/);
    await frame.locator('#events tr[data-kind="videoAvailable"] button[data-dvr]').first().click();
    await expect.poll(() => frame.locator('#player-status').getAttribute('data-state'), { timeout: 30_000 }).toMatch(/playing|error/);
    expect(await frame.locator('#player-status').getAttribute('data-state')).toBe('playing');
    await expect.poll(async () => (await rows.allTextContents()).join('\n'), { timeout: 90_000 }).toMatch(/Bridge online/);
    await cameraPlaysRecording(run);

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/Stopped\./);
  }, 300_000);

  it('refuses a --storage folder it did not make, instead of emptying it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'lock-access-demo-foreign-'));
    folders.push(folder);
    await writeFile(join(folder, 'precious.txt'), 'keep me');
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--storage', folder, '--no-ui', '--once'], { cwd: REPO_ROOT, stdio: 'pipe' });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => { resolve(c); }));
    expect(code).toBe(1);
    expect(out).toMatch(/not made by this demo/);
    expect(existsSync(join(folder, 'precious.txt'))).toBe(true);
  }, 60_000);
});
