// What ends an ffmpeg when the Homebridge process that started it dies without a shutdown (SIGKILL,
// a crash, the out-of-memory killer): nothing in Node runs then, so the tie must be outside it.
// - Linux with util-linux's `setpriv`: ffmpeg is started as `setpriv --pdeathsig KILL -- ffmpeg …`;
//   the kernel sends it SIGKILL the moment its parent dies. setpriv execs ffmpeg, so the pid, the
//   signals, the exit code and the pipes stay ffmpeg's own.
// - Elsewhere (macOS, a Linux without setpriv): a tiny `/bin/sh` watchdog beside each ffmpeg reads a
//   pipe from Homebridge; when Homebridge dies the pipe ends and the watchdog kills ffmpeg. When
//   ffmpeg ends first, Homebridge tells the watchdog to go (a line on the pipe), so it kills nothing.
// The start-up sweep (child-ledger.ts) catches what slips through both.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

export type OrphanGuard = 'pdeathsig' | 'watchdog' | 'none';

/** How long the one check of setpriv may take. */
const CHECK_TIMEOUT_MS = 10_000;
const SHELL = '/bin/sh';

/** Runs a program and resolves whether it exited with 0. */
export type TryRun = (command: string, args: readonly string[]) => Promise<boolean>;

const tryRun: TryRun = (command, args) =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: CHECK_TIMEOUT_MS, windowsHide: true }, (error) => {
      resolve(error === null);
    });
  });

function shellExists(): boolean {
  try {
    accessSync(SHELL, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Which guard this machine can give every ffmpeg, checked once at start: the parent-death signal
 * when `setpriv` sets it here (it can be missing or too old), else the watchdog when there is a
 * POSIX shell, else none (Windows: only the sweep at the next start is left).
 */
export async function checkOrphanGuard(platform: NodeJS.Platform = process.platform, run: TryRun = tryRun, hasShell: () => boolean = shellExists): Promise<OrphanGuard> {
  if (platform === 'win32') return 'none';
  if (platform === 'linux' && (await run('setpriv', ['--pdeathsig', 'KILL', '--', 'true']))) return 'pdeathsig';
  return hasShell() ? 'watchdog' : 'none';
}

/** The program and arguments that start ffmpeg under `guard`. */
export function guardedCommand(guard: OrphanGuard, path: string, args: readonly string[]): { command: string; args: string[] } {
  if (guard === 'pdeathsig') return { command: 'setpriv', args: ['--pdeathsig', 'KILL', '--', path, ...args] };
  return { command: path, args: [...args] };
}

/** setpriv's words for why it could not run a program, as the error codes Node's spawn names. */
const EXEC_ERRORS: Record<string, string> = { 'No such file or directory': 'ENOENT', 'Permission denied': 'EACCES', 'Exec format error': 'ENOEXEC' };

/**
 * Under setpriv, an ffmpeg that cannot be run is not a spawn error but setpriv's exit (126, or 127
 * for a missing program) with a "failed to execute" line: answers the spawn error Node would have
 * given without setpriv ("spawn <path> ENOENT"), or undefined when ffmpeg itself ran.
 */
export function setprivExecFailure(code: number | null, lines: readonly string[], path: string): string | undefined {
  if (code !== 126 && code !== 127) return undefined;
  const said = lines.map((line) => /^setpriv: failed to execute .*: (.+)$/.exec(line)?.[1]).find((words) => words !== undefined);
  return said === undefined ? undefined : `spawn ${path} ${EXEC_ERRORS[said] ?? said}`;
}

export interface Watchdog {
  /** ffmpeg has ended: the watchdog leaves without killing anything. */
  release(): void;
}

// Reads one line: one that arrives means "ffmpeg ended, go"; the end of the pipe without one means
// Homebridge is gone, so ffmpeg is killed. $1 is ffmpeg's pid.
const WATCH = 'read -r _ || kill -KILL "$1" 2>/dev/null';

/** Starts the watchdog for the ffmpeg with `pid`. Never throws: without it only the sweep is left. */
export function startWatchdog(pid: number): Watchdog {
  let child: ChildProcess | undefined;
  try {
    child = spawn(SHELL, ['-c', WATCH, 'lock-access-watchdog', String(pid)], { stdio: ['pipe', 'ignore', 'ignore'], windowsHide: true });
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
  } catch {
    child = undefined;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      child?.stdin?.end('ffmpeg ended\n');
    },
  };
}
