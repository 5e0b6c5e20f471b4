// Account care end to end (refusals said in words, stills retried): the built plugin in a real Homebridge against
// the simulator, read through a real paired HomeKit controller. A wrong clock refuses every
// callback and says so (log, status file) while HomeKit keeps its state; a doorbell still that
// fails for a moment arrives after the retries, and one redirected to another scheme is refused.
// Design sections 6 ("Rejections are never silent") and 7 (doorbell still).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { characteristicId, HapController, type HapAccessoryInfo } from '../harness/hap.js';
import { freePort, REPO_ROOT, type RunningHomebridge } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { E2eSession, eventually as pollUntil } from '../harness/e2e-session.js';

const { Service: S, Characteristic: C } = hap;
const TEN_MINUTES_MS = 10 * 60_000;

let sim: Simulator;
let hb: RunningHomebridge | undefined;
let controller: HapController | undefined;
const session = new E2eSession();

beforeAll(async () => {
  sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  const listenPort = await freePort();
  hb = await session.start({
    platforms: [simPlatformConfig(sim, listenPort, {
      locks: [{ id: 'LOCK-1', name: 'Front Door' }],
      // the default 30 s of motion: room for the whole 1, 3, 9 s back-off
      doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
      discoverDevices: false,
      userWebhook: false,
      refreshStateOnStart: false,
    })],
  });
  controller = await session.pair(3, 'the bridge and two accessories');
  await eventually(() => Promise.resolve(sim.registrations().length >= 2 ? true : undefined), 'registrations');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

/** Polls until the probe gives a value (the plugin works after acknowledging callbacks); not a timing assertion. */
/** The shared poller, with this file's Homebridge log tail in its timeout message. */
const eventually = <T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> => pollUntil(probe, what, timeoutMs, () => hb?.logs ?? []);

function paired(): HapController {
  if (!controller) throw new Error('not paired');
  return controller;
}

const accessory = (name: string): Promise<HapAccessoryInfo> => eventually(() => paired().accessory(name), name);
const logLines = (pattern: RegExp): string[] => hb?.logs.filter((line) => pattern.test(line)) ?? [];

async function expectValue(id: string, expected: unknown, what: string): Promise<void> {
  await eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${what} = ${String(expected)}`);
}

interface ReceiverStatus {
  rejected?: Record<string, number>;
  lastRejection?: { at: number; reason: string; clockOffsetMs?: number };
}

async function receiverStatus(): Promise<ReceiverStatus | undefined> {
  try {
    const status = JSON.parse(await readFile(join(hb?.storagePath ?? '', 'lock-access', 'status.json'), 'utf8')) as { receiver?: ReceiverStatus };
    return status.receiver;
  } catch {
    // not written yet, or being replaced
    return undefined;
  }
}

describe('rejections are never silent (a wrong clock)', () => {
  it('with the signature clock 10 min behind, every callback is refused with 401: one warning with the offset and time-sync advice, the count in status.json, HomeKit unchanged; with the clock right a callback applies', async () => {
    const current = characteristicId(await accessory('Front Door'), S.LockMechanism.UUID, C.LockCurrentState.UUID);
    await sim.fire('lock', { lockId: 'LOCK-1', by: 'manual' });
    await expectValue(current, 1, 'locked by hand');

    const clockWarning = /Webhook callbacks are refused because this machine's clock is/;
    expect(logLines(clockWarning)).toEqual([]);
    sim.faults.signatureSkewMs = -TEN_MINUTES_MS;
    try {
      const statuses: (number | undefined)[] = [];
      for (const event of ['unlock', 'lock', 'unlock']) {
        statuses.push(...(await sim.fire(event, { lockId: 'LOCK-1', by: 'manual' })).map((r) => r.status));
      }
      expect(statuses).toEqual([401, 401, 401]);
    } finally {
      sim.faults.signatureSkewMs = 0;
    }

    // The status file shows the refusals within seconds, and how far this machine's clock is off.
    const receiver = await eventually(async () => {
      const status = await receiverStatus();
      return (status?.rejected?.['stale-timestamp'] ?? 0) >= 3 ? status : undefined;
    }, 'three stale-timestamp rejections in status.json');
    expect(receiver.rejected?.['stale-timestamp']).toBe(3);
    expect(receiver.lastRejection?.reason).toBe('stale-timestamp');
    // this machine minus the signature's t: +10 min, plus the delivery's way (t has whole seconds)
    expect(Math.abs((receiver.lastRejection?.clockOffsetMs ?? 0) - TEN_MINUTES_MS)).toBeLessThan(60_000);

    // One warning for the three refusals, with the measured offset and what to do.
    const warnings = await eventually(() => Promise.resolve(logLines(clockWarning).length > 0 ? logLines(clockWarning) : undefined), 'the clock warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/clock is (9|10) min \d+ s ahead of the time in their signatures/);
    expect(warnings[0]).toContain('time sync');
    expect(warnings[0]).not.toContain(sim.account.apiKey);

    // Nothing of the refused callbacks reached HomeKit.
    expect((await paired().readOne(current)).value).toBe(1);

    // The clock set right: the next callback applies.
    const results = await sim.fire('unlock', { lockId: 'LOCK-1', by: 'manual' });
    expect(results.map((r) => r.status)).toEqual([200]);
    await expectValue(current, 0, 'unlocked by hand once the clock is right');
    expect(logLines(clockWarning)).toHaveLength(1);
  });
});

describe('the doorbell still', () => {
  const still = (): Promise<Buffer> => readFile(join(REPO_ROOT, 'test', 'sim', 'assets', 'motion.jpg'));
  const blank = (): Promise<Buffer> => readFile(join(REPO_ROOT, 'dist', 'assets', 'placeholder.jpg'));
  const pictureFailure = /Front Doorbell: could not load the motion picture/;

  it('a still that fails twice with 503 arrives after the retries: the placeholder meanwhile, then the real picture, no warning', async () => {
    const bell = await accessory('Front Doorbell');
    const path = '/media/flaky/BELL-1/account-care-1.jpg?fail=2';
    await sim.fire('motion', { doorbellId: 'BELL-1', imageUrl: `${sim.url}${path}` });
    await eventually(() => Promise.resolve(sim.imageRequests(path) >= 1 ? true : undefined), 'the first attempt at the still');
    const early = await paired().image(bell.aid, 640, 360);
    // Before the third request reached the image server, the picture cannot be the still.
    if (sim.imageRequests(path) < 3) expect(early.equals(await blank())).toBe(true);

    const expected = await still();
    await eventually(async () => ((await paired().image(bell.aid, 640, 360)).equals(expected) ? true : undefined), 'the real still as the snapshot', 30_000);
    expect(sim.imageRequests(path)).toBe(3);
    expect(logLines(pictureFailure)).toEqual([]);
  });

  it('a still redirected from http to https is refused at once: the placeholder stays, one log line without the address', async () => {
    const bell = await accessory('Front Doorbell');
    const path = '/media/redirect/BELL-1/account-care-2.jpg';
    await sim.fire('motion', { doorbellId: 'BELL-1', imageUrl: `${sim.url}${path}` });
    const line = await hb?.waitForLog(pictureFailure);
    expect(line).toContain('redirected from http: to https:');
    expect(line).toContain('Apple Home shows a placeholder');
    expect(line).not.toContain('127.0.0.1');
    expect(line).not.toContain('/media/');
    expect((await paired().image(bell.aid, 640, 360)).equals(await blank())).toBe(true);
    // not tried again (no transient failure), and the other scheme never asked
    expect(sim.imageRequests(path)).toBe(1);
    expect(sim.imageRequests('/media/motion/BELL-1/account-care-2.jpg')).toBe(0);
    expect(logLines(pictureFailure)).toHaveLength(1);
  });
});
