// `npm test`: the whole gate. eslint, the type checks, the layout check and the build are each one
// single-threaded process, so they run in two parallel strands (eslint alone takes about as long as
// the other four together); vitest runs once both have passed, because the end-to-end tests start
// Homebridge from `dist/`. Each step's output is shown when it ends, with how long it took, so
// interleaved output never hides which step failed.
// Usage: tsx scripts/gate.ts [vitest arguments…]
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'node_modules', '.bin');

interface Step {
  name: string;
  command: string;
  args: string[];
}

const step = (name: string, command: string, ...args: string[]): Step => ({ name, command: join(BIN, command), args });

/** Steps in one strand run one after another; the strands run side by side. */
const strands: Step[][] = [
  [step('lint', 'eslint', '.', '--max-warnings=0')],
  [
    // Incremental: a second run only checks what changed (the state lives under node_modules/.cache).
    step('typecheck', 'tsc', '-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/lock-access-tsc/project.tsbuildinfo'),
    step('typecheck settings page', 'tsc', '-p', 'tsconfig.ui.json', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/lock-access-tsc/ui.tsbuildinfo'),
    step('layout', 'tsx', 'scripts/check-imports.ts'),
    { name: 'build', command: 'npm', args: ['run', '--silent', 'build'] },
  ],
];

const running = new Set<ReturnType<typeof spawn>>();

function run({ name, command, args }: Step, live = false): Promise<void> {
  const started = Date.now();
  return new Promise((resolveStep, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    const output: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      running.delete(child);
      const text = Buffer.concat(output).toString('utf8').trimEnd();
      if (text !== '') process.stdout.write(`${text}\n`);
      const seconds = ((Date.now() - started) / 1_000).toFixed(1);
      if (code === 0) {
        process.stdout.write(`gate: ${name} passed in ${seconds} s\n`);
        resolveStep();
      } else {
        reject(new Error(`${name} failed (${signal ?? `exit ${String(code)}`}) after ${seconds} s`));
      }
    });
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  try {
    await Promise.all(strands.map(async (strand) => {
      for (const each of strand) await run(each);
    }));
    await run(step('tests', 'vitest', 'run', ...process.argv.slice(2)), true);
  } catch (error) {
    // One failed step fails the gate at once: the other strand's step is stopped, not awaited.
    for (const child of running) child.kill('SIGTERM');
    process.stderr.write(`gate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`gate: everything passed in ${((Date.now() - started) / 1_000).toFixed(0)} s\n`);
}

await main();
