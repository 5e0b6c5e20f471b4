// A pseudo catalog for the browser tests: every English value accented, wrapped in ⟦ ⟧ and made
// about 35% longer, its {placeholders} kept. Served in place of a real catalog, it shows at a glance
// any text the page did not take from a catalog, and any button too narrow for a longer language.
import type { Catalog, CatalogValue } from './catalogs.js';

const PLAIN = Array.from('aeiouycnsgzlrtdAEIOUYCNSGZLRTD');
const MARKED = Array.from('àéîöûýçñšĝžļŕţďÀÉÎÖÛÝÇÑŠĜŽĻŔŢĎ');
const ACCENTED: Readonly<Record<string, string>> = Object.fromEntries(PLAIN.map((c, i) => [c, MARKED[i] ?? c]));
const PLACEHOLDER = /(\{[A-Za-z_][A-Za-z0-9_]*\})/;

export const PSEUDO_OPEN = '⟦';
export const PSEUDO_CLOSE = '⟧';

/** One text: accented outside its placeholders, padded by a third and a bit, wrapped in markers. */
export function pseudoText(text: string): string {
  const accented = text.split(PLACEHOLDER).map((part, i) => (i % 2 === 1 ? part : Array.from(part, (c) => ACCENTED[c] ?? c).join(''))).join('');
  const padding = Math.ceil(text.length * 0.35);
  // Padding in words of five, so a longer text can still wrap as a real translation would.
  const filler = Array.from({ length: padding }, (_, i) => (i % 6 === 5 ? ' ' : '·')).join('');
  return `${PSEUDO_OPEN}${accented} ${filler}${PSEUDO_CLOSE}`;
}

function pseudoValue(value: CatalogValue): CatalogValue {
  return typeof value === 'string' ? pseudoText(value) : Object.fromEntries(Object.entries(value).map(([form, text]) => [form, pseudoText(text)]));
}

/** The pseudo catalog of `english`; plural objects keep their forms (the page picks by its language's rules). */
export function pseudoCatalog(english: Catalog, categories: readonly string[]): Catalog {
  return Object.fromEntries(Object.entries(english).map(([key, value]) => {
    if (typeof value === 'string') return [key, pseudoValue(value)];
    const other = value.other ?? Object.values(value)[0] ?? key;
    return [key, Object.fromEntries(categories.map((form) => [form, pseudoText(value[form] ?? other)]))];
  }));
}
