// HomeKit Secure Video as a home hub sees it: the built plugin in a real Homebridge with the real
// ffmpeg; a paired controller that selects a recording configuration and turns recording on, hears
// the "Recording" trigger after a videoavailable, and downloads the clip over a HomeKit Data Stream
// (test/harness/data-stream.ts). The result is checked with ffmpeg. Faults: no clip ready, a lookup
// answering 404, ffmpeg killed mid-recording, the hub closing early; none leaves an ffmpeg behind.
// After a restart the hub's choices are still there (HAP keeps them with the accessory) and the next
// clip reaches the hub with no set-up again.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DataStreamClient, selectedRecordingConfiguration } from '../harness/data-stream.js';
import { fireAccepted } from '../harness/e2e-session.js';
import { characteristicId, shortType, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { dataStreamSetupId, enableRecording, HUB_720P, makeClip, recordingTriggerId } from '../harness/secure-video-hub.js';
import { FRONT_DOORBELL, processName, VideoBed } from '../harness/video-bed.js';

const { Service: S, Characteristic: C } = hap;
const bed = new VideoBed();
const FFMPEG = bed.ffmpeg;
const work = mkdtempSync(join(tmpdir(), 'hksv-e2e-'));
const { eventually, paired, session } = bed;
let bell: HapAccessoryInfo;
let trigger: Subscription;
let triggerId: string;

/** Pids of ffmpeg processes whose parent is Homebridge. */
const ffmpegChildren = () => bed.ffmpegChildren().filter((pid) => processName(pid) === 'ffmpeg');

/** What ffmpeg says about a file: streams, duration and the key frames' times. */
function probe(file: string): { text: string; duration: number; keyTimes: number[] } {
  const run = spawnSync(FFMPEG, ['-hide_banner', '-i', file, '-map', '0:v:0', '-vf', 'showinfo', '-f', 'null', '-'], { encoding: 'utf8', timeout: 60_000 });
  const text = run.stderr;
  const [, h, m, s] = /Duration: (\d+):(\d+):([\d.]+)/.exec(text) ?? [];
  const keyTimes = [...text.matchAll(/pts_time:([\d.]+).*?iskey:1/g)].map((match) => Number(match[1]));
  return { text, duration: Number(h) * 3600 + Number(m) * 60 + Number(s), keyTimes };
}

async function newClip(dvrId: string): Promise<void> {
  const before = trigger.events.length;
  await fireAccepted(bed.sim, 'video-available', { doorbellId: 'BELL-1', dvrId });
  await eventually(() => Promise.resolve(trigger.events.slice(before).some((e) => e.id === triggerId && (e.value === true || e.value === 1)) ? true : undefined), `the Recording trigger on for ${dvrId}`);
}

async function hub(): Promise<DataStreamClient> {
  const hb = session.hb;
  if (!hb) throw new Error('no Homebridge');
  return DataStreamClient.open({ port: hb.bridgePort, username: hb.username, pin: hb.pin }, paired().pairingData(), dataStreamSetupId(bell));
}

beforeAll(async () => {
  const short = makeClip(FFMPEG, join(work, 'short'), 10, true);
  const long = makeClip(FFMPEG, join(work, 'long'), 40, false);
  await bed.start({
    doorbells: [{ ...FRONT_DOORBELL, motionTimeoutSeconds: 60 }],
    recordings: { 'clip-short': short, 'clip-long': long, 'clip-crash': long, 'clip-after-restart': short },
    // Debug lines too: no address may appear in them either.
    debug: true,
  });
  bell = await paired().accessory('Front Doorbell');
  // The hub's set-up: a recording configuration, recording on, recording audio on (a timed write).
  await enableRecording(paired(), bell);
  triggerId = recordingTriggerId(bell);
  trigger = await paired().subscribe([triggerId]);
}, 120_000);

afterAll(async () => {
  await bed.close();
  rmSync(work, { recursive: true, force: true });
});

describe('HomeKit Secure Video', () => {
  it('the doorbell camera records: recording services, and its trigger is the "Recording" sensor, not the doorbell\'s Motion', () => {
    for (const type of [S.CameraRecordingManagement.UUID, S.CameraOperatingMode.UUID, S.DataStreamTransportManagement.UUID]) {
      expect(bell.services.some((s) => s.type === shortType(type))).toBe(true);
    }
    expect(() => characteristicId(bell, S.MotionSensor.UUID, C.MotionDetected.UUID, 'Front Doorbell Motion')).not.toThrow();
  });

  it('after videoavailable the hub downloads the clip: init first, ~4-s fragments of H.264 at the selected size with AAC, the last marked last', async () => {
    await newClip('clip-short');
    const client = await hub();
    try {
      const { packets, end } = await client.record({ reason: 'motion' });
      expect(end).toEqual({ how: 'endOfStream' });
      expect(packets[0]?.dataType).toBe('mediaInitialization');
      expect(packets.slice(1).every((p) => p.dataType === 'mediaFragment')).toBe(true);
      expect(packets.map((p) => p.last)).toEqual([...packets.slice(1).map(() => false), true]);
      // How soon the first fragment comes (HAP allows 5 s, the goal is 3) is measured by the bench,
      // not here: on a busy machine the clock says more about the load than about the plugin.
      const file = join(work, 'short.mp4');
      writeFileSync(file, Buffer.concat(packets.map((p) => p.data)));
      const { text, duration, keyTimes } = probe(file);
      expect(text).toMatch(/Video: h264 \(Main\).*1280x720/);
      expect(text).toMatch(/Audio: aac \(LC\)/);
      expect(duration).toBeGreaterThan(9.5);
      expect(duration).toBeLessThan(10.6);
      // One key frame at each fragment's start, 4 s apart: 10 s make fragments of 4, 4 and 2 s.
      expect(packets).toHaveLength(1 + 3);
      expect(keyTimes.map((t) => Math.round(t))).toEqual([0, 4, 8]);
    } finally {
      await client.close();
    }
    await eventually(() => Promise.resolve(trigger.events.at(-1)?.value === false || trigger.events.at(-1)?.value === 0 ? true : undefined), 'the Recording trigger off after the clip was sent');
    await session.hb?.waitForLog(/Front Doorbell: Secure Video clip sent to the home hub \(3 fragments\)/);
  });

  it('a request with no clip ready ends cleanly with a log line', async () => {
    const client = await hub();
    try {
      const { packets, end } = await client.record();
      expect(packets).toEqual([]);
      expect(end).toEqual({ how: 'closed', reason: hap.HDSProtocolSpecificErrorReason.CANCELLED });
    } finally {
      await client.close();
    }
    await session.hb?.waitForLog(/Front Doorbell: the home hub asked for a Secure Video clip, but no recording is ready yet; nothing is sent/);
  });

  it('a lookup answering 404 ends the recording cleanly with a warning that names no address', async () => {
    // The simulator's video event lookup answers 404 for this recording.
    await newClip('lookup-404-hksv');
    const client = await hub();
    try {
      const { packets, end } = await client.record();
      expect(packets).toEqual([]);
      expect(end).toEqual({ how: 'closed', reason: hap.HDSProtocolSpecificErrorReason.UNEXPECTED_FAILURE });
    } finally {
      await client.close();
    }
    const line = await session.hb?.waitForLog(/Front Doorbell: the Secure Video clip was not sent: the recording could not be looked up/);
    expect(line).not.toMatch(/m3u8|\/hls\/|videoevent\?/);
  });

  it('the hub closing the stream early ends ffmpeg within 2 s', async () => {
    await newClip('clip-long');
    const client = await hub();
    try {
      let atClose: number[] = [];
      const { packets, end } = await client.record({
        closeAfter: 2,
        beforeClose: () => {
          atClose = ffmpegChildren();
        },
      });
      expect(end).toEqual({ how: 'closed', reason: 0 });
      expect(packets).toHaveLength(2);
      // 40 s of 720p take ffmpeg several seconds: it is still at work when the hub closes.
      expect(atClose).toHaveLength(1);
      await eventually(() => Promise.resolve(ffmpegChildren().length === 0 ? true : undefined), 'no ffmpeg left after the hub closed', 2_000);
    } finally {
      await client.close();
    }
  });

  it('ffmpeg killed mid-recording: the recording ends cleanly with a log line, nothing is left running, Homebridge goes on', async () => {
    await newClip('clip-crash');
    const client = await hub();
    try {
      const killed: number[] = [];
      const recording = client.record();
      // As soon as the initialization segment arrives, ffmpeg is at work on the first fragment.
      await client.next((m) => m.protocol === 'dataSend' && m.topic === 'data', 'the first data of the recording');
      for (const pid of ffmpegChildren()) {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
      expect(killed).toHaveLength(1);
      const { end, packets } = await recording;
      // Either nothing followed the initialization segment (closed with a failure), or the fragments
      // made before the crash went out and the last of them was marked last.
      if (end.how === 'endOfStream') expect(packets.at(-1)?.last).toBe(true);
      else expect(end).toEqual({ how: 'closed', reason: hap.HDSProtocolSpecificErrorReason.UNEXPECTED_FAILURE });
    } finally {
      await client.close();
    }
    await session.hb?.waitForLog(/Front Doorbell: the Secure Video clip was (not sent|cut short).*ffmpeg was ended by SIGKILL/);
    expect(ffmpegChildren()).toEqual([]);
    expect(session.hb?.running).toBe(true);
    // Debug lines included: no playlist or segment address, no signed link, no unhandled rejection.
    expect(session.hb?.logs.join('\n')).not.toMatch(/Unhandled|unhandledRejection|\.m3u8|\/hls\/|SIM-SECRET-SIGNATURE/);
  });

  // Homebridge 2.0 once lost them (homebridge#3928): clips stopped after a restart until the hub
  // rebooted. The hub here writes nothing after the restart, as a real one that set recording up.
  it('after a restart (same storage, same pairing) the hub\'s choices are still there and the next clip reaches the hub without any set-up again', async () => {
    await trigger.close();
    await bed.restart();
    await paired().reconnect();
    bell = await eventually(() => paired().accessory('Front Doorbell'), 'the doorbell after the restart');
    const id = (characteristic: string) => characteristicId(bell, S.CameraRecordingManagement.UUID, characteristic);
    const value = async (characteristic: string) => (await paired().readOne(id(characteristic))).value;
    // The camera is set up once ffmpeg has been checked, a moment after the start.
    await eventually(async () => ((await value(C.Active.UUID)) === 1 ? true : undefined), 'recording still on after the restart');
    expect(await value(C.SelectedCameraRecordingConfiguration.UUID)).toBe(selectedRecordingConfiguration(HUB_720P));
    expect(await value(C.RecordingAudioActive.UUID)).toBe(1);
    trigger = await paired().subscribe([triggerId]);
    await newClip('clip-after-restart');
    const client = await hub();
    try {
      const { packets, end } = await client.record();
      expect(end).toEqual({ how: 'endOfStream' });
      expect(packets.map((p) => p.dataType)).toEqual(['mediaInitialization', 'mediaFragment', 'mediaFragment', 'mediaFragment']);
      expect(packets.at(-1)?.last).toBe(true);
    } finally {
      await client.close();
    }
    await session.hb?.waitForLog(/Front Doorbell: Secure Video clip sent to the home hub \(3 fragments\)/);
    expect(session.hb?.logs.join('\n')).not.toMatch(/has not chosen a recording format/);
  });
});
