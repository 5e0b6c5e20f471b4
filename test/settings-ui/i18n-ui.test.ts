// The settings page in the Homebridge UI's language, in a real browser hosted by the real Homebridge
// UI (one UI for every language): each wave-1 language fully translated and dated in its own form,
// drawn once and already in that language; a pseudo catalog in place of de.json that leaves no
// visible text outside its markers and no button too narrow; "auto" with a French browser; an
// unknown code that gives English without a request. One browser page serves the English case and
// then every case told its language by the UI's answer to the page (i18n-page.ts: only the
// settings frame is drawn afresh); "auto" has a page of its own, with a French browser.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { linkMessage } from '../../src/cloud/link-messages.js';
import type { DeviceEvent } from '../../src/model/events.js';
import { keypadSchedule } from '../../src/model/keypad-schedule.js';
import { EventLog } from '../../src/status/event-log.js';
import { emptyStatus, type Status } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';
import { TokenStore } from '../../src/storage/token-file.js';
import { fillTemplate } from '../../src/util/ui-message.js';
import { readCatalog, shippedLanguages } from './catalogs.js';
import { axeViolations, browserTestsUnavailable, launchBrowser, startHomebridgeUi, type UiHost, uiTestStorage } from './host.js';
import { openLanguagePage, type LanguagePage, type OpenedLanguage } from './i18n-page.js';
import { PSEUDO_CLOSE, PSEUDO_OPEN, pseudoCatalog } from './pseudo-locale.js';
import { leftToTranslate, plainSentences, type SeenText, visibleTexts } from './visible-texts.js';

const unavailable = browserTestsUnavailable();
if (unavailable) console.warn(`Skipping the settings page's language tests: ${unavailable}`);

