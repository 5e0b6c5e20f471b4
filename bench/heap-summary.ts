// Reads V8 heap snapshots (as written by `BENCH_HEAP_DIR=dir npx tsx bench/run.ts --only memory`)
// and says where the memory is, without a browser's DevTools:
//
//   npx tsx bench/heap-summary.ts ours.heapsnapshot                 biggest groups by retained size
//   npx tsx bench/heap-summary.ts ours.heapsnapshot bare.heapsnapshot   what the first holds beyond the second
//   HEAP_TOP=200 ...                                                   more rows (60 by default)
//
// Objects are grouped by constructor name (or type for strings, code, arrays). "Self" is an object's
// own bytes; "retained" is what would be freed with it (its dominator subtree), summed over the
// group's outermost instances only, so nested instances of one group are not counted twice.
import { readFileSync } from 'node:fs';

interface Heap {
  groups: Map<string, { count: number; self: number; retained: number }>;
  total: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function load(path: string): Heap {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const { meta } = snap.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [typeAt, nameAt, selfAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
  const [eTypeAt, eToAt] = ['type', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number];
  const weak = edgeTypes.indexOf('weak');
  const n = snap.nodes.length / nf;
  const firstEdge = new Uint32Array(n + 1);
  for (let i = 0; i < n; i += 1) firstEdge[i + 1] = (firstEdge[i] ?? 0) + (snap.nodes[i * nf + edgeCountAt] ?? 0) * ef;
  const succ = (i: number, visit: (j: number) => void) => {
    for (let e = firstEdge[i] ?? 0; e < (firstEdge[i + 1] ?? 0); e += ef) {
      if (snap.edges[e + eTypeAt] === weak) continue;
      visit((snap.edges[e + eToAt] ?? 0) / nf);
    }
  };
  // Reverse postorder from the root, then predecessors, then dominators (Cooper, Harvey, Kennedy).
  const order = new Int32Array(n).fill(-1);
  const post: number[] = [];
  const stack: [number, number][] = [[0, firstEdge[0] ?? 0]];
  order[0] = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as [number, number];
    const [i, e] = top;
    if (e >= (firstEdge[i + 1] ?? 0)) {
      post.push(i);
      stack.pop();
      continue;
    }
    top[1] = e + ef;
    if (snap.edges[e + eTypeAt] === weak) continue;
    const j = (snap.edges[e + eToAt] ?? 0) / nf;
    if (order[j] === -1) {
      order[j] = 0;
      stack.push([j, firstEdge[j] ?? 0]);
    }
  }
  const rpoIndex = new Int32Array(n).fill(-1);
  const rpo = post.reverse();
  rpo.forEach((node, k) => (rpoIndex[node] = k));
  const preds: number[][] = Array.from({ length: n }, () => []);
  for (const i of rpo) succ(i, (j) => preds[j]?.push(i));
  const idom = new Int32Array(n).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while ((rpoIndex[a] ?? 0) > (rpoIndex[b] ?? 0)) a = idom[a] ?? 0;
      while ((rpoIndex[b] ?? 0) > (rpoIndex[a] ?? 0)) b = idom[b] ?? 0;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const i of rpo) {
      if (i === 0) continue;
      let d = -1;
      for (const p of preds[i] ?? []) if (idom[p] !== -1) d = d === -1 ? p : intersect(p, d);
      if (d !== -1 && idom[i] !== d) {
        idom[i] = d;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(n);
  for (const i of rpo) retained[i] = snap.nodes[i * nf + selfAt] ?? 0;
  for (let k = rpo.length - 1; k > 0; k -= 1) {
    const i = rpo[k] ?? 0;
    const d = idom[i] ?? 0;
    if (d !== i) retained[d] = (retained[d] ?? 0) + (retained[i] ?? 0);
  }
  const groupOf = (i: number) => {
    const type = nodeTypes[snap.nodes[i * nf + typeAt] ?? 0] ?? '?';
    const name = snap.strings[snap.nodes[i * nf + nameAt] ?? 0] ?? '';
    if (type === 'object' || type === 'closure' || type === 'native') return `${type} ${name.slice(0, Number(process.env.HEAP_TOP ?? 60))}`;
    return `(${type})`;
  };
  const groups = new Map<string, { count: number; self: number; retained: number }>();
  let total = 0;
  for (const i of rpo) {
    const g = groupOf(i);
    const entry = groups.get(g) ?? { count: 0, self: 0, retained: 0 };
    entry.count += 1;
    entry.self += snap.nodes[i * nf + selfAt] ?? 0;
    total += snap.nodes[i * nf + selfAt] ?? 0;
    // Outermost instance of its group along the dominator chain only.
    let d = idom[i] ?? 0;
    let nested = false;
    while (d !== 0) {
      if (groupOf(d) === g) {
        nested = true;
        break;
      }
      d = idom[d] ?? 0;
    }
    if (!nested) entry.retained += retained[i] ?? 0;
    groups.set(g, entry);
  }
  return { groups, total };
}

const kib = (b: number) => (b / 1024).toFixed(1);
const [first, second] = process.argv.slice(2);
if (first === undefined) throw new Error('usage: heap-summary.ts a.heapsnapshot [b.heapsnapshot]');
const a = load(first);
if (second === undefined) {
  process.stdout.write(`total ${kib(a.total)} KiB reachable\ncount\tself KiB\tretained KiB\tgroup\n`);
  for (const [g, e] of [...a.groups].sort((x, y) => y[1].retained - x[1].retained).slice(0, Number(process.env.HEAP_TOP ?? 60))) process.stdout.write(`${e.count}\t${kib(e.self)}\t${kib(e.retained)}\t${g}\n`);
} else {
  const b = load(second);
  process.stdout.write(`total ${kib(a.total)} vs ${kib(b.total)} KiB reachable (${kib(a.total - b.total)} more)\ncount more\tself KiB more\tgroup\n`);
  const names = new Set([...a.groups.keys(), ...b.groups.keys()]);
  const rows = [...names].map((g) => {
    const x = a.groups.get(g) ?? { count: 0, self: 0, retained: 0 };
    const y = b.groups.get(g) ?? { count: 0, self: 0, retained: 0 };
    return { g, count: x.count - y.count, self: x.self - y.self };
  });
  for (const r of rows.sort((x, y) => y.self - x.self).slice(0, Number(process.env.HEAP_TOP ?? 60))) process.stdout.write(`${r.count}\t${kib(r.self)}\t${r.g}\n`);
}
