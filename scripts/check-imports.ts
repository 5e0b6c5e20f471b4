// The layout rules of the source tree, checked on every `npm test`:
//   - no import cycle between files of src/ (type-only imports count: a cycle in types is still a
//     tangle to read, and one `import type` turned into a value import makes it a runtime cycle),
//   - no two top-level folders of src/ importing each other,
//   - each layer imports only what its job allows (LAYER_RULES below): the device truth in model/
//     stays pure, HomeKit and Matter are equal views that never reach into each other or the edges,
//     the callback path never reaches the cloud, the cloud and the status file never a view or the
//     wiring, util/ on no layer, the settings server never the running plugin,
//   - only index.ts, platform.ts, settings.ts, config.ts and storage.ts at the top of src/,
//   - no source file in src/ over 350 lines,
//   - packages only through the entry points PACKAGE_RULES allows (zod through zod/v3).
// Usage: tsx scripts/check-imports.ts [projectRoot]; prints what it found, exits 1 on a violation.
//
// Why the TypeScript compiler and not madge: madge is not installed and would bring its own
// dependency tree and its own resolver, which must be taught that `./x.js` means `./x.ts` under
// `nodenext`. `typescript` is already a devDependency: its parser sees every import form (type-only,
// re-exports, dynamic `import()`, `import('x').T` types) and `ts.resolveModuleName` resolves each
// specifier exactly as `tsc` does with the project's own tsconfig.json.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';

import { errorText } from '../src/util/error-text.js';

export const MAX_LINES = 350;
export const TOP_LEVEL_FILES: readonly string[] = ['index.ts', 'platform.ts', 'settings.ts', 'config.ts', 'storage.ts'];
const SOURCE = /\.(?:[cm]?ts|tsx|[cm]?js)$/;

export type Rule = 'top-level' | 'size' | 'layer' | 'file-cycle' | 'folder-cycle' | 'package';

/**
 * Entry points of packages that src/ must not import, with the one to use. zod's main entry (its
 * v4 API) loads 64 locales and its JSON Schema tools on import, about 5 MiB more of Homebridge's
 * memory than zod/v3, the same package's v3 API, for the same schemas.
 */
export const PACKAGE_RULES: readonly { refused: RegExp; use: string; why: string }[] = [
  { refused: /^zod(?:\/(?!v3$).*)?$/, use: 'zod/v3', why: "zod's v4 entry points cost about 5 MiB more of Homebridge's memory than zod/v3" },
];

/**
 * What each layer may import from the rest of src/. `only` lists everything allowed (folders, and
 * top-level files by name); `never` lists what is forbidden. A type-only import counts too: a view
 * that names a cloud type already depends on the cloud's shape.
 */
export const LAYER_RULES: Readonly<Record<string, { only?: readonly string[]; never?: readonly string[]; why: string }>> = {
  model: { only: ['model', 'util', 'settings.ts'], why: 'the device truth is pure: it knows no HomeKit, Matter, cloud, callbacks or storage' },
  homekit: { never: ['matter', 'cloud', 'callbacks', 'runtime'], why: 'HomeKit is a view of the model: it renders devices and sends commands through them' },
  matter: { never: ['homekit', 'cloud', 'callbacks', 'runtime'], why: 'Matter is a view of the model, equal to HomeKit: it follows devices, never the HomeKit accessories' },
  callbacks: { never: ['homekit', 'matter', 'runtime', 'cloud'], why: 'the callback path verifies and classifies requests; it hands events on and calls nothing' },
  cloud: { never: ['homekit', 'matter', 'callbacks', 'status', 'runtime', 'settings-ui'], why: 'the service and the calls to it: the views get its abilities as functions, and the status file and the wiring use it, never the other way' },
  status: { never: ['homekit', 'matter', 'runtime', 'settings-ui'], why: 'the status file and the event log record what happens; they follow no view and no wiring' },
  video: { only: ['video', 'util', 'settings.ts'], why: 'the video room runs ffmpeg for the views: it knows no device, view, cloud or wiring; what it needs (a playlist lookup) is handed in' },
  util: { only: ['util', 'settings.ts'], why: 'small helpers every layer uses: they depend on no layer' },
  storage: { never: ['homekit', 'matter', 'callbacks', 'cloud', 'status', 'runtime', 'settings-ui'], why: 'what the plugin keeps on disk, and how earlier versions kept it: it knows the model\'s shapes, never a view, the service or the wiring' },
  accounts: { never: ['homekit', 'matter', 'runtime', 'settings-ui'], why: 'an account is a unit of cloud parts (tokens, client, registrar, link) and its share of the devices: the wiring builds it, and it follows no view' },
  'settings-ui': { never: ['runtime'], why: 'the settings server runs in its own process and must not load the running plugin' },
};

