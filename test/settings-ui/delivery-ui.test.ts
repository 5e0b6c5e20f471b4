// Whether events arrive, in a real browser hosted by the real Homebridge UI: while the plugin's
// delivery check finds events not arriving, a banner above everything says so (since when, what
// was found and checked, what to do); it goes once they arrive again. The check's two settings are
// written to the config's webhook block, checked by the plugin's own rules.
import { legacyMessage } from '../../src/util/ui-message.js';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { emptyStatus, type DeliveryStatus, type Status } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';
import { REPO_ROOT } from '../harness/homebridge.js';
import { askForNews, axeViolations, browserTestsUnavailable, openSettingsPage, savedPluginBlock, uiTestStorage, type OpenSettingsPage } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the delivery UI browser tests: ${unavailable}`);

const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

describe.skipIf(unavailable !== undefined)('whether events arrive, in the settings UI', () => {
  let storagePath: string;
  let opened: OpenSettingsPage | undefined;
  let frame: Frame;

  /** The status file as the running plugin writes it (this test process stands in for it: its pid is alive). */
  const writeStatus = async (delivery: DeliveryStatus, accounts?: Status['accounts']) => {
    const now = Date.now();
    const status: Status = {
      ...emptyStatus(now),
      pid: process.pid,
      startedAt: now - 7 * 60 * 60_000,
      link: { state: 'linked', message: legacyMessage('Linked to your Lock Access account.') },
      devices: [{ kind: 'lock', id: 'LOCK-1', name: 'Front Door', source: 'config', hidden: false }],
      delivery,
      ...(accounts === undefined ? {} : { accounts }),
    };
    await Storage.under(storagePath).write('status.json', status);
  };
  const configBlock = async () => (await savedPluginBlock(storagePath)) as { webhook: Record<string, unknown> };

  beforeAll(async () => {
    const made = await uiTestStorage('delivery-ui', '0E:2A:3B:4C:5D:81');
    storagePath = made.storagePath;
    const pluginsDir = made.pluginsDir;
    const now = Date.now();
    await writeStatus({
      state: 'notArriving',
      since: now - 60_000,
      checkEveryMinutes: 360,
      lastHeardAt: now - 6 * 60 * 60_000,
      lastCheck: { at: now - 90_000, how: 'probe', lockId: 'LOCK-1', outcome: 'nothing', message: legacyMessage('A status request for Front Door brought no callback within 30 s.') },
      checked: { registrations: legacyMessage('every webhook registration was sent again (2 confirmed)'), selfCheck: legacyMessage('the public address self-check passes (https://home.example.net/lock-access/health reaches this plugin\'s listener)') },
      nextCheckAt: now + 60_000,
    });
    opened = await openSettingsPage(storagePath, pluginsDir);
    frame = opened.frame;
  }, 180_000);

  afterAll(async () => {
    await opened?.close();
  }, 60_000);

  it('while events are not arriving, a banner above everything says so, since when, what was found and checked, and what to do', async () => {
    const banner = frame.locator('#delivery-banner');
    await expect.poll(() => banner.isVisible(), { timeout: 30_000 }).toBe(true);
    const text = (await banner.textContent()) ?? '';
    expect(text).toMatch(/Events from Lock Access are not arriving\./);
    expect(text).toMatch(/Nothing has come in since /);
    expect(text).toContain('A status request for Front Door brought no callback within 30 s.');
    expect(text).toContain('Checked: every webhook registration was sent again (2 confirmed); the public address self-check passes');
    expect(text).toMatch(/Send a test event/);
    expect(text).toMatch(/Events stopped arriving/);
    expect(await banner.getAttribute('role')).toBe('alert');
    // Above everything: above the Status card and every other card.
    const bannerBox = await banner.boundingBox();
    const statusBox = await frame.locator('#status-card').boundingBox();
    expect(bannerBox && statusBox && bannerBox.y + bannerBox.height <= statusBox.y).toBe(true);
    expect(await frame.locator('#la-root > :not([hidden])').first().getAttribute('id')).toBe('delivery-banner');
    expect(await frame.locator('#delivery').textContent()).toMatch(/^No, since /);
    expect(await axeViolations(frame)).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await frame.locator('#la-root').screenshot({ path: join(ARTIFACTS, 'ui-delivery-banner.png'), animations: 'disabled' });
  }, 120_000);

  it('once events arrive again the banner goes, and the Status card says they arrive', async () => {
    await writeStatus({ state: 'arriving', since: Date.now(), checkEveryMinutes: 360, lastHeardAt: Date.now(), nextCheckAt: Date.now() + 360 * 60_000 });
    await askForNews(frame.page());
    await expect.poll(() => frame.locator('#delivery-banner').isVisible(), { timeout: 30_000 }).toBe(false);
    expect(await frame.locator('#delivery').textContent()).toMatch(/^Yes /);
  }, 60_000);

  it('with several accounts, the banner names the account whose events are not arriving, while the main account\'s arrive', async () => {
    const now = Date.now();
    await writeStatus({ state: 'arriving', since: now, checkEveryMinutes: 360, lastHeardAt: now }, {
      cabin: {
        name: 'Cabin',
        link: { state: 'linked', message: legacyMessage('Linked.') },
        delivery: { state: 'notArriving', since: now - 60_000, checkEveryMinutes: 360, lastCheck: { at: now - 90_000, how: 'probe', lockId: 'L2', outcome: 'nothing', message: legacyMessage('A status request for Cabin Door brought no callback within 30 s.') } },
      },
    });
    const banner = frame.locator('#delivery-banner');
    await expect.poll(() => banner.isVisible(), { timeout: 30_000 }).toBe(true);
    const text = (await banner.textContent()) ?? '';
    expect(text).toContain('Not arriving for: Cabin (cabin).');
    expect(text).not.toContain('the main account');
    expect(text).toContain('A status request for Cabin Door brought no callback within 30 s.');
    await writeStatus({ state: 'arriving', since: now, checkEveryMinutes: 360, lastHeardAt: now });
    await expect.poll(() => banner.isVisible(), { timeout: 30_000 }).toBe(false);
  }, 60_000);

  it('the check\'s minutes and the sensor switch are written to webhook; a number the plugin refuses is not', async () => {
    const minutes = frame.locator('#deliveryCheckMinutes');
    expect(await minutes.getAttribute('placeholder')).toBe('360');
    expect(await frame.locator('#deliverySensor').isChecked()).toBe(true);
    await minutes.fill('60');
    await minutes.dispatchEvent('change');
    await frame.locator('#deliverySensor').uncheck();
    await frame.locator('#save').click();
    await expect.poll(async () => JSON.stringify((await configBlock()).webhook), { timeout: 15_000 }).toMatch(/"deliveryCheckMinutes":60.*"deliverySensor":false|"deliverySensor":false.*"deliveryCheckMinutes":60/);
    await minutes.fill('-5');
    await minutes.dispatchEvent('change');
    await expect.poll(() => frame.locator('#delivery-result').textContent(), { timeout: 15_000 }).toMatch(/deliveryCheckMinutes must be 0 \(off\) or 1 to 10,080\./);
    await frame.locator('#save').click();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await configBlock()).webhook.deliveryCheckMinutes).toBe(60);
  }, 60_000);
});
