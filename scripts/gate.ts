// `npm test`: the whole gate. The build and then vitest run in the foreground; the checks (the type
// checks, the layout check and eslint, in one process) run beside them at a lower priority. The
// tests need only the build (the end-to-end tests start Homebridge from `dist/`), and they spend
// much of their time waiting on real processes, which leaves a core idle that the checks fill; run
// before the tests, the checks alone took a third of the gate. Each step's output is shown when it
// ends, with how long it took, so interleaved output never hides which step failed.
// Usage: tsx scripts/gate.ts [vitest arguments…]
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'node_modules', '.bin');

/**
 * How much the checks give way to the tests (a nice value): a little, so a busy test is not slowed
 * by them. Not more: on a machine shared with other work, checks at nice 5 got so little CPU that
 * eslint ended only seconds before the tests and would have become the end of the gate.
 */
const CHECK_NICENESS = 2;

interface Step {
  name: string;
  command: string;
  args: string[];
}

const step = (name: string, command: string, ...args: string[]): Step => ({ name, command: join(BIN, command), args });

// The type checks, the layout check and eslint, in one process that shares one TypeScript program
// between the type check and eslint's type-aware rules (`scripts/checks.ts`, also `npm run check`).
const checks = step('checks', 'tsx', 'scripts/checks.ts');
const build: Step = { name: 'build', command: 'npm', args: ['run', '--silent', 'build'] };

const running = new Set<ReturnType<typeof spawn>>();

function run({ name, command, args }: Step, options: { live?: boolean; niceness?: number } = {}): Promise<void> {
  const started = Date.now();
  return new Promise((resolveStep, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: options.live === true ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    // Set at once, before the step starts processes of its own (they inherit it).
    if (options.niceness !== undefined && child.pid !== undefined) {
      try {
        setPriority(child.pid, options.niceness);
      } catch {
        // Not allowed here: the step runs at normal priority.
      }
    }
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
  const failures: string[] = [];
  // Changed from callbacks: a record, so the checks below read the value of the moment.
  const state = { testsStarted: false, stopping: false };
  const fail = (error: unknown) => {
    // The steps stopped because of an earlier failure are not failures of their own.
    if (state.stopping) return;
    const message = error instanceof Error ? error.message : String(error);
    failures.push(message);
    process.stderr.write(`gate: ${message}\n`);
    // Before the tests start, one failure ends the gate at once. Once they run, they run to their
    // end: stopping vitest half-way would leave the Homebridge processes of its tests behind.
    if (state.testsStarted) return;
    state.stopping = true;
    for (const child of running) child.kill('SIGTERM');
  };
  // Every check runs even after one fails (every failure is shown); the process fails once at its end.
  const checking = run(checks, { niceness: CHECK_NICENESS }).catch(fail);
  const testing = (async () => {
    await run(build);
    if (failures.length > 0) return;
    state.testsStarted = true;
    await run(step('tests', 'vitest', 'run', ...process.argv.slice(2)), { live: true });
  })().catch(fail);
  await Promise.all([checking, testing]);
  if (failures.length > 0) {
    process.stderr.write(`gate: failed: ${failures.join('; ')}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`gate: everything passed in ${((Date.now() - started) / 1_000).toFixed(0)} s\n`);
}

await main();
