// The settings page's Doorbell video card in a real browser, hosted by the real Homebridge UI: it
// says whether video works and which ffmpeg the plugin uses (from the plugin's status file), and its
// fields write the `video` section of the config.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { linkMessage } from '../../src/cloud/link-messages.js';
import { STATUS_VERSION } from '../../src/status/status-shape.js';
import { ffmpegProblem } from '../../src/video/ffmpeg-problems.js';
import { askForNews, browserTestsUnavailable, openSettingsPage, savedPluginBlock, type OpenSettingsPage, uiTestStorage } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the video settings UI test: ${unavailable}`);

/** The status file of a running plugin (this test process stands in for it) whose video works. */
function status(video: Record<string, unknown>): string {
  const now = Date.now();
  return JSON.stringify({
    version: STATUS_VERSION, updatedAt: now, pid: process.pid, startedAt: now,
    link: { state: 'linked', message: linkMessage('link.linked') },
    registrations: [],
    receiver: { listening: true, accepted: 0, duplicates: 0, rejected: {}, lastCallbacks: {} },
    devices: [],
    video,
  });
}

describe.skipIf(unavailable !== undefined)('the settings page\'s Doorbell video card', () => {
  let storagePath: string;
  let opened: OpenSettingsPage | undefined;
  let frame: Frame;

  beforeAll(async () => {
    let pluginsDir: string;
    ({ storagePath, pluginsDir } = await uiTestStorage('video-ui', '0E:4D:61:74:74:73'));
    await mkdir(join(storagePath, 'lock-access'), { recursive: true });
    await writeFile(join(storagePath, 'lock-access', 'status.json'), status({ state: 'ready', ffmpegPath: '/usr/bin/ffmpeg', ffmpegVersion: '6.1.1', h264Encoder: 'libx264', secureVideo: true, replayMinutes: 60 }));
    opened = await openSettingsPage(storagePath, pluginsDir);
    frame = opened.frame;
  }, 180_000);

  afterAll(async () => {
    await opened?.close();
  });

  it('video works: "Works", with the ffmpeg it uses', async () => {
    await frame.waitForSelector('#video-badge[data-state="ready"]', { timeout: 30_000 });
    expect(await frame.textContent('#video-message')).toMatch(/works with ffmpeg 6\.1\.1 \(\/usr\/bin\/ffmpeg, H\.264 by libx264\).*60 minutes.*Secure Video clips/);
  });

  it('video off: "Off", why, and what to do', async () => {
    await writeFile(join(storagePath, 'lock-access', 'status.json'), status({ state: 'unavailable', problem: ffmpegProblem('videoProblem.notOnPath'), secureVideo: true, replayMinutes: 60 }));
    await askForNews(frame.page());
    await frame.waitForSelector('#video-badge[data-state="unavailable"]', { timeout: 30_000 });
    expect(await frame.textContent('#video-message')).toMatch(/no ffmpeg on the PATH.*still picture.*Install ffmpeg or set its path/);
  });

  it('its fields write the video section of the config', async () => {
    await frame.fill('#ffmpegPath', '/opt/ffmpeg/bin/ffmpeg');
    await frame.fill('#replayMinutes', '15');
    await frame.click('#secureVideo');
    await frame.click('#save');
    await expect.poll(async () => (await savedPluginBlock(storagePath)).video, { timeout: 15_000 }).toEqual({ ffmpegPath: '/opt/ffmpeg/bin/ffmpeg', replayMinutes: 15, secureVideo: false });
  });
});
