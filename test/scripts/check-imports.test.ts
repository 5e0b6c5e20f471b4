import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MAX_LINES, checkImports, countLines, importsOf, type Rule } from '../../scripts/check-imports.js';
import { tsChildArgs } from '../harness/ts-child.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(HERE, 'fixtures', 'layout');
const REPO = join(HERE, '..', '..');

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'check-imports-'));
  await cp(FIXTURE, root, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Adds or replaces a file of the copied fixture tree. */
async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

const found = (rule?: Rule) => checkImports(root).violations.filter((v) => rule === undefined || v.rule === rule).map((v) => v.message);

describe('source layout: the import checker reads every import form', () => {
  it('static, type-only, re-exports, dynamic import(), import types and import = require', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "import './side-effect.js';",
      "export * from './g.js';",
      "export type { H } from './h.js';",
      "const i = await import('./i.js');",
      "let j: import('./j.js').J;",
      "import k = require('./k.js');",
      "// import nothing from './comment.js';",
      "const text = \"import x from './string.js'\";",
    ].join('\n');
    expect(importsOf('x.ts', text)).toEqual([
      { specifier: './a.js', typeOnly: false },
      { specifier: './b.js', typeOnly: true },
      { specifier: './c.js', typeOnly: true },
      { specifier: './e.js', typeOnly: false },
      { specifier: './side-effect.js', typeOnly: false },
      { specifier: './g.js', typeOnly: false },
      { specifier: './h.js', typeOnly: true },
      { specifier: './i.js', typeOnly: false },
      { specifier: './j.js', typeOnly: true },
      { specifier: './k.js', typeOnly: false },
    ]);
  });

  it('counts lines as an editor does', () => {
    expect([countLines(''), countLines('a'), countLines('a\n'), countLines('a\nb'), countLines('a\n\n')]).toEqual([0, 1, 1, 2, 2]);
  });
});

describe('source layout: the agreed shape passes', () => {
  it('the fixture project has no violation, and its imports resolve .js specifiers to .ts files', () => {
    const report = checkImports(root);
    expect(report.violations).toEqual([]);
    expect(report.unresolved).toEqual([]);
    expect(report.edges).toContainEqual({ from: 'src/runtime/router.ts', to: 'src/cloud/api.ts', typeOnly: false });
    expect(report.edges).toContainEqual({ from: 'src/model/lock.ts', to: 'src/util/logger.ts', typeOnly: true });
    expect(report.edges).toHaveLength(9);
  });

  it('imports of packages and of files outside src/ are no edges; a relative import that does not resolve is noted', async () => {
    await put('src/util/extra.ts', "import { z } from 'zod/v3';\nimport '../../outside.js';\nimport './missing.js';\nexport const schema = z.string();\n");
    await put('outside.ts', 'export {};\n');
    const report = checkImports(root);
    expect(report.edges.filter((e) => e.from === 'src/util/extra.ts')).toEqual([]);
    expect(report.unresolved).toEqual(['src/util/extra.ts: ./missing.js']);
    expect(report.violations).toEqual([]);
  });
});