export interface Violation {
  rule: Rule;
  message: string;
}

/** One file's import of another file of src/ (paths relative to the project root, `/`-separated). */
export interface Edge {
  from: string;
  to: string;
  /** Every import of `to` in `from` is type-only. */
  typeOnly: boolean;
}

export interface ImportReport {
  files: string[];
  edges: Edge[];
  /** Relative specifiers the resolver could not find: tsc reports them; noted so no edge is missed silently. */
  unresolved: string[];
  violations: Violation[];
}

const posix = (path: string) => path.split(sep).join('/');

function walk(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
}

/** The project's compiler options (so resolution matches tsc), or plain `nodenext` without a tsconfig. */
function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const fallback: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowJs: true };
  if (!existsSync(configPath)) return fallback;
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (read.error) return fallback;
  return { ...ts.parseJsonConfigFileContent(read.config, ts.sys, root).options, allowJs: true };
}

/** Every module specifier of a file, with whether that import is type-only. */
export function importsOf(fileName: string, text: string): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const add = (node: ts.Node | undefined, typeOnly: boolean) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      // `import { type A, type B } from` is type-only too; `import {} from` and bare imports are not.
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const allTypes = clause !== undefined && !clause.name && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, clause?.phaseModifier === ts.SyntaxKind.TypeKeyword || allTypes);
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true));
  return found;
}

/** Lines as an editor counts them: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function tangles(nodes: string[], next: (node: string) => string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next(node).includes(node)) result.push(component.sort());
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return result;
}

/** The shortest loop from `start` back to itself inside `members` (breadth first). */
function shortestLoop(start: string, members: ReadonlySet<string>, next: (node: string) => string[]): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const node = queue[i] ?? start;
    for (const to of next(node)) {
      if (!members.has(to)) continue;
      if (to === start) {
        const loop = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start];
}

