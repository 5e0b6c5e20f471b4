// Opens the settings page in a browser context of its own with a chosen Homebridge UI language
// (the UI's settings answer names it, as the UI's own setting would) or browser language, and
// records what the language tests look at: the catalogs the page asked for, its console errors and
// the first frame in which the page was visible.
import { basename } from 'node:path';

import type { Browser, Frame, Page } from 'playwright-core';

import type { Catalog } from './catalogs.js';
import type { UiHost } from './host.js';

/** Where the Homebridge UI serves this plugin's page and its files. */
const PAGE_PATH = '/plugins/settings-ui/homebridge-lock-access/';

export interface LanguageOptions {
  /** The UI's language setting: a code, or null for "auto" (the browser's language). */
  uiLang: string | null;
  /** The browser's language (default en-US). */
  browserLocale?: string;
  /** Catalog files served in place of the page's own, by file name. */
  catalogs?: Readonly<Record<string, Catalog>>;
  /** What homebridge.i18nCurrentLang() answers the page instead of the UI's language. */
  pageAsked?: string;
}

export interface OpenedLanguage {
  page: Page;
  frame: Frame;
  /** File names of the catalogs the page requested, in order. */
  catalogRequests: string[];
  /** Console errors and uncaught errors of the page's frame. */
  consoleErrors: string[];
  /** The account card's heading in the first animation frame in which the page was visible. */
  firstPaint(): Promise<string | undefined>;
  /** What the settings server answers the page for `path`. */
  answer(path: string): Promise<unknown>;
  close(): Promise<void>;
}

/** In the settings frame, before any of its scripts: note the first frame in which the page shows. */
function recordFirstPaint(): void {
  if (window.top === window) return;
  const look = () => {
    const root = document.getElementById('la-root');
    if (root && !root.hidden && root.getClientRects().length > 0) {
      (window as { laFirstPaint?: string }).laFirstPaint = document.querySelector('#account-card .card-header')?.textContent ?? '';
      return;
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

/** In the settings frame: i18nCurrentLang() answers `asked` (what a UI with another language would say). */
function answerLanguage(asked: string): void {
  if (window.top === window) return;
  let helper: { i18nCurrentLang: () => Promise<string> } | undefined;
  Object.defineProperty(window, 'homebridge', {
    configurable: true,
    get: () => helper,
    set: (value: { i18nCurrentLang: () => Promise<string> }) => {
      value.i18nCurrentLang = () => Promise.resolve(asked);
      helper = value;
    },
  });
}

export async function openInLanguage(browser: Browser, ui: UiHost, options: LanguageOptions): Promise<OpenedLanguage> {
  const context = await browser.newContext({ locale: options.browserLocale ?? 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 1400 } });
  try {
    const catalogRequests: string[] = [];
    const consoleErrors: string[] = [];
    await context.route('**/api/auth/settings', async (route) => {
      const response = await route.fetch();
      const settings = (await response.json()) as { env: { lang: string | null } };
      settings.env.lang = options.uiLang;
      await route.fulfill({ response, json: settings });
    });
    const replaced = options.catalogs ?? {};
    await context.route(`**${PAGE_PATH}i18n/*.json`, async (route) => {
      const catalog = replaced[basename(new URL(route.request().url()).pathname)];
      await (catalog ? route.fulfill({ json: catalog }) : route.continue());
    });
    context.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.includes(`${PAGE_PATH}i18n/`)) catalogRequests.push(basename(path));
    });
    await context.addInitScript(recordFirstPaint);
    if (options.pageAsked !== undefined) await context.addInitScript(answerLanguage, options.pageAsked);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.location().url.includes(PAGE_PATH)) consoleErrors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => {
      if ((error.stack ?? '').includes(PAGE_PATH)) consoleErrors.push(error.stack ?? error.message);
    });

    await page.goto(`${ui.url}/plugins`);
    const card = page.locator('app-plugin-card', { hasText: 'homebridge-lock-access' });
    await card.locator('[aria-label="Plugin Actions Dropdown"]').click();
    // "Plugin Config" by its icon: its words are in the UI's language.
    await card.locator('button.dropdown-item:has(.fa-sliders)').click();
    const handle = await page.waitForSelector(`iframe[src*="${PAGE_PATH}"]`, { timeout: 30_000 });
    const frame = await handle.contentFrame();
    if (!frame) throw new Error('the settings iframe has no frame');
    await frame.waitForSelector('#link-badge[data-state]', { timeout: 60_000 });
    return {
      page,
      frame,
      catalogRequests,
      consoleErrors,
      firstPaint: () => frame.evaluate(() => (window as { laFirstPaint?: string }).laFirstPaint),
      answer: (path) => frame.evaluate((p) => window.homebridge.request(p), path),
      close: () => context.close(),
    };
  } catch (error) {
    await context.close();
    throw error;
  }
}
