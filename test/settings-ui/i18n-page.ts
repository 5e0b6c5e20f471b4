// The settings page in a chosen Homebridge UI language (the UI's settings answer names it, as the
// UI's own setting would) or browser language, in one browser page that serves several cases: the
// Homebridge UI is loaded once, and each later case reloads only the settings frame, with the
// language the page is told (what homebridge.i18nCurrentLang() answers, as a UI in that language
// would) and the catalogs it is served chosen per case. It records what the language tests look at:
// the catalogs the page asked for, its console errors and the first frame in which it was visible.
import { basename } from 'node:path';

import type { Browser, Frame, Page } from 'playwright-core';

import type { Catalog } from './catalogs.js';
import { UI_CONTEXT, type UiHost } from './host.js';

/** Where the Homebridge UI serves this plugin's page and its files. */
const PAGE_PATH = '/plugins/settings-ui/homebridge-lock-access/';

export interface PageOptions {
  /** The UI's language setting: a code, or null for "auto" (the browser's language). */
  uiLang: string | null;
  /** The browser's language (default en-US). */
  browserLocale?: string;
}

export interface CaseOptions {
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
}

export interface LanguagePage {
  /** The settings page drawn afresh for one case: the first loads the Homebridge UI, later ones only the settings frame. */
  show(options?: CaseOptions): Promise<OpenedLanguage>;
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

/** In the settings frame: i18nCurrentLang() answers the case's language when it names one (what a UI in that language would say). */
function answerAskedLanguage(): void {
  if (window.top === window) return;
  const asked = (window as unknown as { laAskedLanguage: () => Promise<string | null> }).laAskedLanguage;
  let helper: { i18nCurrentLang: () => Promise<string> } | undefined;
  Object.defineProperty(window, 'homebridge', {
    configurable: true,
    get: () => helper,
    set: (value: { i18nCurrentLang: () => Promise<string> }) => {
      const own = value.i18nCurrentLang.bind(value);
      value.i18nCurrentLang = async () => (await asked()) ?? own();
      helper = value;
    },
  });
}

export async function openLanguagePage(browser: Browser, ui: UiHost, options: PageOptions): Promise<LanguagePage> {
  const context = await browser.newContext({ ...UI_CONTEXT, locale: options.browserLocale ?? 'en-US', timezoneId: 'UTC' });
  try {
    // What the current case serves, asks and records.
    let current: CaseOptions = {};
    let catalogRequests: string[] = [];
    let consoleErrors: string[] = [];
    await context.route('**/api/auth/settings', async (route) => {
      const response = await route.fetch();
      const settings = (await response.json()) as { env: { lang: string | null } };
      settings.env.lang = options.uiLang;
      await route.fulfill({ response, json: settings });
    });
    await context.route(`**${PAGE_PATH}i18n/*.json`, async (route) => {
      const catalog = current.catalogs?.[basename(new URL(route.request().url()).pathname)];
      await (catalog ? route.fulfill({ json: catalog }) : route.continue());
    });
    context.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.includes(`${PAGE_PATH}i18n/`)) catalogRequests.push(basename(path));
    });
    await context.exposeFunction('laAskedLanguage', () => current.pageAsked ?? null);
    await context.addInitScript(recordFirstPaint);
    await context.addInitScript(answerAskedLanguage);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.location().url.includes(PAGE_PATH)) consoleErrors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => {
      if ((error.stack ?? '').includes(PAGE_PATH)) consoleErrors.push(error.stack ?? error.message);
    });

    let frame: Frame | undefined;
    const show = async (caseOptions: CaseOptions = {}): Promise<OpenedLanguage> => {
      current = caseOptions;
      catalogRequests = [];
      consoleErrors = [];
      if (frame) {
        await frame.goto(frame.url());
      } else {
        await page.goto(`${ui.url}/plugins`);
        const card = page.locator('app-plugin-card', { hasText: 'homebridge-lock-access' });
        await card.locator('[aria-label="Plugin Actions Dropdown"]').click();
        // "Plugin Config" by its icon: its words are in the UI's language.
        await card.locator('button.dropdown-item:has(.fa-sliders)').click();
        const handle = await page.waitForSelector(`iframe[src*="${PAGE_PATH}"]`, { timeout: 30_000 });
        frame = (await handle.contentFrame()) ?? undefined;
        if (!frame) throw new Error('the settings iframe has no frame');
      }
      const shown = frame;
      await shown.waitForSelector('#link-badge[data-state]', { timeout: 60_000 });
      return {
        page,
        frame: shown,
        catalogRequests,
        consoleErrors,
        firstPaint: () => shown.evaluate(() => (window as { laFirstPaint?: string }).laFirstPaint),
        answer: (path) => shown.evaluate((p) => window.homebridge.request(p), path),
      };
    };
    return { show, close: () => context.close() };
  } catch (error) {
    await context.close();
    throw error;
  }
}