describe('source layout: no import cycles between files, type-only imports included', () => {
  it('a loop of type-only imports is a cycle (and here also two folders importing each other)', async () => {
    await put('src/util/logger.ts', "import type { lockWords } from '../model/lock.js';\n\nexport interface Logger {\n  info(message: string): void;\n}\nexport type Words = typeof lockWords;\n");
    expect(found('file-cycle')).toEqual(['import cycle: src/model/lock.ts -(type)-> src/util/logger.ts -(type)-> src/model/lock.ts']);
    expect(found('folder-cycle')).toEqual(['src/model and src/util import each other: src/model/lock.ts -(type)-> src/util/logger.ts; and back: src/util/logger.ts -(type)-> src/model/lock.ts']);
  });

  it('a loop through a re-export and a dynamic import, inside one folder', async () => {
    await put('src/runtime/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
    await put('src/runtime/b.ts', "export * from './c.js';\nexport const b = 1;\n");
    await put('src/runtime/c.ts', "export async function c(): Promise<unknown> {\n  return import('./a.js');\n}\n");
    expect(found()).toEqual(['import cycle: src/runtime/a.ts -> src/runtime/b.ts -> src/runtime/c.ts -> src/runtime/a.ts']);
  });

  it('one tangle is one finding: its shortest loop and the other files caught in it', async () => {
    await put('src/runtime/a.ts', "import './b.js';\nexport const a = 1;\n");
    await put('src/runtime/b.ts', "import './a.js';\nimport './c.js';\nexport const b = 1;\n");
    await put('src/runtime/c.ts', "import './b.js';\nexport const c = 1;\n");
    expect(found()).toEqual(['import cycle: src/runtime/a.ts -> src/runtime/b.ts -> src/runtime/a.ts; the tangle also holds src/runtime/c.ts']);
  });

  it('a file importing itself', async () => {
    await put('src/runtime/self.ts', "import './self.js';\nexport const self = 1;\n");
    expect(found()).toEqual(['import cycle: src/runtime/self.ts -> src/runtime/self.ts']);
  });
});

describe('source layout: no two folders import each other, each layer within its imports', () => {
  it('folders that import each other without a file cycle, with every import in both directions', async () => {
    await put('src/runtime/words.ts', "export const WORDS = 'w';\n");
    await put('src/cloud/api.ts', "import { NAME } from '../settings.js';\nimport { WORDS } from '../runtime/words.js';\n\nexport function fetchThing(id: string): string {\n  return `${NAME}/${WORDS}/${id}`;\n}\n");
    expect(found('folder-cycle')).toEqual(['src/cloud and src/runtime import each other: src/cloud/api.ts -> src/runtime/words.ts; and back: src/runtime/router.ts -> src/cloud/api.ts']);
  });

  it.each([
    ['model', 'src/model/lock.ts', "import type { fetchThing } from '../cloud/api.js';\n\nexport type Fetch = typeof fetchThing;\nexport function lockWords(id: string): string {\n  return id;\n}\n", 'src/cloud/api.ts'],
    ['model', 'src/model/lock.ts', "import { open } from '../storage.js';\n\nexport const o = open;\nexport function lockWords(id: string): string {\n  return id;\n}\n", 'src/storage.ts'],
    ['homekit', 'src/homekit/view.ts', "import { fetchThing } from '../cloud/api.js';\nexport const v = fetchThing;\n", 'src/cloud/api.ts'],
    ['homekit', 'src/homekit/view.ts', "import { m } from '../matter/view.js';\nexport const v = m;\n", 'src/matter/view.ts'],
    ['matter', 'src/matter/view.ts', "import { h } from '../homekit/view.js';\nexport const m = h;\n", 'src/homekit/view.ts'],
    ['matter', 'src/matter/view.ts', "import { route } from '../runtime/router.js';\nexport const m = route;\n", 'src/runtime/router.ts'],
    ['callbacks', 'src/callbacks/accept.ts', "import type { fetchThing } from '../cloud/api.js';\nexport type A = typeof fetchThing;\n", 'src/cloud/api.ts'],
    ['settings-ui', 'src/settings-ui/backend.ts', "import { route } from '../runtime/router.js';\nexport const b = route;\n", 'src/runtime/router.ts'],
    ['cloud', 'src/cloud/image.ts', "import type { h } from '../homekit/view.js';\nexport type H = typeof h;\n", 'src/homekit/view.ts'],
    ['cloud', 'src/cloud/link.ts', "import { route } from '../runtime/router.js';\nexport const l = route;\n", 'src/runtime/router.ts'],
    ['status', 'src/status/page.ts', "import { m } from '../matter/view.js';\nexport const s = m;\n", 'src/matter/view.ts'],
    ['storage', 'src/storage/records.ts', "import type { h } from '../homekit/view.js';\nexport type R = typeof h;\n", 'src/homekit/view.ts'],
    ['util', 'src/util/words.ts', "import { lockWords } from '../model/lock.js';\nexport const w = lockWords;\n", 'src/model/lock.ts'],
    ['video', 'src/video/stream.ts', "import type { h } from '../homekit/view.js';\nexport type V = typeof h;\n", 'src/homekit/view.ts'],
  ])('%s/ importing what its layer may not (%s), even for a type only', async (layer, file, text, target) => {
    await put('src/homekit/view.ts', 'export const h = 1;\n');
    await put('src/matter/view.ts', 'export const m = 1;\n');
    await put(file, text);
    const layerFindings = found('layer');
    expect(layerFindings).toHaveLength(1);
    expect(layerFindings[0]).toMatch(new RegExp(`^${file} imports ${target}: src/${layer} must not depend on`));
  });

  it('a layer may import what its rule allows: model its own files, util and settings.ts; views and the cloud the model; status the cloud', async () => {
    await put('src/model/words.ts', "import { NAME } from '../settings.js';\nimport type { Logger } from '../util/logger.js';\nexport type L = Logger;\nexport const WORDS = NAME;\n");
    await put('src/homekit/view.ts', "import { WORDS } from '../model/words.js';\nexport const h = WORDS;\n");
    await put('src/matter/view.ts', "import { WORDS } from '../model/words.js';\nexport const m = WORDS;\n");
    await put('src/cloud/set.ts', "import { WORDS } from '../model/words.js';\nexport const c = WORDS;\n");
    await put('src/status/page.ts', "import { c } from '../cloud/set.js';\nexport const s = c;\n");
    expect(found('layer')).toEqual([]);
  });

  it('top-level files may import folders and be imported by them: they are no folder', async () => {
    await put('src/util/name.ts', "import { NAME } from '../settings.js';\nexport const name = NAME;\n");
    await put('src/settings.ts', "export const NAME = 'Fixture';\nexport const LEVEL = 1;\n");
    expect(found()).toEqual([]);
  });
});

describe('source layout: only the five agreed files at the top of src/, no file over 350 lines', () => {
  it('any other file at the top of src/ is named', async () => {
    await put('src/helpers.ts', 'export const help = 1;\n');
    await put('src/notes.md', '# notes\n');
    expect(found('top-level')).toEqual([
      'src/helpers.ts is at the top of src/, where only index.ts, platform.ts, settings.ts, config.ts, storage.ts belong: move it into the folder of its layer',
      'src/notes.md is at the top of src/, where only index.ts, platform.ts, settings.ts, config.ts, storage.ts belong: move it into the folder of its layer',
    ]);
  });

  it("zod only through zod/v3, in value and type imports alike", async () => {
    await put('src/model/schema.ts', "import { z } from 'zod/v3';\nexport const id = z.string();\n");
    expect(found('package')).toEqual([]);
    await put('src/model/v4.ts', "import { z } from 'zod';\nexport const id = z.string();\n");
    await put('src/util/mini.ts', "import type { z } from 'zod/mini';\nexport type Id = z.infer<z.ZodMiniString>;\n");
    expect(found('package')).toEqual([
      expect.stringMatching(/^src\/model\/v4\.ts imports zod: import zod\/v3 instead/),
      expect.stringMatching(/^src\/util\/mini\.ts imports zod\/mini: import zod\/v3 instead/),
    ]);
  });

  it('350 lines pass, 351 do not', async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';
    await put('src/util/just-fits.ts', lines(MAX_LINES));
    expect(found()).toEqual([]);
    await put('src/util/too-long.ts', lines(MAX_LINES + 1));
    expect(found()).toEqual(['src/util/too-long.ts has 351 lines (at most 350): split it along its jobs']);
  });
});

describe('source layout: the command prints what it found and fails on a violation', () => {
  const run = async (dir: string) => {
    const args = await tsChildArgs(join(REPO, 'scripts', 'check-imports.ts'), dir);
    return new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, args, { cwd: REPO }, (error, stdout) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout });
      });
    });
  };

  it('exits 0 with a summary on the agreed shape, 1 with one FAIL line per violation otherwise', async () => {
    const ok = await run(root);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/9 source files and 9 imports between them[\s\S]*check-imports: ok/);
    await put('src/helpers.ts', "import './helpers.js';\nexport const help = 1;\n");
    const bad = await run(root);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n').filter((line) => line.startsWith('FAIL'))).toEqual([
      'FAIL  [top-level] src/helpers.ts is at the top of src/, where only index.ts, platform.ts, settings.ts, config.ts, storage.ts belong: move it into the folder of its layer',
      'FAIL  [file-cycle] import cycle: src/helpers.ts -> src/helpers.ts',
    ]);
    expect(bad.stdout).toMatch(/2 violation\(s\)/);
    // Two runs of the command through tsx: a few seconds of CPU, much longer on a loaded machine.
  }, 120_000);
});
