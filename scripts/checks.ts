// `npm run check`: the checks of `npm test` beside the build (`scripts/gate.ts`), in one process:
// the type check of everything we write (what `tsc -p tsconfig.json --noEmit` reports), the
// settings page's (`tsc -p tsconfig.ui.json`), the layout (`scripts/check-imports.ts`) and eslint
// (`eslint . --max-warnings=0`). The type check and eslint share one TypeScript program: eslint's
// type-aware rules need the same types the type check computes, and on their own eslint's project
// service built and checked that program a second time (about a third of the gate's check CPU).
// eslint reads eslint.config.js as `npx eslint` does; only where the project service would give a
// file its types, this program gives them. Every part runs even after one fails, so every failure
// is shown; each part prints what it found and its time as it ends. Exits 1 when any part failed.
// Usage: tsx scripts/checks.ts [projectRoot]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { ESLint, type Linter } from 'eslint';
import ts from 'typescript';

import { errorText } from '../src/util/error-text.js';
import { layoutReport } from './check-imports.js';

const ROOT = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => ROOT,
  getNewLine: () => '\n',
};

/** The program of a tsconfig, with the errors of the tsconfig itself and the files it names (as `tsc -p` makes it). */
function programOf(tsconfig: string): { program: ts.Program; configErrors: readonly ts.Diagnostic[]; named: readonly string[] } {
  const configErrors: ts.Diagnostic[] = [];
  const host: ts.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => configErrors.push(diagnostic) };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, tsconfig), undefined, host);
  if (parsed === undefined) throw new Error(ts.formatDiagnostics(configErrors, formatHost));
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences, configFileParsingDiagnostics: parsed.errors });
  return { program, configErrors: parsed.errors, named: parsed.fileNames };
}

/**
 * `tsc --noEmit`'s verdict on a program: its errors in tsc's words, none when it passes. With `only`,
 * the errors in those files (and the program's own), not in the files they import.
 */
function typeErrors(program: ts.Program, configErrors: readonly ts.Diagnostic[], only?: readonly string[]): string[] {
  // Any diagnostic fails, as it fails tsc.
  const found = [...configErrors, ...(only === undefined ? ts.getPreEmitDiagnostics(program) : namedFileErrors(program, only))];
  if (found.length === 0) return [];
  return [ts.formatDiagnostics(found, formatHost).trimEnd(), `Found ${found.length} error(s).`];
}

/** The program's own errors and those in `files` (tsc's pre-emit diagnostics, file by file). */
function namedFileErrors(program: ts.Program, files: readonly string[]): ts.Diagnostic[] {
  const found = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  for (const name of files) {
    const file = program.getSourceFile(name);
    if (file) found.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file));
  }
  return found;
}

/**
 * eslint.config.js with this program as the type information wherever the config asks the project
 * service for it. A file the program does not hold fails loudly, as it would without a project.
 * The entries that turn type information off (plain JS) keep it off.
 */
function onProgram(config: Linter.Config[], program: ts.Program): Linter.Config[] {
  let shared = 0;
  const result = config.map((entry) => {
    const parserOptions = entry.languageOptions?.parserOptions;
    if (typeof parserOptions !== 'object' || parserOptions === null || !('projectService' in parserOptions)) return entry;
    const typed = parserOptions.projectService !== false;
    if (typed) shared += 1;
    return { ...entry, languageOptions: { ...entry.languageOptions, parserOptions: { ...parserOptions, projectService: false, programs: typed ? [program] : null } } };
  });
  if (shared === 0) throw new Error('eslint.config.js no longer sets parserOptions.projectService: tell scripts/checks.ts where its type information comes from');
  return result;
}

async function lint(program: ts.Program): Promise<string[]> {
  const loaded = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { default: Linter.Config[] };
  const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: onProgram(loaded.default, program) });
  const results = await eslint.lintFiles(['.']);
  const problems = results.reduce((sum, result) => sum + result.errorCount + result.warningCount, 0);
  if (problems === 0) return [];
  // Zero warnings, as `--max-warnings=0`.
  const formatter = await eslint.loadFormatter('stylish');
  return [(await formatter.format(results)).trimEnd()];
}

const failed: string[] = [];

/** Runs one part, prints what it found and its time; a part that throws has failed. */
async function part(name: string, check: () => string[] | Promise<string[]>): Promise<void> {
  const started = Date.now();
  let problems: string[];
  try {
    problems = await check();
  } catch (error) {
    problems = [`${name}: ${errorText(error)}`];
  }
  const seconds = ((Date.now() - started) / 1_000).toFixed(1);
  for (const line of problems) console.log(line);
  if (problems.length > 0) failed.push(name);
  console.log(`checks: ${name} ${problems.length > 0 ? 'failed' : 'passed'} in ${seconds} s`);
}

let program: ts.Program | undefined;
await part('typecheck', () => {
  const made = programOf('tsconfig.json');
  program = made.program;
  return typeErrors(made.program, made.configErrors);
});
// The settings page's scripts import their shapes from src/ (homebridge-ui/types/page.d.ts): the
// type check above has checked src/ whole, so here only the files this tsconfig names are, not
// again the sources they import (that took as long as the page's own check several times over).
await part('typecheck settings page', () => {
  const made = programOf('tsconfig.ui.json');
  return typeErrors(made.program, made.configErrors, made.named);
});
await part('layout', () => {
  const report = layoutReport(ROOT);
  if (!report.ok) return report.lines;
  // Its summary is the only line worth showing when it passes.
  console.log(report.lines.at(-1) ?? '');
  return [];
});
await part('lint', () => {
  if (program === undefined) throw new Error('no TypeScript program to lint with (tsconfig.json did not load)');
  return lint(program);
});

if (failed.length > 0) {
  console.log(`checks: failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