/** When the last callback of the lock came: the full date the page shows in each language's form. */
const LAST_CALLBACK = Date.UTC(2026, 10, 28, 18, 45, 31);
const DATE_FORMS: Readonly<Record<string, RegExp>> = { de: /28\.11\.2026/, fr: /28\/11\/2026/, es: /28\/11\/2026/, it: /28\/11\/2026/, nl: /28-11-2026/ };
const NAMES = ['Front Door', 'LOCK-1', 'Porch', 'BELL-1', 'Jamie', 'user-jamie-0001', 'Cabin', 'cabin', 'main'];
const WAVE_1 = shippedLanguages().filter((code) => code !== 'en');
const en = readCatalog('en');
/** A keypad code for weekdays 08:00 to 18:00: its days and hours are worded by the page. */
const WEEKDAYS = keypadSchedule({ accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' });
/** The listener port the plugin refuses, and what the page says next to its field in each language. */
const PORT_PROBLEM = { field: 'webhook.listenPort', min: '1', max: '65535' };
const SCHEDULE_FORMS: Readonly<Record<string, RegExp>> = { de: /Mo–Fr 0?8:00–18:00/, fr: /lun\.–ven\. de 0?8:00 à 18:00/, nl: /ma–vr van 0?8:00 tot 18:00/ };

/** The status file of a running plugin (this test process stands in for it: its pid is alive). */
function status(now: number): Status {
  return {
    ...emptyStatus(now),
    pid: process.pid,
    startedAt: now - 60 * 60_000,
    link: { state: 'linked', message: linkMessage('link.linked') },
    devices: [
      { kind: 'lock', id: 'LOCK-1', name: 'Front Door', source: 'both', hidden: false },
      { kind: 'doorbell', id: 'BELL-1', name: 'Porch', source: 'service', hidden: false },
    ],
    registrations: [{ kind: 'lock', id: 'LOCK-1', name: 'Front Door', state: 'registered', lastSuccessAt: new Date(LAST_CALLBACK).toISOString() }],
    receiver: {
      listening: true, listenAddress: '127.0.0.1:8582', accepted: 12, duplicates: 1, rejected: { 'bad-signature': 2 },
      lastCallbacks: { 'lock:LOCK-1': { deviceKind: 'lock', deviceId: 'LOCK-1', at: LAST_CALLBACK, kind: 'lockState' } },
    },
    delivery: { state: 'arriving', since: now - 30 * 60_000, checkEveryMinutes: 360, lastHeardAt: LAST_CALLBACK, nextCheckAt: now + 60 * 60_000 },
    video: { state: 'ready', ffmpegPath: '/usr/bin/ffmpeg', ffmpegVersion: '6.1.1', h264Encoder: 'libx264', secureVideo: true, replayMinutes: 60 },
    accounts: { cabin: { name: 'Cabin', link: { state: 'linked', message: { code: 'accounts.link.linked', params: {}, text: 'Linked.' } } } },
  };
}

/**
 * Every view of the page: each <details> opened, the ngrok fields shown, the Add account form open,
 * Cabin's row chosen for linking, and its unlink button armed (which says what happens to the lock
 * it shares).
 */
async function openEveryView(frame: Frame): Promise<void> {
  await frame.evaluate(() => { Array.from(document.querySelectorAll('details')).forEach((details) => { details.open = true; }); });
  await frame.click('#reach-ngrok');
  await frame.waitForSelector('#ngrokAuthtoken', { state: 'visible' });
  await frame.click('#add-account');
  await frame.click('#account-row-cabin button[data-action="link"]');
  await frame.waitForSelector('#devices tr[data-group="cabin"]');
  await frame.click('#unlink-cabin');
  await frame.waitForSelector('#account-result:not(:empty)');
  // A value the plugin would refuse: the config check's problem shows next to its field.
  await frame.fill('#listenPort', '70000');
  await frame.dispatchEvent('#listenPort', 'change');
  await frame.waitForSelector('.la-problem[data-problem-for="webhook.listenPort"]');
}

/** Texts a user sees that are still to translate after the set-aside ones (see visible-texts.ts). */
async function textsToTranslate(opened: OpenedLanguage): Promise<SeenText[]> {
  const sentences = [...plainSentences(await opened.answer('/status')), ...plainSentences(await opened.answer('/matter')), ...plainSentences(await opened.answer('/events'))];
  return (await visibleTexts(opened.frame)).filter((seen) => leftToTranslate(seen.text, [...NAMES, ...sentences]) !== '');
}

describe.skipIf(unavailable !== undefined)('the settings page in the Homebridge UI\'s language', { timeout: 120_000 }, () => {
  let storagePath: string;
  let ui: UiHost | undefined;
  let browser: Browser | undefined;
  /** The page of every case but "auto": the UI in English, the page told each case's language. */
  let shared: LanguagePage | undefined;
  /** The English page's texts, to count how many of another language's equal one of them. */
  let englishTexts: Set<string>;

  beforeAll(async () => {
    // A second account, Cabin, that owns the lock both accounts hold: its row, its devices' group
    // and its unlink's words are walked too.
    const made = await uiTestStorage('i18n-ui', '0E:18:4E:55:49:01', { doorbells: [{ id: 'BELL-1' }], accounts: [{ id: 'cabin', name: 'Cabin', locks: [{ id: 'LOCK-1' }] }] });
    storagePath = made.storagePath;
    const now = Date.now();
    await mkdir(join(storagePath, 'lock-access'), { recursive: true });
    await Storage.under(storagePath).write('status.json', status(now));
    await Storage.under(storagePath).write('device-accounts.json', { version: 1, devices: { 'lock:LOCK-1': { owner: 'cabin', holders: ['main', 'cabin'] } } });
    for (const folder of [[], ['accounts', 'cabin']]) {
      const tokens = new TokenStore(new Storage(join(storagePath, 'lock-access', ...folder)));
      await mkdir(join(storagePath, 'lock-access', ...folder), { recursive: true });
      await tokens.write({ version: 1, rotations: 1, state: 'linked', refreshToken: `rt-${folder.length}`, linkedAt: now, knownSeedHashes: [] }, undefined);
    }
    const log = await EventLog.open(Storage.under(storagePath), { debounceMs: 1 });
    const events: [number, 'lock' | 'doorbell', DeviceEvent][] = [
      [LAST_CALLBACK - 60_000, 'lock', { lockId: 'LOCK-1', at: LAST_CALLBACK - 60_000, kind: 'lockState', state: 'unlocked', source: 'operation', device: 'keypad', actor: { kind: 'person', userId: 'user-jamie-0001', firstName: 'Jamie' } }],
      [LAST_CALLBACK, 'doorbell', { doorbellId: 'BELL-1', at: LAST_CALLBACK, kind: 'doorbellPress', dvrId: 'dvr-1' }],
      [LAST_CALLBACK - 120_000, 'lock', { lockId: 'LOCK-1', at: LAST_CALLBACK - 120_000, kind: 'pinManaged', state: 'load', pinUser: { kind: 'person', userId: 'user-jamie-0001', firstName: 'Jamie' }, actor: { kind: 'unknown' }, masterPin: false, ...(WEEKDAYS ? { schedule: WEEKDAYS } : {}) }],
    ];
    for (const [at, deviceKind, event] of events) log.record({ deviceKind, deviceId: deviceKind === 'lock' ? 'LOCK-1' : 'BELL-1', deviceName: deviceKind === 'lock' ? 'Front Door' : 'Porch', event, at });
    await log.flush();
    ui = await startHomebridgeUi(storagePath, made.pluginsDir);
    browser = await launchBrowser();
    shared = await openLanguagePage(browser, ui, { uiLang: 'en' });
  }, 180_000);

  afterAll(async () => {
    await shared?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await ui?.stop();
  }, 60_000);

  const show = (options: Parameters<LanguagePage['show']>[0] = {}) => {
    if (!shared) throw new Error('not started');
    return shared.show(options);
  };

  it('English: the page as it was, and its texts for the other languages to differ from', async () => {
    const opened = await show();
    expect(await opened.frame.evaluate(() => document.documentElement.lang)).toBe('en');
    expect(await opened.frame.textContent('#account-card .card-header')).toBe(en['account.title']);
    await openEveryView(opened.frame);
    englishTexts = new Set((await visibleTexts(opened.frame)).map((seen) => seen.text));
    expect(englishTexts.size).toBeGreaterThan(100);
    expect(opened.catalogRequests).toEqual(['en.json']);
  });

  for (const code of WAVE_1) {
    it(`${code}: lang="${code}", drawn once in ${code}, a full date in its form, no raw key, no console error, at most 10% English, axe passes`, async () => {
      const catalog = readCatalog(code);
      const opened = await show({ pageAsked: code });
      const frame = opened.frame;
      expect(await frame.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([code, 'ltr']);
      // The first frame with the page visible already had the account card's heading in this language.
      expect(await opened.firstPaint()).toBe(catalog['account.title']);
      const shown = await frame.textContent('#last-callbacks td[data-at]') ?? '';
      expect(shown).toMatch(DATE_FORMS[code] ?? /2026/);
      expect(shown).toMatch(/18:45:31/);
      await openEveryView(frame);
      // The config check's problem in this language, its numbers as written; a keypad code's days and hours through Intl.
      expect(await frame.textContent('.la-problem[data-problem-for="webhook.listenPort"]')).toBe(fillTemplate(catalog['config.field.range'] as string, PORT_PROBLEM));
      const keypad = await frame.textContent('#keypad-codes tbody') ?? '';
      expect(keypad).toMatch(SCHEDULE_FORMS[code] ?? /18:00/);
      const texts = await textsToTranslate(opened);
      const pageText = await frame.evaluate(() => document.getElementById('la-root')?.innerText ?? '');
      expect(pageText).not.toMatch(/\b(AM|PM)\b/);
      expect(texts.filter((seen) => seen.text in en)).toEqual([]);
      const english = texts.filter((seen) => englishTexts.has(seen.text));
      expect(english.length, english.map((seen) => seen.text).join(' | ')).toBeLessThanOrEqual(texts.length * 0.1);
      expect(opened.catalogRequests.sort()).toEqual([`${code}.json`, 'en.json'].sort());
      expect(await axeViolations(frame)).toEqual([]);
      expect(opened.consoleErrors).toEqual([]);
    });
  }

  it('a pseudo catalog in place of de.json: no visible text outside its markers, no button overflows', async () => {
    const pseudo = pseudoCatalog(en, ['one', 'other']);
    const opened = await show({ pageAsked: 'de', catalogs: { 'de.json': pseudo } });
    await openEveryView(opened.frame);
    const texts = await textsToTranslate(opened);
    const unmarked = texts.filter((seen) => {
      let rest = seen.text;
      // Markers may nest (a translated param inside a translated sentence): take the innermost first.
      for (let before = ''; before !== rest;) {
        before = rest;
        rest = rest.replace(new RegExp(`${PSEUDO_OPEN}[^${PSEUDO_OPEN}${PSEUDO_CLOSE}]*${PSEUDO_CLOSE}`, 'g'), ' ');
      }
      return leftToTranslate(rest, NAMES) !== '';
    });
    expect(unmarked).toEqual([]);
    const overflowing = await opened.frame.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>('#la-root button, #la-root input[type="button"]'))
      .filter((b) => b.checkVisibility() && b.scrollWidth > b.clientWidth + 1).map((b) => `#${b.id} ${b.textContent}`));
    expect(overflowing).toEqual([]);
  });

  it('"auto" with a French browser: the Homebridge UI resolves it to fr, and the page is French', async () => {
    if (!browser || !ui) throw new Error('not started');
    const french = await openLanguagePage(browser, ui, { uiLang: null, browserLocale: 'fr-FR' });
    try {
      const opened = await french.show();
      expect(await opened.frame.evaluate(() => document.documentElement.lang)).toBe('fr');
      expect(await opened.frame.textContent('#account-card .card-header')).toBe(readCatalog('fr')['account.title']);
    } finally {
      await french.close();
    }
  });

  it('an unknown code (xx): English, with no request for any catalog but en.json and no console error', async () => {
    const opened = await show({ pageAsked: 'xx' });
    expect(await opened.frame.evaluate(() => document.documentElement.lang)).toBe('en');
    expect(await opened.frame.textContent('#account-card .card-header')).toBe(en['account.title']);
    expect(opened.catalogRequests).toEqual(['en.json']);
    expect(opened.consoleErrors).toEqual([]);
  });
});
