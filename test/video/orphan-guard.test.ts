// What ends ffmpeg when Homebridge dies without a shutdown: the choice made once at start, the
// command under setpriv's parent-death signal, and, with real processes, a stand-in for Homebridge
// (test/fixtures/guarded-parent.ts) killed with SIGKILL: its child ends under either guard. A
// watchdog told that its child ended leaves without killing anything.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { afterEach, describe, expect, it } from 'vitest';

import { checkOrphanGuard, guardedCommand, setprivExecFailure, startWatchdog } from '../../src/video/orphan-guard.js';
import { childPids } from '../harness/camera-viewer.js';
import { eventually } from '../harness/e2e-session.js';
import { tsChildArgs } from '../harness/ts-child.js';
import { commandLine, running } from '../harness/video-bed.js';

const PARENT = join(process.cwd(), 'test/fixtures/guarded-parent.ts');
const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended already.
    }
  }
});

/** Starts the stand-in for Homebridge with a sleeper under `guard`; answers both pids. */
async function guardedParent(guard: string): Promise<{ pid: number; sleeper: number }> {
  const child = spawn(process.execPath, await tsChildArgs(PARENT), { env: { ...process.env, GP_GUARD: guard }, stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.pid !== undefined) started.push(child.pid);
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const pids = JSON.parse(line) as { pid: number; sleeper: number };
  started.push(pids.sleeper);
  return pids;
}

describe('the guard is chosen once at start', () => {
  it('Linux with a working setpriv: the parent-death signal', async () => {
    const asked: string[][] = [];
    const guard = await checkOrphanGuard('linux', (command, args) => {
      asked.push([command, ...args]);
      return Promise.resolve(true);
    });
    expect(guard).toBe('pdeathsig');
    expect(asked).toEqual([['setpriv', '--pdeathsig', 'KILL', '--', 'true']]);
  });

  it('Linux without setpriv (or one too old for --pdeathsig): the watchdog', async () => {
    expect(await checkOrphanGuard('linux', () => Promise.resolve(false), () => true)).toBe('watchdog');
  });

  it('macOS: the watchdog, setpriv is not asked', async () => {
    let asked = false;
    const guard = await checkOrphanGuard('darwin', () => {
      asked = true;
      return Promise.resolve(true);
    }, () => true);
    expect(guard).toBe('watchdog');
    expect(asked).toBe(false);
  });

  it('no shell, or Windows: none (only the sweep at the next start)', async () => {
    expect(await checkOrphanGuard('linux', () => Promise.resolve(false), () => false)).toBe('none');
    expect(await checkOrphanGuard('win32', () => Promise.resolve(true), () => true)).toBe('none');
  });

  it('under the parent-death signal, setpriv runs ffmpeg itself (exec: the pid stays ffmpeg\'s); otherwise ffmpeg is run as is', () => {
    expect(guardedCommand('pdeathsig', '/usr/bin/ffmpeg', ['-i', 'x'])).toEqual({ command: 'setpriv', args: ['--pdeathsig', 'KILL', '--', '/usr/bin/ffmpeg', '-i', 'x'] });
    expect(guardedCommand('watchdog', '/usr/bin/ffmpeg', ['-i', 'x'])).toEqual({ command: '/usr/bin/ffmpeg', args: ['-i', 'x'] });
    expect(guardedCommand('none', 'ffmpeg', [])).toEqual({ command: 'ffmpeg', args: [] });
  });
});

describe('setpriv that cannot run ffmpeg', () => {
  it('its exit reads as the spawn error Node would give; an ffmpeg that ran and exited 126 or 127 is its own exit', () => {
    expect(setprivExecFailure(127, ['setpriv: failed to execute /opt/my ffmpeg: No such file or directory'], '/opt/my ffmpeg')).toBe('spawn /opt/my ffmpeg ENOENT');
    expect(setprivExecFailure(126, ['setpriv: failed to execute /usr/bin/ffmpeg: Permission denied'], '/usr/bin/ffmpeg')).toBe('spawn /usr/bin/ffmpeg EACCES');
    expect(setprivExecFailure(126, ['setpriv: failed to execute ffmpeg: Text file busy'], 'ffmpeg')).toBe('spawn ffmpeg Text file busy');
    expect(setprivExecFailure(127, ['Conversion failed!'], 'ffmpeg')).toBeUndefined();
    expect(setprivExecFailure(1, ['setpriv: failed to execute ffmpeg: No such file or directory'], 'ffmpeg')).toBeUndefined();
  });
});

describe('a parent killed with SIGKILL takes its child with it', () => {
  it.each([['pdeathsig'], ['watchdog']])('%s', async (guard) => {
    if (guard === 'pdeathsig') expect(await checkOrphanGuard()).toBe('pdeathsig');
    const { pid, sleeper } = await guardedParent(guard);
    // The sleeper runs as the parent's own child: setpriv exec'd it.
    await eventually(() => Promise.resolve(commandLine(sleeper).startsWith('sleep') ? true : undefined), 'sleep running');
    expect(childPids(pid)).toContain(sleeper);
    process.kill(pid, 'SIGKILL');
    await eventually(() => Promise.resolve(running(sleeper) ? undefined : true), 'the sleeper ended with its parent', 5_000);
  });

  it('without a guard the child outlives its parent (what the guards are for)', async () => {
    const { pid, sleeper } = await guardedParent('none');
    process.kill(pid, 'SIGKILL');
    await eventually(() => Promise.resolve(running(pid) ? undefined : true), 'the parent ended');
    expect(running(sleeper)).toBe(true);
  });
});

describe('the watchdog', () => {
  it('told that its child ended, it leaves without killing it', async () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    started.push(pid);
    startWatchdog(pid).release();
    const watchdogs = () => childPids(process.pid).filter((child) => commandLine(child).includes('lock-access-watchdog') && commandLine(child).includes(String(pid)));
    await eventually(() => Promise.resolve(watchdogs().length === 0 ? true : undefined), 'the watchdog gone');
    expect(running(pid)).toBe(true);
  });
});
