// Reading the settings page's catalogs (homebridge-ui/public/i18n/<code>.json) in tests.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../harness/homebridge.js';

export type CatalogValue = string | Record<string, string>;
export type Catalog = Record<string, CatalogValue>;

export const CATALOG_DIR = join(REPO_ROOT, 'homebridge-ui', 'public', 'i18n');

/** The codes of the catalogs in i18n/ (en first). */
export function shippedLanguages(): string[] {
  const codes = readdirSync(CATALOG_DIR).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length));
  return ['en', ...codes.filter((c) => c !== 'en').sort()];
}

export function readCatalog(code: string): Catalog {
  return JSON.parse(readFileSync(join(CATALOG_DIR, `${code}.json`), 'utf8')) as Catalog;
}

/** The placeholder names of a value (across all forms of a plural object), sorted, each once. */
export function placeholdersOf(value: CatalogValue | undefined): string[] {
  const texts = value === undefined ? [] : typeof value === 'string' ? [value] : Object.values(value);
  return [...new Set(texts.flatMap((text) => [...text.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] ?? '')))].sort();
}
