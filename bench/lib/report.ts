// Writes a run as JSON and Markdown under bench/results/: latest.* plus dated copies.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { MachineInfo } from './machine.js';
import type { PartResult } from './types.js';

export interface RunRecord {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  mode: 'full' | 'quick';
  soakMinutes: number;
  only: string[] | null;
  git: string;
  machine: { atStart: MachineInfo; atEnd: MachineInfo; busyShareBeforeRun: number };
  parts: PartResult[];
  failures: { part: string; error: string }[];
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function markdown(run: RunRecord): string {
  const m = run.machine.atStart;
  const lines: string[] = [];
  lines.push(`# Benchmark run ${run.startedAt}`);
  lines.push('');
  lines.push(`${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.os}. Mode: ${run.mode}${run.only ? ` (only ${run.only.join(', ')})` : ''}; soak ${run.soakMinutes} min; total ${Math.round(run.seconds)} s; commit ${run.git}.`);
  lines.push(`Load average at start ${m.loadAverage.join(' / ')}, at end ${run.machine.atEnd.loadAverage.join(' / ')}; other processes kept ${Math.round(run.machine.busyShareBeforeRun * 100)} % of the CPUs busy just before the run (shared machine).`);
  lines.push('');
  const goals = run.parts.flatMap((p) => p.goals.map((g) => ({ ...g, part: p.title })));
  if (goals.length > 0) {
    lines.push('## Goals');
    lines.push('');
    lines.push('| part | goal | target | measured | met |');
    lines.push('|---|---|---|---|---|');
    for (const g of goals) lines.push(`| ${cell(g.part)} | ${cell(g.name)} | ${cell(g.target)} | ${cell(g.actual)} | ${g.met ? 'yes' : '**no**'} |`);
    lines.push('');
  }
  for (const part of run.parts) {
    lines.push(`## ${part.title}`);
    lines.push('');
    lines.push(`| ${part.table.header.map(cell).join(' | ')} |`);
    lines.push(`|${part.table.header.map(() => '---').join('|')}|`);
    for (const row of part.table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
    lines.push('');
    for (const note of part.notes) lines.push(`- ${note}`);
    if (part.notes.length > 0) lines.push('');
  }
  if (run.failures.length > 0) {
    lines.push('## Parts that did not complete');
    lines.push('');
    for (const f of run.failures) lines.push(`- ${f.part}: ${cell(f.error)}`);
    lines.push('');
  }
  return lines.join('\n');
}

export async function writeRun(dir: string, run: RunRecord): Promise<{ json: string; md: string }> {
  await mkdir(dir, { recursive: true });
  const stamp = run.startedAt.replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  const suffix = run.mode === 'quick' || run.only ? '-partial' : '';
  const json = `${JSON.stringify(run, null, 2)}\n`;
  const md = `${markdown(run)}\n`;
  // Quick or partial runs never replace the committed reference; they go to tmp/.
  const target = suffix ? join(dir, 'tmp') : dir;
  await mkdir(target, { recursive: true });
  await writeFile(join(target, `${stamp}${suffix}.json`), json);
  await writeFile(join(target, `${stamp}${suffix}.md`), md);
  await writeFile(join(target, `latest${suffix}.json`), json);
  await writeFile(join(target, `latest${suffix}.md`), md);
  return { json: join(target, `latest${suffix}.json`), md: join(target, `latest${suffix}.md`) };
}
