// The settings page with several accounts, in a real browser hosted by the real Homebridge UI, the
// simulator as the cloud (a main account and "Cabin" with its own key and client, a lock both
// hold): a row per account, linking and testing the account of a row, Add account, devices per
// account with a shared device's owner, an unlink that leaves registrations, the unlink of that
// owner, Remove account, the keyboard and axe. One page load serves every case, in order.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { accountStorage } from '../../src/accounts/account-storage.js';
import { LEDGER_FILE } from '../../src/cloud/registrations/registration-ledger.js';
import { emptyStatus, type Status } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { askForNews, axeViolations, browserTestsUnavailable, openSettingsPage, savedPluginBlock, uiTestStorage, type OpenSettingsPage } from './host.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the settings page's account rows tests: ${unavailable}`);

/** A plugin that runs (this test process stands in for it) and holds LOCK-1 for both accounts, Cabin owning it. */
function runningStatus(now: number): Status {
  return {
    ...emptyStatus(now),
    pid: process.pid,
    link: { state: 'linked', message: { code: 'link.linked', params: {}, text: 'Linked to your Lock Access account.' } },
    devices: [{ kind: 'lock', id: 'LOCK-1', name: 'Front Door', source: 'both', hidden: false }],
    accounts: { cabin: { name: 'Cabin', link: { state: 'linked', message: { code: 'accounts.link.linked', params: {}, text: 'Linked.' } } } },
  };
}

describe.skipIf(unavailable !== undefined)('README "Several homes or accounts": the settings page\'s account rows', { timeout: 120_000 }, () => {
  let sim: Simulator;
  let opened: OpenSettingsPage | undefined;
  let storagePath = '';
  let frame: Frame;
  let page: Page;
  const lockAccess = (...parts: string[]) => join(storagePath, 'lock-access', ...parts);
  const exists = (path: string) => stat(path).then(() => true, () => false);
  const result = () => frame.locator('#account-result').textContent();
  const focused = () => frame.evaluate(() => document.activeElement?.id ?? '');

  beforeAll(async () => {
    sim = await startSimulator({ accounts: [{ id: 'cabin', name: 'Cabin' }], locks: [{ id: 'LOCK-1', accounts: ['main', 'cabin'] }] });
    const cabin = sim.accountOf('cabin');
    const made = await uiTestStorage('accounts-ui', '0E:A1:4E:55:49:02', {
      apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret, baseUrl: sim.baseUrl, authUrl: sim.authUrl,
      accounts: [{ id: 'cabin', name: 'Cabin', apiKey: cabin.apiKey, clientId: cabin.clientId, clientSecret: cabin.clientSecret, locks: [{ id: 'LOCK-1' }] }],
    });
    storagePath = made.storagePath;
    const storage = Storage.under(storagePath);
    await storage.ensureDir();
    await storage.write('status.json', runningStatus(Date.now()));
    await storage.write('device-accounts.json', { version: 1, devices: { 'lock:LOCK-1': { owner: 'cabin', holders: ['main', 'cabin'] } } });
    opened = await openSettingsPage(storagePath, made.pluginsDir);
    ({ frame, page } = opened);
  }, 180_000);

  afterAll(async () => {
    await opened?.close();
    await sim.close().catch(() => undefined);
  }, 60_000);

  it('a row per account, the main one first: name, id, a badge, and Link, Test and Unlink; Remove on an extra account\'s row', async () => {
    await expect.poll(() => frame.locator('#accounts tbody tr[data-account="cabin"] [data-role="badge"]').getAttribute('data-state')).toBe('unlinked');
    const rows = await frame.locator('#accounts tbody tr').evaluateAll((trs) => trs.map((tr) => [
      tr.getAttribute('data-account'), tr.querySelector('th')?.textContent, tr.querySelector('code')?.textContent,
      Array.from(tr.querySelectorAll('button')).map((b) => b.textContent),
    ]));
    expect(rows).toEqual([
      ['main', 'Main account', 'main', ['Link account', 'Test connection', 'Unlink account']],
      ['cabin', 'Cabin', 'cabin', ['Link account', 'Test connection', 'Unlink account', 'Remove account']],
    ]);
  });

  it('"Link account" (Enter) points the link steps at its account; a pasted token links that account alone, into its own folder (0600)', async () => {
    for (const [id, name] of [['cabin', 'Cabin'], ['main', 'Main account']] as const) {
      await frame.locator(`#account-row-${id} button[data-action="link"]`).press('Enter');
      expect(await focused()).toBe('oauth-start');
      expect(await frame.locator('#link-target').textContent()).toBe(`These steps link ${name} (${id}).`);
      if (!await frame.locator('#refreshToken').isVisible()) await frame.locator('details summary').press('Enter');
      await frame.locator('#refreshToken').fill(sim.issueRefreshToken(id));
      await frame.locator('#link-token').press('Enter');
      // The answer comes once the server is done with the link.
      await expect.poll(result, { timeout: 20_000 }).toMatch(id === 'cabin' ? /^Cabin: Linked/ : /^Linked/);
      await expect.poll(() => frame.locator(`#account-row-${id} [data-role="badge"]`).getAttribute('data-state'), { timeout: 20_000 }).toBe('linked');
      if (id === 'cabin') {
        expect((await stat(lockAccess('accounts', 'cabin', 'tokens.json'))).mode & 0o777).toBe(0o600);
        expect(await exists(lockAccess('tokens.json'))).toBe(false);
      }
    }
    expect(sim.stats.accounts).toMatchObject({ cabin: { grants: 1 }, main: { grants: 1 } });
  });

  it('Test (Space) on Cabin\'s row asks the service with Cabin\'s token and names Cabin', async () => {
    const asked = (id: string) => sim.stats.accounts[id]?.byRoute['GET /api/users/me'] ?? 0;
    const [cabinBefore, mainBefore] = [asked('cabin'), asked('main')];
    await frame.locator('#test-connection-cabin').press(' ');
    await expect.poll(result, { timeout: 20_000 }).toMatch(/^Cabin: Connected/);
    expect([asked('cabin'), asked('main')]).toEqual([cabinBefore + 1, mainBefore]);
  });

  it('Cabin linked but waiting to be compared with the main account\'s user (the plugin says so): the badge says Waiting and the row says why; once it runs, Linked', async () => {
    const storage = Storage.under(storagePath);
    const badge = frame.locator('#accounts tbody tr[data-account="cabin"] [data-role="badge"]');
    const waiting = runningStatus(Date.now());
    waiting.accounts = { cabin: { name: 'Cabin', link: { state: 'waiting', since: Date.now(), message: { code: 'accounts.link.waiting', params: { minutes: 2 }, text: 'Linked, but nothing is set up yet.' } } } };
    await storage.write('status.json', waiting);
    await askForNews(page);
    await expect.poll(() => badge.getAttribute('data-state')).toBe('waiting');
    expect(await badge.textContent()).toBe('Waiting');
    expect(await frame.locator('#accounts tbody tr[data-account="cabin"] [data-role="message"]').textContent()).toMatch(/^Linked, but nothing is set up yet: .*GET \/users\/me did not answer.* again in 2 min\.$/);
    await storage.write('status.json', runningStatus(Date.now()));
    await askForNews(page);
    await expect.poll(() => badge.getAttribute('data-state')).toBe('linked');
  });

  it('devices per account: the shared lock under its owner Cabin, naming the main account as its other holder; its options go to Cabin\'s entry', async () => {
    const row = frame.locator('#devices tr[data-kind="lock"][data-id="LOCK-1"]');
    await expect.poll(() => row.getAttribute('data-owner')).toBe('cabin');
    expect(await row.getAttribute('data-holders')).toBe('main cabin');
    expect(await row.locator('[data-role="shared"]').textContent()).toBe('Shared: owned by Cabin, also held by Main account.');
    expect(await frame.locator('#devices tr[data-group]').evaluateAll((rows) => rows.map((r) => r.textContent))).toEqual(['Devices of Cabin (cabin)']);
    await row.locator('input[data-option="doorSensor"]').press(' ');
    await expect.poll(() => frame.locator('#devices-result').textContent()).toMatch(/^Changed/);
    await frame.locator('#save').press('Enter');
    await expect.poll(async () => (await savedPluginBlock(storagePath)).accounts, { timeout: 15_000 })
      .toMatchObject([{ id: 'cabin', locks: [{ id: 'LOCK-1', doorSensor: true }] }]);
    expect((await savedPluginBlock(storagePath)).locks).toEqual([{ id: 'LOCK-1', name: 'Front Door' }]);
  });

  it('Add account from the keyboard: the id is made from the name and checked as the config checks it; the entry is saved through the Homebridge UI', async () => {
    await frame.locator('#add-account').press('Enter');
    expect(await frame.locator('#add-account').getAttribute('aria-expanded')).toBe('true');
    expect(await focused()).toBe('new-account-name');
    await page.keyboard.type('Parents’ House');
    expect(await frame.locator('#new-account-id').inputValue()).toBe('parents-house');
    const refused = async (id: string, words: RegExp) => {
      await frame.locator('#new-account-id').fill(id);
      await frame.locator('#new-account-add').press('Enter');
      await expect.poll(() => frame.locator('#new-account-id-problem').textContent()).toMatch(words);
      expect(await frame.locator('#new-account-id').getAttribute('aria-invalid')).toBe('true');
      expect(await focused()).toBe('new-account-id');
    };
    await refused('main', /main account's id/);
    await refused('cabin', /already has the id "cabin"/);
    await refused('Parents House', /1 to 32 lowercase letters/);
    await frame.locator('#new-account-id').fill('parents');
    await frame.locator('#new-account-apiKey').fill('parents-own-key');
    await frame.locator('#new-account-add').press('Enter');
    await expect.poll(focused).toBe('');
    await expect.poll(() => frame.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-account'))).toBe('parents');
    expect(await frame.locator('#add-account-form').isHidden()).toBe(true);
    expect(await result()).toMatch(/^Parents’ House added/);
    expect(await frame.locator('#account-row-parents [data-role="badge"]').getAttribute('data-state')).toBe('unlinked');
    await frame.locator('#save').click();
    await expect.poll(async () => (await savedPluginBlock(storagePath)).accounts, { timeout: 15_000 })
      .toMatchObject([{ id: 'cabin' }, { id: 'parents', name: 'Parents’ House', apiKey: 'parents-own-key' }]);
  });

  it('the keyboard reaches every row\'s controls in order, each with a visible focus; axe finds nothing serious with the form open', async () => {
    await frame.locator('#add-account').press('Enter');
    await frame.locator('#account-row-main button[data-action="link"]').focus();
    const walked: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const here = await frame.evaluate(() => {
        const node = document.activeElement as HTMLElement | null;
        const style = node ? getComputedStyle(node) : undefined;
        const visible = style !== undefined && (style.boxShadow !== 'none' || (style.outlineStyle !== 'none' && style.outlineWidth !== '0px'));
        return `${node?.closest('tr')?.getAttribute('data-account') ?? ''}/${node?.dataset.action ?? node?.id ?? ''}/${visible ? 'visible' : 'INVISIBLE'}`;
      });
      walked.push(here);
      await page.keyboard.press('Tab');
    }
    expect(walked).toEqual([
      'main/link/visible', 'main/test/visible', 'main/unlink/visible',
      'cabin/link/visible', 'cabin/test/visible', 'cabin/unlink/visible', 'cabin/remove/visible',
      'parents/link/visible', 'parents/test/visible', 'parents/unlink/visible', 'parents/remove/visible',
      '/add-account/visible',
    ]);
    expect(await axeViolations(frame)).toEqual([]);
    await frame.locator('#new-account-name').press('Escape');
    expect(await frame.locator('#add-account-form').isHidden()).toBe(true);
    expect(await focused()).toBe('add-account');
  });

  it('Unlink of Parents, whose registrations the service holds while no token of Parents can sign in: each one left is listed in the page\'s words, with why', async () => {
    // What a plugin run of Parents registered before its tokens went away: its ledger, as the plugin writes it.
    const registered = (kind: 'lock' | 'user', id: string) => ({
      kind, id, clientId: 'parents-client', url: 'https://example.invalid/lock-access/parents', types: ['lock.state'],
      tokenGeneration: 1, tokenFingerprint: 'f1', state: 'registered', lastSuccessAt: Date.now(),
    });
    await accountStorage(Storage.under(storagePath), 'parents').write(LEDGER_FILE, { version: 1, entries: [registered('lock', 'LOCK-1'), registered('user', '')] });
    const unlink = frame.locator('#unlink-parents');
    await unlink.press('Enter');
    await expect.poll(() => unlink.textContent()).toBe('Click again to unlink');
    await unlink.press('Enter');
    await expect.poll(result, { timeout: 30_000 }).toMatch(/^Parents’ House: Unlinked: the stored tokens were deleted\. 2 webhook registrations could not be deleted: LOCK-1, user\./);
    const left = frame.locator('#unlink-left li');
    expect(await left.evaluateAll((items) => items.map((li) => [li.getAttribute('data-kind'), li.getAttribute('data-id'), li.textContent]))).toEqual([
      ['lock', 'LOCK-1', 'Lock Front Door: the account is not linked'],
      ['user', '', 'Your account (user): the account is not linked'],
    ]);
    expect(await frame.locator('#account-result').getAttribute('class')).toContain('text-danger');
    // Kept in Parents' ledger (a section of its tokens.json) for its next link.
    expect((JSON.parse(await accountStorage(Storage.under(storagePath), 'parents').readText(LEDGER_FILE) ?? '{}') as { entries?: unknown[] }).entries).toHaveLength(2);
  });

  it('Unlink of Cabin, the shared lock\'s owner: the first press says the main account takes it over first; the second unlinks Cabin alone', async () => {
    const unlink = frame.locator('#unlink-cabin');
    await unlink.press('Enter');
    await expect.poll(() => unlink.textContent()).toBe('Click again to unlink');
    expect(await result()).toBe('Cabin owns Front Door, which Main account also holds. Unlinking first registers Front Door for Main account, then deletes Cabin\'s registrations and tokens: no event is lost in between.');
    const mainTokens = await readFile(lockAccess('tokens.json'), 'utf8');
    await unlink.press(' ');
    await expect.poll(result, { timeout: 30_000 }).toMatch(/^Cabin: Unlinked/);
    await expect.poll(() => frame.locator('#account-row-cabin [data-role="badge"]').getAttribute('data-state'), { timeout: 10_000 }).toBe('unlinked');
    expect(JSON.parse(await readFile(lockAccess('accounts', 'cabin', 'tokens.json'), 'utf8'))).toMatchObject({ state: 'unlinked' });
    expect(await readFile(lockAccess('tokens.json'), 'utf8')).toBe(mainTokens);
    expect(await frame.locator('#account-row-main [data-role="badge"]').getAttribute('data-state')).toBe('linked');
  });

  it('Remove account of Cabin: a confirmation says what happens (the shared lock handed over first) with the keyboard on Cancel, Escape goes back; confirmed, Cabin is unlinked and its entry leaves the saved config', async () => {
    const remove = frame.locator('#remove-cabin');
    const dialog = frame.locator('#remove-account-dialog');
    expect(await frame.locator('#account-row-main [data-action="remove"]').count()).toBe(0);
    await remove.press('Enter');
    expect(await dialog.isVisible()).toBe(true);
    expect(await dialog.getAttribute('role')).toBe('alertdialog');
    expect(await frame.locator('#remove-account-title').textContent()).toBe('Remove Cabin (cabin)?');
    expect(await frame.locator('#remove-account-text').textContent()).toMatch(/handed over to the next account that holds them first.*Cabin owns Front Door, which Main account also holds/s);
    expect(await focused()).toBe('remove-account-cancel');
    // Read once the focused button's colour transition has ended, as a person sees it.
    await frame.evaluate(() => Promise.all(document.getAnimations().map((animation) => animation.finished)));
    expect(await axeViolations(frame)).toEqual([]);
    await page.keyboard.press('Escape');
    expect(await dialog.isHidden()).toBe(true);
    expect(await focused()).toBe('remove-cabin');
    await remove.press('Enter');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('remove-account-confirm');
    expect(await frame.locator('#remove-account-confirm').textContent()).toBe('Remove Cabin');
    const mainTokens = await readFile(lockAccess('tokens.json'), 'utf8');
    await page.keyboard.press('Enter');
    await expect.poll(result, { timeout: 30_000 }).toMatch(/^Cabin removed\. Click "Save settings"/);
    await expect.poll(() => frame.locator('#account-row-cabin').count()).toBe(0);
    expect(await focused()).toBe('add-account');
    expect(JSON.parse(await readFile(lockAccess('accounts', 'cabin', 'tokens.json'), 'utf8'))).toMatchObject({ state: 'unlinked' });
    expect(await readFile(lockAccess('tokens.json'), 'utf8')).toBe(mainTokens);
    await frame.locator('#save').click();
    await expect.poll(async () => (await savedPluginBlock(storagePath)).accounts, { timeout: 15_000 }).toMatchObject([{ id: 'parents' }]);
    expect(JSON.stringify(await savedPluginBlock(storagePath))).not.toMatch(/"account":"cabin"/);
  });
});
