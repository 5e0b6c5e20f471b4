// The settings page's Matter box in a real browser, hosted by the real Homebridge UI:
// with Matter on for the bridge it shows the pairing code and QR payload Homebridge made, says what
// was tested, and its switch writes `"matter": false` into the plugin's config.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { commissioningFile } from '../../src/settings-ui/matter-pairing.js';
import { freePort } from '../harness/homebridge.js';
import { askForNews, browserTestsUnavailable, launchBrowser, openPluginSettings, savedPluginBlock, snapshotPackage, startHomebridgeUi, UI_CONTEXT, type UiHost } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the Matter settings UI test: ${unavailable}`);

const USERNAME = '0E:4D:61:74:74:72';
const PAIRING = { qrCode: 'MT:-24J04QI14YNCP3IM10', manualPairingCode: '2149-324-5966', passcode: 75315796, discriminator: 2084, commissioned: false, fabricCount: 0, fabrics: [] };

describe.skipIf(unavailable !== undefined)('the settings page\'s Matter box', () => {
  let storagePath: string;
  let ui: UiHost | undefined;
  let browser: Browser | undefined;
  let frame: Frame;

  beforeAll(async () => {
    storagePath = await mkdtemp(join(tmpdir(), 'lock-access-matter-ui-'));
    const pluginsDir = join(storagePath, 'plugins');
    await snapshotPackage(pluginsDir);
    await writeFile(join(storagePath, 'config.json'), JSON.stringify({
      bridge: { name: 'Matter UI test', username: USERNAME, port: await freePort(), pin: '031-45-154', matter: { port: 5540 } },
      platforms: [{ platform: 'LockAccess', name: 'Lock Access', webhook: { publicUrl: 'https://home.example.net/lock-access' } }],
    }, null, 2));
    const file = commissioningFile(storagePath, USERNAME);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, JSON.stringify(PAIRING));
    ui = await startHomebridgeUi(storagePath, pluginsDir);
    browser = await launchBrowser();
    const page = await (await browser.newContext(UI_CONTEXT)).newPage();
    frame = await openPluginSettings(page, ui);
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await ui?.stop();
    await rm(storagePath, { recursive: true, force: true });
  });

  it('Matter on for the bridge: "On", the pairing code and the QR payload from Homebridge\'s Matter storage', async () => {
    await frame.waitForSelector('#matter-badge[data-state="on"]', { timeout: 30_000 });
    expect(await frame.textContent('#matter-code')).toBe('2149-324-5966');
    expect(await frame.textContent('#matter-qr')).toBe('MT:-24J04QI14YNCP3IM10');
    expect(await frame.isVisible('#matter-pairing')).toBe(true);
    expect(await frame.textContent('#matter-message')).toMatch(/pair it in Google Home, Alexa or another Matter app/);
  });

  it('says which Matter apps were tested and which not yet', async () => {
    const tested = await frame.textContent('#matter-tested');
    expect(tested).toMatch(/Tested with the matter\.js 0\.17 controller/);
    expect(tested).toMatch(/Not tried yet: Google Home, Amazon Alexa/);
  });

  it('the switch keeps the devices HomeKit-only: saved as "matter": false, and the box says so', async () => {
    expect(await frame.isChecked('#matter')).toBe(true);
    await frame.click('#matter');
    await frame.click('#save');
    const block = () => savedPluginBlock(storagePath);
    await expect.poll(async () => (await block()).matter, { timeout: 15_000 }).toBe(false);
    await askForNews(frame.page());
    await frame.waitForSelector('#matter-badge[data-state="off"]', { timeout: 15_000 });
    expect(await frame.textContent('#matter-message')).toMatch(/keeps its devices HomeKit-only/);
    expect(await frame.isVisible('#matter-pairing')).toBe(false);
  });
});
