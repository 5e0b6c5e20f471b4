// The settings page's Doorbell video card in a real browser, hosted by the real Homebridge UI: it
// says whether video works and which ffmpeg the plugin uses (from the plugin's status file), and its
// fields write the `video` section of the config.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort } from '../harness/homebridge.js';
import { browserTestsUnavailable, launchBrowser, openPluginSettings, snapshotPackage, startHomebridgeUi, type UiHost } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the video settings UI test: ${unavailable}`);

/** The status file of a running plugin (this test process stands in for it) whose video works. */
function status(video: Record<string, unknown>): string {
  const now = Date.now();
  return JSON.stringify({
    version: 1, updatedAt: now, pid: process.pid, startedAt: now,
    link: { state: 'linked', message: 'Linked.' },
    registrations: [],
    receiver: { listening: true, accepted: 0, duplicates: 0, rejected: {}, lastCallbacks: {} },
    devices: [],
    video,
  });
}

describe.skipIf(unavailable !== undefined)('the settings page\'s Doorbell video card', () => {
  let storagePath: string;
  let ui: UiHost | undefined;
  let browser: Browser | undefined;
  let frame: Frame;

  beforeAll(async () => {
    storagePath = await mkdtemp(join(tmpdir(), 'lock-access-video-ui-'));
    const pluginsDir = join(storagePath, 'plugins');
    await snapshotPackage(pluginsDir);
    await writeFile(join(storagePath, 'config.json'), JSON.stringify({
      bridge: { name: 'Video UI test', username: '0E:4D:61:74:74:73', port: await freePort(), pin: '031-45-154' },
      platforms: [{ platform: 'LockAccess', name: 'Lock Access', webhook: { publicUrl: 'https://home.example.net/lock-access' } }],
    }, null, 2));
    await mkdir(join(storagePath, 'lock-access'), { recursive: true });
    await writeFile(join(storagePath, 'lock-access', 'status.json'), status({ state: 'ready', ffmpegPath: '/usr/bin/ffmpeg', ffmpegVersion: '6.1.1', h264Encoder: 'libx264', secureVideo: true, replayMinutes: 60 }));
    ui = await startHomebridgeUi(storagePath, pluginsDir);
    browser = await launchBrowser();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 1400 } })).newPage();
    frame = await openPluginSettings(page, ui);
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await ui?.stop();
    await rm(storagePath, { recursive: true, force: true });
  });

  it('video works: "Works", with the ffmpeg it uses', async () => {
    await frame.waitForSelector('#video-badge[data-state="ready"]', { timeout: 30_000 });
    expect(await frame.textContent('#video-message')).toMatch(/works with ffmpeg 6\.1\.1 \(\/usr\/bin\/ffmpeg, H\.264 by libx264\).*60 minutes.*Secure Video clips/);
  });

  it('video off: "Off", why, and what to do', async () => {
    await writeFile(join(storagePath, 'lock-access', 'status.json'), status({ state: 'unavailable', problem: 'no ffmpeg on the PATH', secureVideo: true, replayMinutes: 60 }));
    await frame.waitForSelector('#video-badge[data-state="unavailable"]', { timeout: 30_000 });
    expect(await frame.textContent('#video-message')).toMatch(/no ffmpeg on the PATH.*still picture.*Install ffmpeg or set its path/);
  });

  it('its fields write the video section of the config', async () => {
    await frame.fill('#ffmpegPath', '/opt/ffmpeg/bin/ffmpeg');
    await frame.fill('#replayMinutes', '15');
    await frame.click('#secureVideo');
    await frame.click('#save');
    const block = async () => {
      const config = JSON.parse(await readFile(join(storagePath, 'config.json'), 'utf8')) as { platforms: Record<string, unknown>[] };
      return config.platforms.find((p) => p.platform === 'LockAccess')?.video;
    };
    await expect.poll(block, { timeout: 15_000 }).toEqual({ ffmpegPath: '/opt/ffmpeg/bin/ffmpeg', replayMinutes: 15, secureVideo: false });
  });
});
