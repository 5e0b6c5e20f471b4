// The settings UI's people list in a real browser, hosted by the real Homebridge UI: the
// people the event log names with an "Automation trigger" toggle written to `people`, the event
// log's per-person filter, and the Devices table's "Door sensor only" checkbox. The event log is
// written by the plugin's own EventLog from real device events.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Actor, DeviceEvent } from '../../src/model/events.js';
import { Storage } from '../../src/storage.js';
import { EventLog } from '../../src/status/event-log.js';
import { REPO_ROOT } from '../harness/homebridge.js';
import { browserTestsUnavailable, openSettingsPage, savedPluginBlock, uiTestStorage, type OpenSettingsPage } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the people UI browser tests: ${unavailable}`);

const JAMIE: Actor = { kind: 'person', userId: 'user-guest-0002', firstName: 'Jamie', lastName: 'Guest' };
const ALEX: Actor = { kind: 'person', userId: 'user-alex-0001', firstName: 'Alex', lastName: 'Example' };
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

describe.skipIf(unavailable !== undefined)('people and automation triggers in the settings UI', () => {
  let storagePath: string;
  let opened: OpenSettingsPage | undefined;
  let page: Page;
  let frame: Frame;

  const configBlock = () => savedPluginBlock(storagePath);

  beforeAll(async () => {
    const made = await uiTestStorage('people-ui', '0E:2A:3B:4C:5D:7F', { people: [{ userId: 'user-old-0009', name: 'Old Friend' }] });
    storagePath = made.storagePath;
    const pluginsDir = made.pluginsDir;
    // The event log as the plugin writes it.
    const log = await EventLog.open(Storage.under(storagePath), { debounceMs: 1 });
    const t0 = Date.UTC(2026, 10, 22, 8, 0, 0);
    const events: [number, DeviceEvent][] = [
      [t0, { lockId: 'LOCK-1', at: t0, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: JAMIE }],
      [t0 + 60_000, { lockId: 'LOCK-1', at: t0 + 60_000, kind: 'doorState', state: 'open' }],
      [t0 + 120_000, { lockId: 'LOCK-1', at: t0 + 120_000, kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: ALEX }],
      [t0 + 180_000, { lockId: 'LOCK-1', at: t0 + 180_000, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'manual', userId: 'manualunlock' } }],
    ];
    for (const [at, event] of events) log.record({ deviceKind: 'lock', deviceId: 'LOCK-1', deviceName: 'Front Door', event, at });
    await log.flush();

    opened = await openSettingsPage(storagePath, pluginsDir);
    page = opened.page;
    frame = opened.frame;
  }, 180_000);

  afterAll(async () => {
    await opened?.close();
  }, 60_000);

  it('lists the people the event log names (name and UserID, newest first), and configured people the log no longer names', async () => {
    const rows = frame.locator('#people tbody tr');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(3);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-user')))).toEqual(['user-alex-0001', 'user-guest-0002', 'user-old-0009']);
    const jamie = frame.locator('#people tr[data-user="user-guest-0002"]');
    expect(await jamie.textContent()).toContain('Jamie Guest');
    expect(await jamie.textContent()).toContain('user-guest-0002');
    expect(await frame.locator('#people tr[data-user="user-old-0009"]').textContent()).toMatch(/Old Friend.*not in the event log/);
    // Reserved actors (here: turned by hand) are not people.
    expect(await frame.locator('#people').textContent()).not.toMatch(/manualunlock/);
    expect(await frame.locator('#people input[data-trigger="user-old-0009"]').isChecked()).toBe(true);
    expect(await frame.locator('#people input[data-trigger="user-guest-0002"]').isChecked()).toBe(false);
    expect(await frame.locator('#people input[data-trigger="user-guest-0002"]').getAttribute('aria-label')).toBe('Automation trigger for Jamie Guest');
    await mkdir(ARTIFACTS, { recursive: true });
    await frame.locator('#people-card').screenshot({ path: join(ARTIFACTS, 'ui-people.png') });
  }, 120_000);

  it('the "Automation trigger" toggles write people to the config: on adds the person with their name, off removes them', async () => {
    await frame.locator('#people input[data-trigger="user-guest-0002"]').check();
    await frame.locator('#people input[data-trigger="user-old-0009"]').uncheck();
    await expect.poll(() => frame.locator('#people-result').textContent()).toMatch(/Trigger off for Old Friend/);
    await frame.locator('#save').click();
    await expect.poll(async () => JSON.stringify((await configBlock()).people), { timeout: 15_000 }).toBe(JSON.stringify([{ userId: 'user-guest-0002', name: 'Jamie Guest' }]));
    // The keyboard works the toggle too.
    await frame.locator('#people input[data-trigger="user-alex-0001"]').focus();
    await page.keyboard.press('Space');
    expect(await frame.locator('#people input[data-trigger="user-alex-0001"]').isChecked()).toBe(true);
    await frame.locator('#save').click();
    await expect.poll(async () => ((await configBlock()).people as unknown[]).length, { timeout: 15_000 }).toBe(2);
    const block = await configBlock();
    expect(block.people).toEqual([{ userId: 'user-guest-0002', name: 'Jamie Guest' }, { userId: 'user-alex-0001', name: 'Alex Example' }]);
    // Saving kept the rest of the config.
    expect(block.apiKey).toBe('people-ui-key');
    expect(block.locks).toEqual([{ id: 'LOCK-1', name: 'Front Door' }]);
  }, 120_000);

  it('the event log filters by person', async () => {
    const rows = frame.locator('#events tbody tr');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(4);
    await frame.locator('#events-person').selectOption('user-guest-0002');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/Unlocked by Jamie Guest at the keypad/);
    await frame.locator('#events-card').screenshot({ path: join(ARTIFACTS, 'ui-events-by-person.png') });
    await frame.locator('#events-person').selectOption('user-alex-0001');
    await expect.poll(async () => (await rows.allTextContents()).join('\n')).toMatch(/Locked remotely by Alex Example/);
    expect(await rows.count()).toBe(1);
    await frame.locator('#events-person').selectOption('');
    await expect.poll(() => rows.count()).toBe(4);
  }, 60_000);

  it('the Devices table\'s "Door sensor only" checkbox is written to the lock\'s entry', async () => {
    const row = frame.locator('#devices tr[data-kind="lock"][data-id="LOCK-1"]');
    await row.locator('input[data-option="doorSensorOnly"]').check();
    await frame.locator('#save').click();
    await expect.poll(async () => JSON.stringify((await configBlock()).locks), { timeout: 15_000 }).toBe(JSON.stringify([{ id: 'LOCK-1', name: 'Front Door', doorSensorOnly: true }]));
    await row.locator('input[data-option="doorSensorOnly"]').uncheck();
    await frame.locator('#save').click();
    await expect.poll(async () => JSON.stringify((await configBlock()).locks), { timeout: 15_000 }).toBe(JSON.stringify([{ id: 'LOCK-1', name: 'Front Door' }]));
  }, 60_000);
});
