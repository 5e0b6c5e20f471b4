// The English templates of every message code the plugin and its settings server send: the objects
// each area of src/ hands to messageCatalog, read from the sources so a new area counts by itself.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { REPO_ROOT } from '../harness/homebridge.js';
import type { MessageTemplate } from '../../src/util/ui-message.js';

export async function serverTemplates(): Promise<Map<string, MessageTemplate>> {
  const templates = new Map<string, MessageTemplate>();
  const src = join(REPO_ROOT, 'src');
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(src, file), 'utf8');
    const names = [...source.matchAll(/messageCatalog\(([A-Z][A-Z0-9_]*)\)/g)].map((m) => m[1] ?? '');
    if (names.length === 0) continue;
    const module = (await import(pathToFileURL(join(src, file)).href)) as Record<string, Record<string, MessageTemplate> | undefined>;
    for (const name of names) {
      const area = module[name];
      if (area === undefined) throw new Error(`${file} hands ${name} to messageCatalog but does not export it`);
      for (const [code, template] of Object.entries(area)) {
        if (templates.has(code)) throw new Error(`${code} is defined twice (again in ${file})`);
        templates.set(code, template);
      }
    }
  }
  return templates;
}
