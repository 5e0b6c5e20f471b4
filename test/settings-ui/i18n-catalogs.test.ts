// The settings page's catalogs (homebridge-ui/public/i18n/<code>.json): en.json holds every key the
// page and its scripts use, each shipped language has exactly en.json's keys with the same
// placeholders and its own plural categories, and no value is empty.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../harness/homebridge.js';
import { CATALOG_DIR, type Catalog, placeholdersOf, readCatalog, shippedLanguages } from './catalogs.js';

const PAGE = join(REPO_ROOT, 'homebridge-ui', 'public');
const KEY = /^[a-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/;
const en = readCatalog('en');

/** Keys index.html names: data-i18n (text) and data-i18n-<attribute>. */
function htmlKeys(): string[] {
  const html = readFileSync(join(PAGE, 'index.html'), 'utf8');
  return [...html.matchAll(/data-i18n(?:-[a-z-]+)?="([^"]*)"/g)].map((m) => m[1] ?? '');
}

/**
 * The first argument of every t( and tNodes( call in the page's scripts: its string literals (both
 * branches of a ternary) as keys, and a template literal's fixed start as a prefix.
 */
function scriptKeys(): { keys: string[]; prefixes: string[] } {
  const keys: string[] = [];
  const prefixes: string[] = [];
  for (const file of readdirSync(join(PAGE, 'js')).filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(join(PAGE, 'js', file), 'utf8');
    for (const call of source.matchAll(/\b(?:t|tNodes)\(/g)) {
      let depth = 0;
      let end = call.index + call[0].length;
      // The first argument ends at a comma or the closing parenthesis at depth 0.
      for (; end < source.length; end += 1) {
        const c = source[end];
        if (c === '(' || c === '[' || c === '{') depth += 1;
        else if (c === ')' || c === ']' || c === '}') {
          if (depth === 0) break;
          depth -= 1;
        } else if (c === ',' && depth === 0) break;
      }
      const argument = source.slice(call.index + call[0].length, end);
      // A key is the argument itself or a branch of a ternary, never the operand of a comparison.
      for (const literal of argument.matchAll(/(?:^|[?:])\s*'([^']+)'/g)) keys.push(literal[1] ?? '');
      for (const template of argument.matchAll(/`([a-z][A-Za-z0-9_.-]*\.)\$\{/g)) prefixes.push(template[1] ?? '');
    }
  }
  return { keys, prefixes };
}

/**
 * The codes the plugin and its settings server send (the keys of each area's templates, the
 * objects src/ hands to messageCatalog).
 */
async function serverCodes(): Promise<string[]> {
  const codes: string[] = [];
  const src = join(REPO_ROOT, 'src');
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(src, file), 'utf8');
    const names = [...source.matchAll(/messageCatalog\(([A-Z][A-Z0-9_]*)\)/g)].map((m) => m[1] ?? '');
    if (names.length === 0) continue;
    const module = (await import(pathToFileURL(join(src, file)).href)) as Record<string, unknown>;
    for (const name of names) codes.push(...Object.keys(module[name] as Record<string, unknown>));
  }
  return codes;
}

/** @returns the plural categories of a language in this Node (Intl's locale: no is nb). */
function categoriesOf(code: string): string[] {
  return [...new Intl.PluralRules(code === 'no' ? 'nb' : code).resolvedOptions().pluralCategories].sort();
}

describe('catalogs: every key the page uses is in en.json', () => {
  it('each data-i18n key of index.html', () => {
    const keys = htmlKeys();
    expect(keys.length).toBeGreaterThan(100);
    expect(keys.filter((k) => !(k in en))).toEqual([]);
  });

  it('each key of a t() or tNodes() call in the page\'s scripts; a key built from a state has keys under its prefix', () => {
    const { keys, prefixes } = scriptKeys();
    expect(keys.length).toBeGreaterThan(100);
    expect(keys.filter((k) => !(k in en))).toEqual([]);
    expect(prefixes.filter((p) => !Object.keys(en).some((k) => k.startsWith(p) && k.length > p.length))).toEqual([]);
  });

  it('each code the plugin and its settings server send', async () => {
    expect((await serverCodes()).filter((k) => !(k in en))).toEqual([]);
  });

  it('no key is left that neither the page nor the plugin uses', async () => {
    const { keys, prefixes } = scriptKeys();
    const used = new Set([...htmlKeys(), ...keys, ...await serverCodes()]);
    expect(Object.keys(en).filter((k) => !used.has(k) && !prefixes.some((p) => k.startsWith(p)))).toEqual([]);
  });
});

describe('catalogs: the form of every file', () => {
  it.each(shippedLanguages())('%s.json: dotted keys, non-empty values, plural objects with exactly its plural categories', (code) => {
    const catalog = readCatalog(code);
    const categories = categoriesOf(code);
    for (const [key, value] of Object.entries(catalog)) {
      expect(key, key).toMatch(KEY);
      if (typeof value === 'string') expect(value.trim(), key).not.toBe('');
      else {
        expect(Object.keys(value).sort(), key).toEqual(categories);
        for (const form of Object.values(value)) expect(form.trim(), key).not.toBe('');
      }
    }
  });

  it('the languages the page ships are the catalogs in i18n/, each named by a Homebridge UI code', () => {
    const page = readFileSync(join(PAGE, 'js', 'i18n.js'), 'utf8');
    const listed = /LANGUAGES = \/\*\* @type \{const\} \*\/ \(\[([^\]]*)\]\)/.exec(page)?.[1]?.match(/'([^']+)'/g)?.map((s) => s.slice(1, -1));
    expect(listed?.sort()).toEqual(shippedLanguages().sort());
    const ui = ['en', 'de', 'fi', 'fr', 'pl', 'cs', 'ru', 'zh-CN', 'zh-TW', 'hu', 'ja', 'es', 'nl', 'tr', 'it', 'bg', 'sv', 'no', 'sl', 'pt-BR', 'pt', 'id', 'ca', 'ko', 'mk', 'th', 'uk', 'he'];
    for (const code of shippedLanguages()) expect(ui).toContain(code);
    expect(readdirSync(CATALOG_DIR).every((f) => f.endsWith('.json'))).toBe(true);
  });
});

for (const code of shippedLanguages().filter((c) => c !== 'en')) {
  describe(`catalogs: ${code}.json has exactly en.json's keys and placeholders`, () => {
    const catalog: Catalog = readCatalog(code);

    it('no key missing, none extra; plural exactly where en.json is plural', () => {
      expect(Object.keys(en).filter((k) => !(k in catalog)), 'missing').toEqual([]);
      expect(Object.keys(catalog).filter((k) => !(k in en)), 'extra').toEqual([]);
      expect(Object.keys(en).filter((key) => typeof catalog[key] !== typeof en[key])).toEqual([]);
    });

    it('each value uses exactly the placeholder names of en.json\'s value', () => {
      const differ = Object.keys(en).filter((key) => catalog[key] !== undefined && placeholdersOf(catalog[key]).join() !== placeholdersOf(en[key]).join());
      expect(differ.map((key) => `${key}: ${placeholdersOf(en[key]).join()} / ${placeholdersOf(catalog[key]).join()}`)).toEqual([]);
    });
  });
}
