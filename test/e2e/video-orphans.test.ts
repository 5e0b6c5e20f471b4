// No ffmpeg outlives Homebridge, even one killed with SIGKILL: a real Homebridge with the real ffmpeg
// running a camera view and a Secure Video recording at once is killed, and /proc is polled until
// none of its ffmpeg runs (within 2 s). Three machines: Linux with setpriv (the parent-death
// signal), one without it (a stand-in setpriv that fails: the watchdog), and one where neither acts
// (a stand-in setpriv that runs ffmpeg without the signal): there the leftover ffmpeg is ended by the
// next start. Whatever happens, the file ends every ffmpeg it saw.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CHILD_LEDGER_FILE } from '../../src/video/child-ledger.js';
import { DataStreamClient } from '../harness/data-stream.js';
import { dataStreamSetupId, enableRecording, makeClip } from '../harness/secure-video-hub.js';
import { FRONT_DOORBELL, processName, running, VideoBed } from '../harness/video-bed.js';

const bed = new VideoBed();
const { eventually, paired, session } = bed;
const work = mkdtempSync(join(tmpdir(), 'la-video-orphans-'));
/** Every ffmpeg of Homebridge this file saw: ended in afterAll whatever happened. */
const seen = new Set<number>();
const hubs: DataStreamClient[] = [];
let clips = 0;

/** A folder with a stand-in `setpriv` (put first on Homebridge's PATH). */
function fakeSetpriv(name: string, body: string): Record<string, string> {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'setpriv'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, 'setpriv'), 0o755);
  return { PATH: `${dir}:${process.env.PATH ?? ''}` };
}

const ffmpegOfHomebridge = () => bed.ffmpegChildren().filter((pid) => processName(pid) === 'ffmpeg');

/** A camera view and a Secure Video recording running at once; answers their two ffmpeg. */
async function bothRunning(): Promise<number[]> {
  // The camera streams once ffmpeg has been checked, a moment after the start.
  await session.hb?.waitForLog(/Doorbell video uses ffmpeg/);
  await paired().reconnect();
  await bed.frames(await bed.view(await bed.streamOf(FRONT_DOORBELL.name)), 5);
  await bed.recording(`clip-long-${clips++}`, FRONT_DOORBELL);
  const hb = session.hb;
  if (!hb) throw new Error('no Homebridge');
  const bell = await paired().accessory(FRONT_DOORBELL.name);
  const hub = await DataStreamClient.open({ port: hb.bridgePort, username: hb.username, pin: hb.pin }, paired().pairingData(), dataStreamSetupId(bell));
  hubs.push(hub);
  // Ends with an error once Homebridge is killed: that is the point.
  hub.record({ timeoutMs: 120_000 }).catch(() => undefined);
  await hub.next((m) => m.protocol === 'dataSend' && m.topic === 'data', 'the first data of the recording', 20_000);
  const pids = await eventually(() => Promise.resolve(ffmpegOfHomebridge().length === 2 ? ffmpegOfHomebridge() : undefined), 'two ffmpeg running');
  for (const pid of pids) seen.add(pid);
  // The next start ends what the ledger names: a kill before the plugin has written it down (a
  // moment after the spawn, longer on a busy machine) leaves nothing to find.
  const ledger = join(hb.storagePath, 'lock-access', CHILD_LEDGER_FILE);
  const listed = (): number[] => {
    try {
      return (JSON.parse(readFileSync(ledger, 'utf8')) as { children: { pid: number }[] }).children.map((child) => child.pid);
    } catch {
      return [];
    }
  };
  await eventually(() => Promise.resolve(pids.every((pid) => listed().includes(pid)) ? true : undefined), 'both ffmpeg in the ledger');
  return pids;
}

/** SIGKILL to Homebridge; resolves once it has gone. */
async function killHomebridge(): Promise<void> {
  const hb = session.hb;
  if (!hb) throw new Error('no Homebridge');
  hb.child.kill('SIGKILL');
  await eventually(() => Promise.resolve(hb.running ? undefined : true), 'Homebridge gone');
}

/** The viewers and hubs of a killed Homebridge cannot end cleanly; they are let go. */
async function forget(): Promise<void> {
  await bed.endViewers();
  for (const hub of hubs.splice(0)) await hub.close().catch(() => undefined);
}

const gone = (pids: number[], timeoutMs: number) => eventually(() => Promise.resolve(pids.every((pid) => !running(pid)) ? true : undefined), 'no ffmpeg of the killed Homebridge running', timeoutMs);

beforeAll(async () => {
  const long = makeClip(bed.ffmpeg, join(work, 'long'), 40, false);
  const recordings = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`clip-long-${i}`, long]));
  await bed.start({ doorbells: [{ ...FRONT_DOORBELL, motionTimeoutSeconds: 60 }], recordings, debug: true });
  await enableRecording(paired(), await paired().accessory(FRONT_DOORBELL.name));
}, 120_000);

afterAll(async () => {
  try {
    await forget();
    await bed.close();
  } finally {
    for (const pid of seen) {
      if (running(pid) && processName(pid) === 'ffmpeg') process.kill(pid, 'SIGKILL');
    }
    rmSync(work, { recursive: true, force: true });
  }
});

describe('Homebridge killed with SIGKILL while a camera view and a Secure Video recording run', () => {
  it.each([
    ['Linux with setpriv: the parent-death signal', /each ends with Homebridge by the parent-death signal/, undefined],
    ['without setpriv: the watchdog', /each ends with Homebridge by a watchdog/, () => fakeSetpriv('no-setpriv', 'exit 1')],
  ])('%s ends both ffmpeg within 2 s', async (_guard, said, environment) => {
    if (environment) await bed.restart(environment());
    await session.hb?.waitForLog(said);
    const pids = await bothRunning();
    await killHomebridge();
    await gone(pids, 2_000);
    await forget();
  });

  it('when neither acts, the next start ends the ffmpeg left running', async () => {
    // A setpriv that runs the program without the signal: nothing ends ffmpeg with Homebridge.
    await bed.restart(fakeSetpriv('setpriv-without-signal', 'while [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"'));
    const pids = await bothRunning();
    // Held still, as a hung ffmpeg would be: left to themselves they might end on their own once
    // the plugin's relays die with Homebridge (a broken pipe, a segment that cannot be fetched).
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    await killHomebridge();
    const left = pids.filter(running);
    expect(left).toEqual(pids);
    await bed.restart({});
    await session.hb?.waitForLog(/Ended (an ffmpeg|\d+ ffmpeg processes) left running by the last run, which ended without a shutdown/);
    await gone(left, 2_000);
    // The viewer's stop goes to the new Homebridge (which knows nothing of it) on a new connection.
    await paired().reconnect();
    await forget();
  }, 90_000);
});
