// Every ffmpeg the plugin starts is a child owned here: each ends within 2 s of its stop (SIGTERM,
// then SIGKILL), all end when Homebridge shuts down, and a process exit of Homebridge itself kills
// any still running. A Homebridge that dies without any of that (SIGKILL, a crash) takes them with
// it through the orphan guard (orphan-guard.ts), and the ledger lets the next start end any left.
// Its error output is kept (a few lines, every address cut to its host) for the log line that says
// why it ended; its command line is never logged.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

import type { Logger } from '../util/logger.js';
import type { ChildLedger } from './child-ledger.js';
import { hostsOnly } from './ffmpeg-text.js';
import { guardedCommand, setprivExecFailure, startWatchdog, type OrphanGuard } from './orphan-guard.js';

/** How long a child has after SIGTERM before it is killed. */
export const STOP_GRACE_MS = 1_500;
/** The last lines of error output kept per child. */
const KEPT_LINES = 8;
/** A single line of error output is cut at this length (a runaway line must not grow memory). */
const MAX_LINE = 400;

export interface FfmpegExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The plugin asked it to stop (a viewer closed, shutdown): not a failure. */
  stopped: boolean;
  /** Its last lines of error output, addresses cut to their host ('' when none). */
  errorOutput: string;
  /** It could not be started at all (the program vanished, too many processes). */
  spawnError?: string;
}

export interface FfmpegRun {
  readonly pid: number | undefined;
  /** Resolves once the process has ended, whatever the reason. Never rejects. */
  readonly exited: Promise<FfmpegExit>;
  /** Its standard output (fragments for Secure Video); `undefined` unless asked for with `stdout: 'pipe'`. */
  readonly stdout: Readable | undefined;
  readonly stdin: Writable | undefined;
  readonly running: boolean;
  /** Ends it (SIGTERM, SIGKILL after STOP_GRACE_MS); resolves when it has exited. */
  stop(): Promise<FfmpegExit>;
}

export interface SpawnOptions {
  /** Words for the log, such as "Front Doorbell camera view". Never an address. */
  label: string;
  stdout?: 'pipe' | 'ignore';
  stdin?: 'pipe' | 'ignore';
  /** Each line of error output as it comes, already cut to hosts. */
  onErrorLine?: (line: string) => void;
}

/** What ties each child to Homebridge's life beyond its own stop: always given, so no caller gets unguarded children by forgetting it. */
export interface ChildTies {
  guard: OrphanGuard;
  ledger?: ChildLedger;
}

export class FfmpegProcesses {
  private readonly children = new Set<ChildProcess>();
  private readonly runs = new Set<FfmpegRun>();
  private closed = false;
  /** Children that ended and are being struck out of the ledger. */
  private readonly untying = new Set<Promise<void>>();
  private readonly killAll = (): void => {
    for (const child of this.children) child.kill('SIGKILL');
  };

  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly ties: ChildTies,
  ) {
    // Homebridge ends the process after its shutdown; whatever still runs then is killed with it.
    process.on('exit', this.killAll);
  }

  /** How many children run now. */
  get count(): number {
    return this.children.size;
  }

  /** Starts ffmpeg with `args`. After shutdown, returns a run that has already ended. */
  spawn(args: readonly string[], options: SpawnOptions): FfmpegRun {
    const kept: string[] = [];
    let stopped = false;
    let child: ChildProcess | undefined;
    let spawnError: string | undefined;
    let resolveExit: (exit: FfmpegExit) => void = () => undefined;
    const exited = new Promise<FfmpegExit>((resolve) => {
      resolveExit = resolve;
    });
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (finished) return;
      finished = true;
      if (child) this.children.delete(child);
      this.runs.delete(run);
      const notRun = this.ties.guard === 'pdeathsig' ? setprivExecFailure(code, kept, this.path) : undefined;
      if (notRun !== undefined) {
        // The same words as without setpriv: ffmpeg never ran.
        resolveExit({ code: null, signal: null, stopped, errorOutput: '', spawnError: notRun });
        return;
      }
      resolveExit({ code, signal, stopped, errorOutput: kept.join('\n'), ...(spawnError === undefined ? {} : { spawnError }) });
    };
    if (this.closed) {
      stopped = true;
      spawnError = 'the plugin is shutting down';
    } else {
      try {
        const command = guardedCommand(this.ties.guard, this.path, ['-hide_banner', '-nostats', '-nostdin', ...args.filter((arg) => arg !== '-nostdin')]);
        child = spawn(command.command, command.args, {
          stdio: [options.stdin ?? 'ignore', options.stdout ?? 'ignore', 'pipe'],
          windowsHide: true,
        });
      } catch (error) {
        spawnError = error instanceof Error ? error.message : String(error);
      }
    }
    if (child?.pid !== undefined) this.tie(child.pid, exited);
    if (child) {
      this.children.add(child);
      let partial = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split(/\r?\n/);
        partial = (lines.pop() ?? '').slice(-MAX_LINE);
        for (const raw of lines) {
          const line = hostsOnly(raw.slice(0, MAX_LINE)).trim();
          if (line === '') continue;
          kept.push(line);
          if (kept.length > KEPT_LINES) kept.shift();
          options.onErrorLine?.(line);
        }
      });
      const started = child;
      started.once('error', (error) => {
        // Spawn failed (ENOENT, EAGAIN): 'close' may not follow.
        spawnError = hostsOnly(error.message);
        if (started.pid === undefined) finish(null, null);
      });
      child.once('close', (code, signal) => {
        finish(code, signal);
      });
    } else {
      queueMicrotask(() => {
        finish(null, null);
      });
    }
    const run: FfmpegRun = {
      pid: child?.pid,
      exited,
      stdout: child?.stdout ?? undefined,
      stdin: child?.stdin ?? undefined,
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null && spawnError === undefined;
      },
      stop: () => {
        stopped = true;
        if (child && run.running) {
          child.kill('SIGTERM');
          const target = child;
          const timer = setTimeout(() => target.kill('SIGKILL'), STOP_GRACE_MS);
          timer.unref();
          void exited.then(() => {
            clearTimeout(timer);
          });
        }
        return exited;
      },
    };
    this.runs.add(run);
    this.log.debug(`ffmpeg started for the ${options.label}.`);
    return run;
  }

  /** Ends every child and refuses new ones (Homebridge shutdown). Resolves when all have exited and the ledger is written. */
  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.runs].map((run) => run.stop()));
    process.off('exit', this.killAll);
    await Promise.all(this.untying);
    await this.ties.ledger?.settled();
  }

  /** The watchdog (where it is the guard) and the ledger entry of a child, for as long as it runs. */
  private tie(pid: number, exited: Promise<FfmpegExit>): void {
    const watchdog = this.ties.guard === 'watchdog' ? startWatchdog(pid) : undefined;
    const written = this.ties.ledger?.add(pid, this.path);
    const untied = exited.then(async () => {
      watchdog?.release();
      await written;
      this.ties.ledger?.remove(pid);
    });
    this.untying.add(untied);
    void untied.finally(() => this.untying.delete(untied));
  }
}

/** A short sentence for a log line: why ffmpeg ended, with its last error line. */
export function describeExit(exit: FfmpegExit): string {
  if (exit.spawnError !== undefined) return `ffmpeg could not be started (${exit.spawnError})`;
  const how = exit.signal !== null ? `was ended by ${exit.signal}` : `exited with code ${String(exit.code)}`;
  const last = exit.errorOutput.split('\n').filter(Boolean).slice(-2).join(' / ');
  return `ffmpeg ${how}${last === '' ? '' : `: ${last}`}`;
}
