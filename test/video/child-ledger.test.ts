// The ledger of running ffmpeg children and the start-up sweep, with a stored file and processes
// that the test describes: the sweep ends exactly the processes the last run left (same pid, start
// time and program), never a pid taken since by another process; it starts a new ledger; a damaged
// or unwritable file costs a debug line, never a throw. The system reader is checked against this
// very process.
import { spawn } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { ChildLedger, systemProcesses, type LedgerStore, type ProcessFacts, type ProcessReader } from '../../src/video/child-ledger.js';
import { running } from '../harness/video-bed.js';
import { keptLog } from './ffmpeg-binary.js';

function store(text?: string): LedgerStore & { writes: unknown[]; fail: boolean } {
  const saved = {
    writes: [] as unknown[],
    fail: false,
    read: () => Promise.resolve(text),
    write: (value: unknown) => {
      if (saved.fail) return Promise.reject(new Error('EACCES: permission denied'));
      saved.writes.push(value);
      text = JSON.stringify(value);
      return Promise.resolve();
    },
  };
  return saved;
}

function machine(table: Record<number, ProcessFacts>): ProcessReader & { killed: number[] } {
  const killed: number[] = [];
  return {
    killed,
    facts: (pid) => Promise.resolve(table[pid]),
    kill: (pid) => {
      killed.push(pid);
    },
  };
}

const left = (children: { pid: number; start: string; name: string }[]) => JSON.stringify({ children });

describe('the start-up sweep', () => {
  it('ends the ffmpeg the last run left running and nothing else, says so once, and starts a new ledger', async () => {
    const file = store(left([
      { pid: 100, start: 'boot:500', name: 'ffmpeg' },
      { pid: 101, start: 'boot:600', name: 'ffmpeg' },
      { pid: 102, start: 'boot:700', name: 'ffmpeg' },
      { pid: 103, start: 'boot:800', name: 'ffmpeg' },
    ]));
    const processes = machine({
      // Still that ffmpeg.
      100: { start: 'boot:500', name: 'ffmpeg' },
      // The pid was taken by another process since (a later start).
      101: { start: 'boot:9000', name: 'ffmpeg' },
      // Same start, another program: not ours either.
      102: { start: 'boot:700', name: 'node' },
      // 103 has ended.
    });
    const log = keptLog();
    expect(await new ChildLedger(file, log, processes).sweep()).toBe(1);
    expect(processes.killed).toEqual([100]);
    expect(log.lines.filter((line) => line.level === 'info').map((line) => line.text)).toEqual(['Ended an ffmpeg left running by the last run, which ended without a shutdown.']);
    expect(file.writes).toEqual([{ children: [] }]);
  });

  it('a program name longer than the kernel keeps (15 characters) still matches', async () => {
    const processes = machine({ 7: { start: 's', name: 'ffmpeg-for-home' } });
    expect(await new ChildLedger(store(left([{ pid: 7, start: 's', name: 'ffmpeg-for-homebridge' }])), keptLog(), processes).sweep()).toBe(1);
  });

  it.each([['not JSON', '{'], ['another shape', '{"children":[{"pid":"x"}]}']])('a damaged ledger (%s): nothing is ended, no throw, a debug line at most', async (_what, text) => {
    const processes = machine({ 1: { start: 's', name: 'ffmpeg' } });
    const log = keptLog();
    expect(await new ChildLedger(store(text), log, processes).sweep()).toBe(0);
    expect(processes.killed).toEqual([]);
    expect(log.lines.filter((line) => line.level !== 'debug')).toEqual([]);
  });

  it('no ledger yet: nothing to do', async () => {
    const file = store();
    expect(await new ChildLedger(file, keptLog(), machine({})).sweep()).toBe(0);
    expect(file.writes).toEqual([{ children: [] }]);
  });
});

describe('the ledger follows the running children', () => {
  it('a child is written down when it starts (pid, start, program name) and struck out when it ends', async () => {
    const file = store();
    const ledger = new ChildLedger(file, keptLog(), machine({ 42: { start: 'boot:1', name: 'setpriv' } }));
    await ledger.add(42, '/usr/local/bin/ffmpeg');
    ledger.remove(42);
    await ledger.settled();
    // The program's name is ffmpeg's even while setpriv has not yet become it.
    expect(file.writes).toEqual([{ children: [{ pid: 42, start: 'boot:1', name: 'ffmpeg' }] }, { children: [] }]);
  });

  it('a child that ended before it could be read is not written down', async () => {
    const file = store();
    const ledger = new ChildLedger(file, keptLog(), machine({}));
    await ledger.add(42, 'ffmpeg');
    await ledger.settled();
    expect(file.writes).toEqual([]);
  });

  it('a ledger that cannot be written: one debug line, no throw', async () => {
    const file = store();
    file.fail = true;
    const log = keptLog();
    const ledger = new ChildLedger(file, log, machine({ 1: { start: 'a', name: 'ffmpeg' }, 2: { start: 'b', name: 'ffmpeg' } }));
    await ledger.add(1, 'ffmpeg');
    await ledger.add(2, 'ffmpeg');
    await ledger.settled();
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]?.level).toBe('debug');
    expect(log.lines[0]?.text).toMatch(/could not be written \(EACCES/);
  });
});

describe('the system reader', () => {
  it('reads a running process (its program and a start token that does not change) and nothing for one that ended', async () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = sleeper.pid ?? 0;
    try {
      const first = await systemProcesses.facts(pid);
      expect(first?.name).toBe('sleep');
      expect(first?.start).toMatch(/.+:\d+$/);
      expect(await systemProcesses.facts(pid)).toEqual(first);
      expect(await systemProcesses.facts(process.pid)).not.toEqual(first);
      systemProcesses.kill(pid);
      await new Promise((resolve) => sleeper.once('exit', resolve));
      expect(running(pid)).toBe(false);
      expect(await systemProcesses.facts(pid)).toBeUndefined();
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});
