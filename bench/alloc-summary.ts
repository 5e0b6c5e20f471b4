// Sums a sampling heap profile (BENCH_ALLOC_PROF, see bench/lib/settle-preload.mjs) by where the
// allocating code lives (this plugin's files, each package, Node itself) and by function, so a
// start-up's allocations can be compared without DevTools:
//
//   npx tsx bench/alloc-summary.ts alloc.123.heapprofile            top packages and functions
//   HEAP_TOP=80 npx tsx bench/alloc-summary.ts alloc.123.heapprofile
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  callFrame: Frame;
  selfSize: number;
  children: ProfileNode[];
}

/** The package (or "plugin:<file>", or "node") a script belongs to. */
function ownerOf(url: string): string {
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules?.[1]) return inModules[1];
  const dist = /\/dist\/(.+)$/.exec(url);
  if (dist?.[1]) return `plugin:${dist[1]}`;
  if (url.startsWith('node:') || url === '') return 'node';
  return url;
}

const path = process.argv[2];
if (path === undefined) throw new Error('usage: tsx bench/alloc-summary.ts <file.heapprofile>');
const top = Number(process.env.HEAP_TOP ?? 40);
const root = (JSON.parse(readFileSync(path, 'utf8')) as { head: ProfileNode }).head;
const byOwner = new Map<string, number>();
const byFunction = new Map<string, number>();
/** Allocations made under each plugin function (its own and its callees'), the plugin's outermost frame only. */
const underPlugin = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode, pluginFrame: string | undefined) => {
  const { url, functionName, lineNumber } = node.callFrame;
  const owner = ownerOf(url);
  const here = `${functionName || '(anonymous)'} ${owner}:${lineNumber + 1}`;
  const outer = pluginFrame ?? (owner.startsWith('plugin:') ? here : undefined);
  total += node.selfSize;
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + node.selfSize);
  byFunction.set(here, (byFunction.get(here) ?? 0) + node.selfSize);
  if (outer !== undefined) underPlugin.set(outer, (underPlugin.get(outer) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child, outer);
};
walk(root, undefined);
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2).padStart(8);
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, bytes] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${mib(bytes)} MiB  ${name}\n`);
};
process.stdout.write(`allocated in all (sampled): ${mib(total)} MiB\n`);
print('by owner (allocating frame)', byOwner);
print('by function (allocating frame)', byFunction);
print("under the plugin's outermost frame (its callees included)", underPlugin);
