// The process owner with real short-lived children: a stop ends a child (SIGTERM, then SIGKILL for
// one that ignores it), shutdown ends them all and refuses new ones, error output is kept with
// addresses cut to their host, and the command line is never logged.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { ChildLedger } from '../../src/video/child-ledger.js';
import { describeExit, FfmpegProcesses, STOP_GRACE_MS, type ChildTies } from '../../src/video/ffmpeg-processes.js';
import { childPids } from '../harness/camera-viewer.js';
import { eventually } from '../harness/e2e-session.js';
import { commandLine, processName } from '../harness/video-bed.js';
import { keptLog } from './ffmpeg-binary.js';

function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'la-child-'));
  const file = join(dir, 'ffmpeg');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const owners: FfmpegProcesses[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(owners.splice(0).map((owner) => owner.stopAll()));
});

/** A child here needs no tie to this test process beyond its own stop, unless a test asks for one. */
const UNTIED: ChildTies = { guard: 'none' };

function owner(body: string, ties: ChildTies = UNTIED) {
  const log = keptLog();
  const processes = new FfmpegProcesses(script(body), log, ties);
  owners.push(processes);
  return { processes, log };
}

describe('every ffmpeg is a child the plugin owns', () => {
  it('a child that exits by itself reports its code and its last error lines, addresses cut to their host', async () => {
    const { processes, log } = owner('echo "Opening https://cdn.example.com/rec/seg1.ts?sig=SECRET for reading" >&2; echo "Server returned 404 Not Found" >&2; exit 1');
    const seen: string[] = [];
    const run = processes.spawn(['-i', 'https://cdn.example.com/rec/p.m3u8?sig=SECRET', '-f', 'null', '-'], { label: 'test view', onErrorLine: (line) => seen.push(line) });
    const exit = await run.exited;
    expect(exit).toMatchObject({ code: 1, stopped: false });
    expect(seen).toEqual(['Opening https://cdn.example.com for reading', 'Server returned 404 Not Found']);
    expect(describeExit(exit)).toBe('ffmpeg exited with code 1: Opening https://cdn.example.com for reading / Server returned 404 Not Found');
    expect(processes.count).toBe(0);
    // Neither the address nor the command line reaches the log, debug included.
    expect(log.all()).not.toMatch(/SECRET|m3u8|-f null|-i /);
  });

  it('a stop ends a running child with SIGTERM', async () => {
    const { processes } = owner('exec sleep 30');
    const run = processes.spawn([], { label: 'test view' });
    expect(run.running).toBe(true);
    const exit = await run.stop();
    expect(exit).toMatchObject({ stopped: true, signal: 'SIGTERM' });
    expect(alive(run.pid)).toBe(false);
    expect(processes.count).toBe(0);
  });

  it(`a child that ignores SIGTERM is killed ${STOP_GRACE_MS} ms later`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { processes } = owner("trap '' TERM; echo ready >&2; while :; do sleep 0.05; done");
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const run = processes.spawn([], {
      label: 'stubborn',
      onErrorLine: () => {
        ready();
      },
    });
    await started;
    const stopped = run.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(STOP_GRACE_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const exit = await stopped;
    expect(exit.signal).toBe('SIGKILL');
    expect(alive(run.pid)).toBe(false);
  });

  it('shutdown ends every child and refuses new ones', async () => {
    const { processes } = owner('exec sleep 30');
    const runs = [processes.spawn([], { label: 'a' }), processes.spawn([], { label: 'b' })];
    expect(processes.count).toBe(2);
    await processes.stopAll();
    expect(runs.map((run) => alive(run.pid))).toEqual([false, false]);
    const late = processes.spawn([], { label: 'late' });
    expect(await late.exited).toMatchObject({ stopped: true, spawnError: 'the plugin is shutting down' });
  });

  it('a program that cannot be started ends the run with a reason, never a throw', async () => {
    const processes = new FfmpegProcesses('/nonexistent/ffmpeg', keptLog(), UNTIED);
    owners.push(processes);
    const exit = await processes.spawn([], { label: 'x' }).exited;
    expect(describeExit(exit)).toMatch(/^ffmpeg could not be started \(.*ENOENT/);
  });
});

describe('what ties each child to Homebridge beyond its stop', () => {
  it('under the parent-death signal setpriv becomes the program: the run\'s pid is its own, and a stop still ends it with SIGTERM', async () => {
    const { processes } = owner('exec sleep 30', { guard: 'pdeathsig' });
    const run = processes.spawn([], { label: 'guarded' });
    const pid = run.pid ?? 0;
    await eventually(() => Promise.resolve(processName(pid) === 'sleep' ? true : undefined), 'setpriv gave way to the program');
    expect(childPids(process.pid)).toContain(pid);
    expect(await run.stop()).toMatchObject({ stopped: true, signal: 'SIGTERM' });
  });

  it('under the parent-death signal, a program that cannot be run reads as without it: could not be started (ENOENT), not an exit code', async () => {
    const processes = new FfmpegProcesses('/nonexistent/ffmpeg', keptLog(), { guard: 'pdeathsig' });
    owners.push(processes);
    const exit = await processes.spawn([], { label: 'x' }).exited;
    expect(exit).toMatchObject({ code: null, signal: null, errorOutput: '' });
    expect(describeExit(exit)).toBe('ffmpeg could not be started (spawn /nonexistent/ffmpeg ENOENT)');
  });

  it('under the watchdog: one watchdog per child, gone once the child ended, and the exit is the child\'s own', async () => {
    const { processes } = owner('echo started >&2; exit 3', { guard: 'watchdog' });
    const run = processes.spawn([], { label: 'watched' });
    const pid = run.pid ?? 0;
    const watchdogs = () => childPids(process.pid).filter((child) => commandLine(child).includes('lock-access-watchdog') && commandLine(child).includes(String(pid)));
    expect(await run.exited).toMatchObject({ code: 3, stopped: false, errorOutput: 'started' });
    await eventually(() => Promise.resolve(watchdogs().length === 0 ? true : undefined), 'the watchdog gone');
  });

  it('the ledger holds a running child (its program\'s name) and is empty once it ended', async () => {
    const writes: { children: { pid: number; name: string }[] }[] = [];
    const ledger = new ChildLedger({ read: () => Promise.resolve(undefined), write: (value) => Promise.resolve(void writes.push(value as (typeof writes)[number])) }, keptLog());
    const { processes } = owner('exec sleep 30', { guard: 'none', ledger });
    const run = processes.spawn([], { label: 'listed' });
    await eventually(() => Promise.resolve(writes.length > 0 ? true : undefined), 'the child written down');
    expect(writes[0]?.children).toEqual([expect.objectContaining({ pid: run.pid, name: 'ffmpeg' })]);
    await processes.stopAll();
    expect(writes.at(-1)).toEqual({ children: [] });
  });
});
