// The folders where copied camera views keep their clip's last frame: named for the Homebridge that
// made them, so the next start removes those of a Homebridge killed outright and keeps the others.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { processAlive } from '../../src/util/process-alive.js';
import { makeViewScratch, sweepViewScratch } from '../../src/video/view-scratch.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { keptLog, noMedia } from './ffmpeg-binary.js';

const bases: string[] = [];
function base(): string {
  const dir = mkdtempSync(join(tmpdir(), 'view-scratch-test-'));
  bases.push(dir);
  return dir;
}
afterEach(() => {
  vi.unstubAllEnvs();
  for (const dir of bases.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has ended (a short child, waited for). */
function endedPid(): number {
  const child = spawnSync('true');
  if (processAlive(child.pid)) throw new Error('no ended process to point at');
  return child.pid;
}

describe('the last-frame folders of copied camera views', () => {
  it('a new folder sits in the base and carries this process\'s pid', async () => {
    const where = base();
    const made = await makeViewScratch(where);
    expect(dirname(made)).toBe(where);
    expect(basename(made)).toMatch(new RegExp(`^lock-access-view-${process.pid}-`));
  });

  it('a start removes the folders of processes that are gone, with their frames, and keeps its own, a running one\'s and anything else', async () => {
    const where = base();
    const gone = join(where, `lock-access-view-${endedPid()}-abc123`);
    mkdirSync(gone);
    writeFileSync(join(gone, 'last.jpg'), 'a frame');
    const parent = process.ppid; // runs: another Homebridge on this machine
    for (const name of [`lock-access-view-${parent}-x`, `lock-access-view-${process.pid}-y`, 'lock-access-view-nopid', 'something-else']) mkdirSync(join(where, name));
    expect(await sweepViewScratch(where)).toBe(1);
    expect(existsSync(gone)).toBe(false);
    expect(readdirSync(where).sort()).toEqual([`lock-access-view-${parent}-x`, `lock-access-view-${process.pid}-y`, 'lock-access-view-nopid', 'something-else'].sort());
  });

  it('asks about each pid only once it is in a folder name, and a missing base sweeps nothing', async () => {
    const where = base();
    mkdirSync(join(where, 'lock-access-view-424242-q'));
    const asked: number[] = [];
    expect(await sweepViewScratch(where, (pid) => (asked.push(pid), true))).toBe(0);
    expect(asked).toEqual([424242]);
    expect(await sweepViewScratch(join(where, 'missing'))).toBe(0);
  });

  it('the video room sweeps before it is ready, even without ffmpeg', async () => {
    const where = base();
    const gone = join(where, `lock-access-view-${endedPid()}-left`);
    mkdirSync(gone);
    // The system's temporary folder, as Node finds it.
    vi.stubEnv('TMPDIR', where);
    const room = new VideoRoom({ config: { ffmpegPath: '/nonexistent/ffmpeg', replayMinutes: 60, secureVideo: true }, log: keptLog(), media: noMedia, lookup: () => Promise.resolve('') });
    await room.ready;
    expect(existsSync(gone)).toBe(false);
    const made = await room.scratchFolder();
    expect(dirname(made)).toBe(where);
  });
});
