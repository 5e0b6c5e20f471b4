// @ts-check
// The page's words in the Homebridge UI's language. Catalogs are flat JSON files of key to text
// (i18n/<code>.json beside index.html, fetched at start: English and the chosen language only);
// t(key, params) fills {name} placeholders and picks a plural form by the `count` param. A key
// missing from the chosen catalog takes English's text and English plural rules, for that key only.

/** The catalogs this page ships, named by the Homebridge UI's own language codes. */
export const LANGUAGES = /** @type {const} */ (['en', 'de', 'fr', 'es', 'it', 'nl']);
/** Right-to-left languages among the Homebridge UI's (none shipped yet). */
const RIGHT_TO_LEFT = new Set(['he']);
/** An older Homebridge UI ignores requests it does not know, so its answer is not awaited forever. */
const ASK_LANGUAGE_MS = 2000;

/** @typedef {string | Partial<Record<Intl.LDMLPluralRule, string>>} CatalogValue */
/** @typedef {Record<string, CatalogValue>} Catalog */
/** @typedef {Record<string, string | number | undefined>} Params */

/** @type {Catalog} */
let english = {};
/** @type {Catalog} */
let chosen = {};
/** @type {string} */
let code = 'en';

/** The chosen language's code, as the Homebridge UI names it ('en' after a fallback). */
export function language() {
  return code;
}

/** The locale for Intl: the chosen code, except Norwegian, which Intl knows as Bokmål. */
export function intlLocale() {
  return code === 'no' ? 'nb' : code;
}

/**
 * The shipped language a code names: exactly, then ignoring case, then by its base language
 * (de-AT is de). Undefined for anything else.
 * @param {unknown} wanted
 * @returns {string | undefined}
 */
export function matchLanguage(wanted) {
  if (typeof wanted !== 'string' || wanted === '') return undefined;
  /** @type {readonly string[]} */
  const shipped = LANGUAGES;
  if (shipped.includes(wanted)) return wanted;
  const lower = wanted.toLowerCase();
  const base = lower.split(/[-_]/)[0];
  return shipped.find((l) => l.toLowerCase() === lower) ?? shipped.find((l) => l.toLowerCase() === base);
}

/**
 * The language the Homebridge UI shows ("auto" already resolved by it); on an older UI that cannot
 * say, the one its settings name (null there means auto); then the browser's.
 * @param {import('@homebridge/plugin-ui-utils/ui.interface').IHomebridgePluginUi} hb
 */
async function wantedLanguage(hb) {
  /** @type {unknown} */
  let fromUi;
  if (typeof hb.i18nCurrentLang === 'function') {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    fromUi = await Promise.race([
      hb.i18nCurrentLang().catch(() => undefined),
      new Promise((resolve) => { timer = setTimeout(resolve, ASK_LANGUAGE_MS); }),
    ]);
    clearTimeout(timer);
  }
  if (typeof fromUi === 'string' && fromUi !== '') return fromUi;
  const env = /** @type {{ env?: { lang?: unknown } } | undefined} */ (hb.serverEnv);
  if (typeof env?.env?.lang === 'string' && env.env.lang !== '') return env.env.lang;
  return navigator.language;
}

/**
 * A catalog from i18n/ next to index.html.
 * @param {string} name
 * @returns {Promise<Catalog>}
 */
async function fetchCatalog(name) {
  const response = await fetch(new URL(`../i18n/${name}.json`, import.meta.url));
  if (!response.ok) throw new Error(`the ${name} catalog could not be loaded (HTTP ${response.status})`);
  return /** @type {Catalog} */ (await response.json());
}

/**
 * Chooses the page's language and loads its catalogs (English always, for keys the other lacks),
 * then names the language on <html> for screen readers and the text direction.
 * @param {import('@homebridge/plugin-ui-utils/ui.interface').IHomebridgePluginUi} hb
 */
export async function startLanguage(hb) {
  const wanted = matchLanguage(await wantedLanguage(hb)) ?? 'en';
  const [en, other] = await Promise.all([
    fetchCatalog('en'),
    wanted === 'en' ? Promise.resolve(undefined) : fetchCatalog(wanted).catch(() => undefined),
  ]);
  english = en;
  chosen = other ?? en;
  code = other ? wanted : 'en';
  document.documentElement.lang = code;
  document.documentElement.dir = RIGHT_TO_LEFT.has(code) ? 'rtl' : 'ltr';
}

/**
 * A param as shown: numbers in the page's locale, everything else as given.
 * @param {string | number} value
 */
function shown(value) {
  return typeof value === 'number' ? new Intl.NumberFormat(intlLocale()).format(value) : value;
}

/**
 * The text of `key` in the page's language with its placeholders filled. The key itself when even
 * English lacks it (a bug the catalog test catches). A placeholder without a param stays as written.
 * @param {string} key
 * @param {Params} [params]
 * @returns {string}
 */
export function t(key, params = {}) {
  let value = chosen[key];
  let rules = intlLocale();
  if (value === undefined) {
    value = english[key];
    rules = 'en';
  }
  if (value === undefined) return key;
  if (typeof value === 'object') {
    const form = new Intl.PluralRules(rules).select(Number(params.count ?? 0));
    value = value[form] ?? value.other ?? key;
  }
  return value.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, /** @type {string} */ name) => {
    const param = params[name];
    return param === undefined ? whole : String(shown(param));
  });
}

/**
 * The text of `key` as nodes, with elements in place of some placeholders (a link inside a
 * sentence): the sentence stays one key, so a translation may put the link where its grammar wants.
 * @param {string} key
 * @param {Params} params
 * @param {Record<string, Node>} nodes
 * @returns {(string | Node)[]}
 */
export function tNodes(key, params, nodes) {
  const names = Object.keys(nodes);
  if (names.length === 0) return [t(key, params)];
  const pattern = new RegExp(`\\{(${names.join('|')})\\}`);
  return t(key, params).split(pattern).map((part, index) => (index % 2 === 1 ? nodes[part] ?? part : part)).filter((part) => part !== '');
}
