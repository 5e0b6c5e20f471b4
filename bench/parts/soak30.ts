// Part `soak30`: does memory stay flat and does nothing pile up over half an hour of a busy home?
// Homebridge with the plugin (100 locks, 20 doorbells, doorbell video with the real ffmpeg) and a
// paired controller, for 30 minutes (3 with --quick; BENCH_SOAK30_MINUTES to change):
//   - callbacks at 10 a second, mixed: lock, door, battery, doorbell press, motion, recording available;
//   - a bridge flapping (offline, online) on one of four locks every 15 s;
//   - a camera view every minute (a real HAP camera stream through ffmpeg, watched for 8 s);
//   - a Secure Video clip every 5 minutes (the hub downloads it over a HomeKit Data Stream).
// Homebridge starts as a restart finds it: the event log full (50 entries per device), so the
// soak measures the steady state rather than the rings' one-time fill of a first run
// (BENCH_SOAK30_EVENT_LOG=empty starts with none, as a first run does).
// Every minute the process's memory is read: RSS as `ps` shows it, then RSS and JS heap after a
// full, memory-pressure collection (which a leak survives and V8's spare pages do not). Goals: RSS
// and heap at the end within 2 MiB of the 5-minute mark (each the median of three minutes' readings), no ffmpeg left, every device's HomeKit
// state that of its last event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { childPids, streamServices } from '../../test/harness/camera-viewer.js';
import { HapController, shortType, type HapAccessoryInfo } from '../../test/harness/hap.js';
import { freePort, startHomebridge } from '../../test/harness/homebridge.js';
import { processName } from '../../test/harness/processes.js';
import { enableRecording, makeClip, recordingTriggerId } from '../../test/harness/secure-video-hub.js';
import { startSimulator } from '../../test/sim/index.js';
import { testFfmpeg } from '../../test/video/ffmpeg-binary.js';
import { addFleetToSim, oursPlatform, pluginOverride, waitForRegistrations } from '../lib/env.js';
import { fleet } from '../lib/fleet.js';
import { writeFullEventLog } from '../lib/full-event-log.js';
import { heapSnapshot } from '../lib/heap-snapshot.js';
import { rssKiB, rssPartsKiB, SETTLE_ENV, settledRssMiB } from '../lib/rss.js';
import { SoakTraffic } from '../lib/soak-traffic.js';
import { cameraView, secureVideoClip } from '../lib/soak-video.js';
import { median, round } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';

const RATE_PER_SECOND = 10;
const FLAP_EVERY_MS = 15_000;
const VIEW_EVERY_MS = 60_000;
const CLIP_EVERY_MS = 5 * 60_000;
const MARK_MINUTE = 5;
const CLIP_SECONDS = 12;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface MemorySample {
  minute: number;
  /** As `ps` shows it, no collection asked for. */
  psMiB: number;
  /** After a memory-pressure collection. */
  rssMiB: number;
  heapMiB: number;
  /** The JS heap V8 has committed (used and free pages): grows with fragmentation while the heap in use stays. */
  heapTotalMiB: number;
  /** Outside the JS heap, as the process sees it: Buffers and other external memory, V8's compiled code, V8's own malloc. */
  externalMiB: number;
  codeMiB: number;
  mallocMiB: number;
  /** Anonymous resident memory (V8's heaps, malloc) and file-backed (the binary's and libraries' pages). */
  anonMiB: number;
  fileMiB: number;
  /** Anonymous resident memory less V8's resident heap pages: native memory (malloc, thread stacks). */
  outsideV8MiB: number;
}

const TYPE = { lockCurrentState: '1D', contactSensorState: '6A', statusLowBattery: '79', motionDetected: '22', battery: '96', motionSensor: '85', name: '23' };

/** `aid.iid` of the first characteristic of `type`, within services of `serviceType` when given, leaving out the Secure Video trigger. */
function charId(accessory: HapAccessoryInfo | undefined, type: string, serviceType?: string): string | undefined {
  for (const service of accessory?.services ?? []) {
    if (serviceType !== undefined && service.type !== serviceType) continue;
    if (service.characteristics.some((c) => c.type === TYPE.name && typeof c.value === 'string' && c.value.endsWith(' Recording'))) continue;
    const found = service.characteristics.find((c) => c.type === type);
    if (found) return `${found.aid}.${found.iid}`;
  }
  return undefined;
}

