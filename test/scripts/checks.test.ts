// scripts/checks.ts, the checks of `npm test` in one process, on a small project of its own: every
// kind of problem each part must catch fails the run and is shown, and eslint's type-aware rules
// work on the type check's program (a file outside it fails, as it would without a project).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A project shaped like this one (a tsconfig, the settings page's, an eslint config, src/), without node's types to keep it small. */
const PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ type: 'module' }),
  'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', strict: true, noEmit: true, lib: ['ES2023'], types: [] }, include: ['src', 'test'] }),
  'tsconfig.ui.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ES2022', moduleResolution: 'bundler', allowJs: true, checkJs: true, noEmit: true, strict: true, lib: ['ES2023'], types: [] }, include: ['ui/**/*.js'] }),
  'eslint.config.js': [
    "import js from '@eslint/js';",
    "import tseslint from 'typescript-eslint';",
    'export default tseslint.config(',
    "  { ignores: ['node_modules/**'] },",
    '  js.configs.recommended,',
    '  ...tseslint.configs.strictTypeChecked,',
    '  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },',
    "  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },",
    ');',
  ].join('\n'),
  'src/index.ts': 'export const port: number = 8080;\n',
  'ui/page.js': "// @ts-check\n/** @type {number} */\nexport const count = 3;\n",
};

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'checks-'));
  for (const [path, text] of Object.entries(PROJECT)) await put(path, text);
  // The config's packages come from this repository.
  await symlink(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

function run(): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    // Node with tsx's loader, from this repository (one process, as the gate's tsx runs it).
    execFile(process.execPath, ['--import', 'tsx', join(REPO, 'scripts', 'checks.ts'), root], { cwd: REPO, maxBuffer: 8 * 1024 * 1024 }, (error, stdout) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout });
    });
  });
}

describe('the checks of npm test (scripts/checks.ts) fail on every kind of problem and show each', () => {
  // One run (each costs seconds of CPU in every gate): that a clean project passes, the gate itself
  // proves on this repository.
  it('a type error, a settings-page type error, a type-aware lint error, a plain lint error, an unused disable directive (a warning) and a file outside the program', async () => {
    await put('src/index.ts', "export const port: number = 'eighty';\n");
    await put('ui/page.js', "// @ts-check\n/** @type {number} */\nexport const count = 'many';\n");
    await put('test/floating.ts', 'async function later(): Promise<void> {\n  await Promise.resolve();\n}\nexport function go(): void {\n  later();\n}\n');
    await put('test/directive.ts', '// eslint-disable-next-line no-console\nexport const quiet = 1;\n');
    await put('ui/unused.js', 'const unused = 1;\n');
    await put('outside/stray.ts', 'export const stray = 1;\n');
    const { code, stdout } = await run();
    expect(code).toBe(1);
    // The type check of tsconfig.json, in tsc's words.
    expect(stdout).toMatch(/src\/index\.ts\(1,14\): error TS2322: Type 'string' is not assignable to type 'number'/);
    // The settings page's.
    expect(stdout).toMatch(/ui\/page\.js\(3,14\): error TS2322/);
    // eslint: a rule that needs the program's types, a plain rule on JS, a warning, and a file the program does not hold.
    expect(stdout).toMatch(/test\/floating\.ts[\s\S]*@typescript-eslint\/no-floating-promises/);
    expect(stdout).toMatch(/'unused' is assigned a value but never used/);
    expect(stdout).toMatch(/test\/directive\.ts[\s\S]*warning +Unused eslint-disable directive/);
    expect(stdout).toMatch(/outside\/stray\.ts[\s\S]*not found in any of the provided program/);
    expect(stdout).toMatch(/checks: layout passed/);
    expect(stdout).toMatch(/checks: failed: typecheck, typecheck settings page, lint$/m);
  }, 60_000);
});