export function checkImports(rootInput: string): ImportReport {
  const root = resolve(rootInput);
  const src = join(root, 'src');
  if (!existsSync(src)) throw new Error(`${src} does not exist`);
  const options = compilerOptions(root);
  const all = walk(src);
  const sources = all.filter((file) => SOURCE.test(file));
  const known = new Set(sources);
  const name = (file: string) => posix(relative(root, file));
  const violations: Violation[] = [];

  for (const file of all.filter((f) => dirname(f) === src)) {
    if (!TOP_LEVEL_FILES.includes(basename(file))) {
      violations.push({ rule: 'top-level', message: `${name(file)} is at the top of src/, where only ${TOP_LEVEL_FILES.join(', ')} belong: move it into the folder of its layer` });
    }
  }

  const edgeMap = new Map<string, Edge>();
  const unresolved: string[] = [];
  for (const file of sources) {
    const text = readFileSync(file, 'utf8');
    const lines = countLines(text);
    if (lines > MAX_LINES) violations.push({ rule: 'size', message: `${name(file)} has ${lines} lines (at most ${MAX_LINES}): split it along its jobs` });
    for (const { specifier, typeOnly } of importsOf(file, text)) {
      const refused = PACKAGE_RULES.find((entry) => entry.refused.test(specifier));
      if (refused) violations.push({ rule: 'package', message: `${name(file)} imports ${specifier}: import ${refused.use} instead (${refused.why})` });
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys).resolvedModule;
      const target = resolved && !resolved.isExternalLibraryImport ? resolve(resolved.resolvedFileName) : undefined;
      if (target === undefined || !known.has(target)) {
        if (specifier.startsWith('.') && target === undefined) unresolved.push(`${name(file)}: ${specifier}`);
        continue;
      }
      const key = `${name(file)}\n${name(target)}`;
      const seen = edgeMap.get(key);
      edgeMap.set(key, { from: name(file), to: name(target), typeOnly: (seen?.typeOnly ?? true) && typeOnly });
    }
  }
  const edges = [...edgeMap.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
  const files = sources.map(name);

  const folderOf = (file: string) => {
    const parts = file.split('/');
    return parts.length > 2 ? parts[1] : undefined;
  };
  const roomOf = (file: string) => folderOf(file) ?? file.split('/').slice(1).join('/');
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const rule = from === undefined ? undefined : LAYER_RULES[from];
    const to = roomOf(edge.to);
    if (rule === undefined || to === from) continue;
    const refused = rule.only !== undefined ? !rule.only.includes(to) : (rule.never ?? []).includes(to);
    if (refused) violations.push({ rule: 'layer', message: `${edge.from} imports ${edge.to}: src/${from} must not depend on ${folderOf(edge.to) ? `src/${to}` : edge.to} (${rule.why})` });
  }

  const out = new Map<string, string[]>();
  for (const edge of edges) out.set(edge.from, [...(out.get(edge.from) ?? []), edge.to]);
  const next = (file: string) => out.get(file) ?? [];
  const arrow = (from: string, to: string) => (edgeMap.get(`${from}\n${to}`)?.typeOnly ? ' -(type)-> ' : ' -> ');
  for (const component of tangles(files, next)) {
    const loop = shortestLoop(component[0] ?? '', new Set(component), next);
    const path = loop.map((file, i) => (i === 0 ? file : `${arrow(loop[i - 1] ?? '', file)}${file}`)).join('');
    const others = component.length > loop.length - 1 ? `; the tangle also holds ${component.filter((f) => !loop.includes(f)).join(', ')}` : '';
    violations.push({ rule: 'file-cycle', message: `import cycle: ${path}${others}` });
  }

  const between = new Map<string, Edge[]>();
  for (const edge of edges) {
    const a = folderOf(edge.from);
    const b = folderOf(edge.to);
    if (a !== undefined && b !== undefined && a !== b) between.set(`${a}>${b}`, [...(between.get(`${a}>${b}`) ?? []), edge]);
  }
  const list = (found: Edge[]) => found.map((e) => `${e.from}${e.typeOnly ? ' -(type)-> ' : ' -> '}${e.to}`).join(', ');
  for (const [key, forth] of [...between].sort(([a], [b]) => a.localeCompare(b))) {
    const [a = '', b = ''] = key.split('>');
    const back = between.get(`${b}>${a}`);
    if (a < b && back) violations.push({ rule: 'folder-cycle', message: `src/${a} and src/${b} import each other: ${list(forth)}; and back: ${list(back)}` });
  }

  return { files, edges, unresolved, violations };
}

/** What the check prints (the lines `main` shows), and whether the layout holds. */
export function layoutReport(root: string): { lines: string[]; ok: boolean } {
  const report = checkImports(root);
  const lines = [`check-imports: ${report.files.length} source files and ${report.edges.length} imports between them in ${posix(relative(process.cwd(), join(root, 'src'))) || 'src'}`];
  for (const note of report.unresolved) lines.push(`note  unresolved relative import ${note}`);
  for (const violation of report.violations) lines.push(`FAIL  [${violation.rule}] ${violation.message}`);
  if (report.violations.length > 0) {
    lines.push(`check-imports: ${report.violations.length} violation(s) of the layout rules`);
    return { lines, ok: false };
  }
  lines.push('check-imports: ok (no cycles between files or folders, every layer within its imports, top level and file sizes as agreed, zod through zod/v3)');
  return { lines, ok: true };
}

function main(): void {
  const root = resolve(process.argv[2] ?? process.cwd());
  let report: { lines: string[]; ok: boolean };
  try {
    report = layoutReport(root);
  } catch (error) {
    console.error(`check-imports: ${errorText(error)}`);
    process.exit(2);
  }
  for (const line of report.lines) console.log(line);
  if (!report.ok) process.exit(1);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