export async function runSoak30(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const minutes = Number(process.env.BENCH_SOAK30_MINUTES ?? (options.quick ? 3 : 30));
  const markMinute = Math.min(MARK_MINUTE, Math.max(1, Math.floor(minutes / 3)));
  const ffmpeg = testFfmpeg();
  const f = fleet();
  const camera = f.doorbells[0];
  if (!camera) throw new Error('no doorbell');
  const work = mkdtempSync(join(tmpdir(), 'bench-soak30-'));
  const clip = makeClip(ffmpeg, join(work, 'clip'), CLIP_SECONDS, true);
  const clipIds = Array.from({ length: Math.ceil(minutes / 5) + 2 }, (_, i) => `soak-clip-${i}`);
  const sim = await startSimulator({ port: 0, latencyMs: 0, recordings: Object.fromEntries(clipIds.map((id) => [id, clip])) });
  addFleetToSim(sim, f);
  const port = await freePort();
  const platform = oursPlatform(sim, port, f, {
    people: [],
    doorbells: f.doorbells.map((d) => ({ ...d, motionTimeoutSeconds: d.id === camera.id ? 60 : 5 })),
    video: { ffmpegPath: ffmpeg },
  });
  const storagePath = join(work, 'homebridge');
  const emptyLog = process.env.BENCH_SOAK30_EVENT_LOG === 'empty';
  const logEntries = emptyLog ? 0 : await writeFullEventLog(storagePath, f, sim.url);
  const hb = await startHomebridge({ platforms: [platform], env: SETTLE_ENV, storagePath, ...pluginOverride() });
  let controller: HapController | undefined;
  try {
    await hb.waitForLog(/is running on port/, 180_000);
    await waitForRegistrations(sim, f, 180_000);
    const pid = hb.child.pid ?? 0;
    controller = await HapController.pair({ port: hb.bridgePort, username: hb.username, pin: hb.pin });
    const hap = controller;
    const cameraInfo = await withCamera(hap, camera.name);
    await enableRecording(hap, cameraInfo);
    const trigger = await hap.subscribe([recordingTriggerId(cameraInfo)]);
    const accessories = new Map((await hap.accessories()).map((a) => [a.name, a]));
    let clipNo = 0;
    const nextClipId = () => clipIds[clipNo++] ?? `soak-clip-extra-${clipNo}`;
    const announce = () => sim.fire('video-available', { doorbellId: camera.id, dvrId: nextClipId() });
    const video = { views: 0, viewsOk: 0, clips: 0, clipsOk: 0, errors: [] as string[] };
    // A first clip, so the camera view has a recording to play from the start.
    const clipped = (ok: boolean) => {
      video.clips += 1;
      if (ok) video.clipsOk += 1;
    };
    clipped(await secureVideoClip(hb, hap, cameraInfo, trigger, announce));

    const traffic = new SoakTraffic(sim, f, camera.id);
    const memory: MemorySample[] = [];
    const readMemory = async (minute: number) => {
      const psMiB = round((await rssKiB(pid)) / 1024, 1);
      const rss = await settledRssMiB(pid, { waitMs: 0, samples: 3, gapMs: 200, pressure: true });
      const parts = await rssPartsKiB(pid);
      // The line this signal prints, read from the output itself (the harness keeps only the last lines).
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          hb.child.stdout?.off('data', onData);
          reject(new Error('the process did not tell its memory'));
        }, 60_000);
        let text = '';
        const onData = (chunk: Buffer | string) => {
          text += chunk.toString();
          const found = text.split('\n').find((l) => l.includes('bench-memory {') && l.trimEnd().endsWith('}'));
          if (found === undefined) return;
          clearTimeout(timer);
          hb.child.stdout?.off('data', onData);
          resolve(found);
        };
        hb.child.stdout?.on('data', onData);
        process.kill(pid, 'SIGTTOU');
      });
      const told = JSON.parse(line.slice(line.indexOf('{'))) as { heapUsed: number; heapTotal: number; external: number; codeSpace: number; malloced: number; physical: number };
      const heapUsed = told.heapUsed;
      const mib = (bytes: number) => round(bytes / 1024 / 1024, 2);
      memory.push({ minute, psMiB, rssMiB: rss.mib, heapMiB: mib(heapUsed), heapTotalMiB: mib(told.heapTotal), externalMiB: mib(told.external), codeMiB: mib(told.codeSpace), mallocMiB: mib(told.malloced), anonMiB: round(parts.anon / 1024, 1), fileMiB: round(parts.file / 1024, 1), outsideV8MiB: round(parts.anon / 1024 - mib(told.physical), 2) });
      options.log(`soak30: minute ${minute}: RSS ${psMiB} MiB as ps shows it, ${rss.mib} MiB and JS heap ${fmt(heapUsed / 1024 / 1024, 2)} MiB after a memory-pressure collection`);
      // With BENCH_HEAP_DIR, a heap snapshot at the mark and at the end: bench/heap-summary.ts end mark says what grew.
      if (minute === markMinute || minute === minutes) await heapSnapshot(pid, `minute ${String(minute)}`);
    };
    const side = new Set<Promise<void>>();
    const aside = (what: string, job: () => Promise<void>) => {
      const p = job().catch((error: unknown) => {
        video.errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      });
      side.add(p);
      void p.finally(() => side.delete(p));
    };

    options.log(`soak30: ${minutes} min: ${RATE_PER_SECOND} callbacks/s mixed, a bridge flap every ${FLAP_EVERY_MS / 1000} s, a camera view every minute, a Secure Video clip every 5 min`);
    const t0 = performance.now();
    const at = (ms: number) => t0 + ms;
    let sent = 0;
    let nextFlap = at(FLAP_EVERY_MS);
    // Views at 20 s past each minute, clips 35 s past every fifth: memory is read on the minute, between them.
    let nextView = at(20_000);
    let nextClip = at(CLIP_EVERY_MS + 35_000);
    let nextMinute = 1;
    // Callbacks go on until the last minute's memory has been read, so it is read under the same load as the mark.
    let lastRead: Promise<void> | undefined;
    const final = { done: false };
    while (!final.done) {
      const now = performance.now();
      // Callbacks at a steady rate: as many as are due by now.
      const due = Math.floor(((now - t0) / 1000) * RATE_PER_SECOND);
      for (; sent < due; sent += 1) traffic.one();
      if (now >= nextFlap) {
        traffic.flap();
        nextFlap += FLAP_EVERY_MS;
      }
      if (now >= nextView) {
        nextView += VIEW_EVERY_MS;
        aside('camera view', async () => {
          video.views += 1;
          if (await cameraView(hap, cameraInfo, ffmpeg)) video.viewsOk += 1;
        });
      }
      if (now >= nextClip) {
        nextClip += CLIP_EVERY_MS;
        aside('Secure Video clip', async () => {
          clipped(await secureVideoClip(hb, hap, cameraInfo, trigger, announce));
        });
      }
      if (nextMinute <= minutes && now >= at(nextMinute * 60_000)) {
        const minute = nextMinute;
        nextMinute += 1;
        if (minute === minutes) {
          lastRead = readMemory(minute).finally(() => {
            final.done = true;
          });
          aside('memory', () => lastRead ?? Promise.resolve());
        } else aside('memory', () => readMemory(minute));
      }
      await sleep(20);
    }
    options.log('soak30: callbacks stopped; waiting for the last deliveries, views and clips');
    // Deliveries still in the spec's retry schedule after 150 s count as not delivered.
    await Promise.race([traffic.drain(), sleep(150_000)]);
    while (side.size > 0) await Promise.allSettled([...side]);
    await trigger.close();
    // The doorbells' motion ends after their motion window.
    await sleep(8_000);

    const wrong = await wrongStates(hap, accessories, traffic, f);
    // The last view or clip's ffmpeg ends on its own; give it a moment before counting.
    let ffmpegLeft = 0;
    for (let wait = 0; wait < 40; wait += 1) {
      ffmpegLeft = childPids(pid).filter((child) => processName(child) === 'ffmpeg').length;
      if (ffmpegLeft === 0) break;
      await sleep(250);
    }
    // One reading can catch native memory in use at that moment (up to 10 MiB, gone a minute
    // later), so the mark is the median of its minute and the two beside it, the end that of the
    // last three minutes (never the mark's own readings, which a short run would share): a jump in
    // one reading moves neither.
    const level = (readings: MemorySample[]) =>
      readings.length === 0 ? undefined : { rssMiB: median(readings.map((m) => m.rssMiB)), heapMiB: median(readings.map((m) => m.heapMiB)) };
    const mark = level(memory.filter((m) => Math.abs(m.minute - markMinute) <= 1));
    const last = level(memory.filter((m) => m.minute > markMinute + 1).slice(-3));
    const rssGrowth = mark && last ? round(last.rssMiB - mark.rssMiB, 1) : Number.NaN;
    const heapGrowth = mark && last ? round(last.heapMiB - mark.heapMiB, 2) : Number.NaN;
    const wrongTotal = wrong.lock + wrong.door + wrong.battery + wrong.reachability + wrong.motion;
    const { counts } = traffic;
    const unhandled = hb.logs.filter((l) => /unhandled|uncaught/i.test(l)).length;
    options.log(`soak30: ${counts.deliveries} deliveries (${counts.notDelivered} not delivered), views ${video.viewsOk}/${video.views}, clips ${video.clipsOk}/${video.clips}, wrong ${JSON.stringify(wrong)}, ffmpeg left ${ffmpegLeft}, RSS ${mark?.rssMiB} -> ${last?.rssMiB} MiB, heap ${mark?.heapMiB} -> ${last?.heapMiB} MiB`);
    const sentText = Object.entries(counts.sent).map(([k, v]) => `${k} ${v}`).join(', ');
    return {
      part: 'soak30',
      title: `Long soak, ${minutes} min: memory flat, no ffmpeg left, final states right`,
      figures: { minutes, markMinute, ratePerSecond: RATE_PER_SECOND, ...counts, video, wrong, ffmpegLeft, unhandled, memory, rssGrowthMiB: rssGrowth, heapGrowthMiB: heapGrowth },
      table: {
        header: ['measure', 'value'],
        rows: [
          ['event log at the start', emptyLog ? 'empty (a first run)' : `full: ${logEntries} entries (a restart)`],
          ['callbacks sent', sentText],
          ['deliveries / not delivered', `${counts.deliveries} / ${counts.notDelivered}`],
          ['camera views with video / asked', `${video.viewsOk} / ${video.views}`],
          ['Secure Video clips received whole / asked', `${video.clipsOk} / ${video.clips}`],
          ['wrong final states: lock / door / low battery / reachability / motion', `${wrong.lock} / ${wrong.door} / ${wrong.battery} / ${wrong.reachability} / ${wrong.motion}`],
          ['ffmpeg children left at the end', String(ffmpegLeft)],
          [`RSS after a memory-pressure collection, minute ${markMinute} -> end (each the median of three minutes' readings)`, `${fmt(mark?.rssMiB ?? Number.NaN)} -> ${fmt(last?.rssMiB ?? Number.NaN)} MiB (${fmt(rssGrowth)})`],
          [`JS heap after it, minute ${markMinute} -> end (medians as above)`, `${fmt(mark?.heapMiB ?? Number.NaN, 2)} -> ${fmt(last?.heapMiB ?? Number.NaN, 2)} MiB (${fmt(heapGrowth, 2)})`],
          ['RSS as ps shows it (no collection asked for), per minute', memory.map((m) => fmt(m.psMiB, 0)).join(' ')],
          ['RSS after a memory-pressure collection, per minute', memory.map((m) => fmt(m.rssMiB, 1)).join(' ')],
          ['JS heap after it, per minute', memory.map((m) => fmt(m.heapMiB, 1)).join(' ')],
          ['external memory (Buffers, array buffers) after it, per minute', memory.map((m) => fmt(m.externalMiB, 1)).join(' ')],
          ['V8 code space after it, per minute', memory.map((m) => fmt(m.codeMiB, 1)).join(' ')],
          ['JS heap committed after it (heapTotal), per minute', memory.map((m) => fmt(m.heapTotalMiB, 1)).join(' ')],
          ['V8 malloced memory after it, per minute', memory.map((m) => fmt(m.mallocMiB, 1)).join(' ')],
          ['anonymous resident after it (the process\'s own memory), per minute', memory.map((m) => fmt(m.anonMiB, 1)).join(' ')],
          ['file-backed resident after it (the node binary\'s and libraries\' pages, shared), per minute', memory.map((m) => fmt(m.fileMiB, 1)).join(' ')],
          ['anonymous outside V8\'s heaps after it (native: malloc, stacks), per minute', memory.map((m) => fmt(m.outsideV8MiB, 1)).join(' ')],
          ['unhandled rejections / errors of the generator', `${unhandled} / ${video.errors.length}`],
        ],
      },
      goals: [
        goal(`soak30: RSS at the end within 2 MiB of minute ${markMinute} (after a memory-pressure collection; medians of three readings)`, '<= 2 MiB', `${fmt(rssGrowth)} MiB`, Math.abs(rssGrowth) <= 2),
        goal(`soak30: JS heap at the end within 2 MiB of minute ${markMinute} (medians of three readings)`, '<= 2 MiB', `${fmt(heapGrowth, 2)} MiB`, Math.abs(heapGrowth) <= 2),
        goal('soak30: no ffmpeg left', '0', String(ffmpegLeft), ffmpegLeft === 0),
        goal('soak30: final HomeKit states match the last events', '0 wrong', `${wrongTotal} wrong`, wrongTotal === 0),
        goal('soak30: every delivery delivered, every view and clip worked', 'all', `${counts.notDelivered} not delivered, views ${video.viewsOk}/${video.views}, clips ${video.clipsOk}/${video.clips}`, counts.notDelivered === 0 && video.viewsOk === video.views && video.clipsOk === video.clips),
      ],
      notes: [
        `Workload: 100 locks (door sensors) and 20 doorbells on the simulator (no added latency), Homebridge with this plugin and ffmpeg ${ffmpeg.includes('ffmpeg-installer') ? '(the static 4.1 of the devDependency)' : ''}, one paired controller. ${emptyLog ? 'The event log empty at the start, as on a first run.' : `The event log full at the start (${logEntries} entries, 50 per device), as a restart finds it.`} Callbacks at ${RATE_PER_SECOND}/s through the simulator's signed delivery: 30 % lock and unlock, 25 % door open and closed (each flipping a random lock of 96, event times rising), 10 % battery levels (none, warning, critical; one lock's untimed events one after the other), 15 % presses, 10 % motion (the plugin fetches each still), 10 % recordings available, on 19 doorbells.`,
        `Every ${FLAP_EVERY_MS / 1000} s one of four other locks' bridge goes offline or comes back. The first doorbell gets no callbacks: every minute a camera view of its latest recording (a ${CLIP_SECONDS} s 320x180 clip with sound, copied to the viewer through SRTP, watched until the first packet and 8 s more); every 5 minutes a recording of it becomes available and the hub downloads the Secure Video clip whole.`,
        'Memory is read on each whole minute, between the views and clips: RSS from /proc as ps shows it, then after a memory-pressure collection the RSS and the JS heap in use. The goal compares the last reading with the 5-minute one.',
        ...video.errors.slice(0, 5),
      ],
      seconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    await controller?.close().catch(() => undefined);
    await hb.stop();
    await hb.cleanup();
    await sim.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The doorbell's accessory once ffmpeg has been checked and its camera (live view and Secure Video) is set up. */
async function withCamera(hap: HapController, name: string): Promise<HapAccessoryInfo> {
  for (let tries = 0; ; tries += 1) {
    const accessory = await hap.accessory(name);
    const ready = streamServices(accessory).length > 0 && (() => {
      try {
        recordingTriggerId(accessory);
        return true;
      } catch {
        return false;
      }
    })();
    if (ready) return accessory;
    if (tries >= 120) throw new Error(`${name} has no camera after a minute`);
    await sleep(500);
  }
}

/** HomeKit's state of each device against its last event. */
async function wrongStates(hap: HapController, accessories: Map<string, HapAccessoryInfo>, traffic: SoakTraffic, f: ReturnType<typeof fleet>): Promise<{ lock: number; door: number; battery: number; reachability: number; motion: number }> {
  const nameOf = new Map([...f.locks, ...f.doorbells].map((d) => [d.id, d.name]));
  const { expected } = traffic;
  const compare = async (wanted: Map<string, number | boolean>, type: string, serviceType: string | undefined, judge: (read: { value?: unknown; status?: number } | undefined, want: number | boolean) => boolean): Promise<number> => {
    const entries = [...wanted.entries()].map(([id, want]) => ({ ref: charId(accessories.get(nameOf.get(id) ?? id), type, serviceType), want }));
    const refs = entries.map((e) => e.ref).filter((r): r is string => r !== undefined);
    const reads = refs.length === 0 ? new Map<string, { value?: unknown; status?: number }>() : await hap.read(refs);
    return entries.filter((e) => e.ref === undefined || !judge(reads.get(e.ref), e.want)).length;
  };
  const equals = (read: { value?: unknown } | undefined, want: number | boolean) => Number(read?.value) === Number(want);
  const motion = new Map(f.doorbells.slice(1).map((d) => [d.id, 0]));
  return {
    lock: await compare(expected.lock, TYPE.lockCurrentState, undefined, equals),
    door: await compare(expected.door, TYPE.contactSensorState, undefined, equals),
    battery: await compare(expected.lowBattery, TYPE.statusLowBattery, shortType(TYPE.battery), equals),
    // An offline lock answers reads with "No Response" (-70402).
    reachability: await compare(expected.online, TYPE.lockCurrentState, undefined, (read, online) => (read?.status === -70402) !== online),
    motion: await compare(motion, TYPE.motionDetected, shortType(TYPE.motionSensor), equals),
  };
}
