// Part `video`: doorbell video with the real ffmpeg (the devDependency's static build).
//   - live view: time from the controller's start request to the first video packet, p50/p95, over
//     several streams of the simulator's recording (3 s, 160x120) asked for at 640x360, 15 fps;
//   - ffmpeg CPU seconds per second of clip, copying the clip's H.264 and transcoding it as the
//     live view does (each a standalone ffmpeg over the same playlist, as fast as it can);
//   - the plugin's RSS (Homebridge's process, settled) idle and with a stream running.
// Secure Video's time to first fragment is measured by its own part (a slot below until it lands).
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { copyArgs, type LiveTarget } from '../../src/video/live-args.js';

import { CameraViewer, childPids, streamServices } from '../../test/harness/camera-viewer.js';
import { processName } from '../../test/harness/processes.js';
import { testFfmpeg } from '../../test/video/ffmpeg-binary.js';
import { cpuMs } from '../lib/cpu.js';
import { settledRssMiB, SETTLE_ENV } from '../lib/rss.js';
import { percentile, round } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';
import { BENCH_DOORBELL, withVideoBench } from '../lib/video-bench.js';

const CLIP_SECONDS = 3;
const CPU_CLIP_SECONDS = 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) one ffmpeg run takes, as the shell's `times` counts its finished children. */
async function ffmpegCpuSeconds(ffmpeg: string, args: string[]): Promise<number> {
  const child = spawn('bash', ['-c', '"$0" "$@" >/dev/null 2>&1; times', ffmpeg, '-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  await new Promise<void>((resolve) => child.once('close', () => { resolve(); }));
  // Second line: the children's user and system time, as "0m1.234s 0m0.056s".
  const times = [...(out.trim().split('\n')[1] ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (times.length !== 2) throw new Error(`could not read the CPU time of ffmpeg (${out.trim()})`);
  return (times[0] ?? 0) + (times[1] ?? 0);
}

export async function runVideo(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const ffmpeg = testFfmpeg();
  const streams = options.quick ? 5 : 20;
  return withVideoBench({ ffmpeg, env: SETTLE_ENV }, async ({ sim, hb, controller: paired }) => {
    const pid = hb.child.pid ?? 0;
    const doorbell = (await paired.accessories()).find((accessory) => accessory.services.some((service) => service.type === '121'));
    const ids = doorbell === undefined ? undefined : streamServices(doorbell)[0];
    if (!ids) throw new Error('no doorbell camera');
    await sim.fire('video-available', { doorbellId: BENCH_DOORBELL.id, dvrId: 'bench-recording' });
    await hb.waitForLog(/Front Doorbell: Recording available/, 15_000);

    const firstPacket: number[] = [];
    const stream = async (during?: (child: number | undefined) => Promise<void>) => {
      const viewer = await CameraViewer.setUp(paired, ids, { ffmpeg });
      try {
        if ((await viewer.start({ ffmpeg })) !== 0) throw new Error('the stream did not start');
        for (let wait = 0; viewer.firstPacketAt === undefined && wait < 200; wait += 1) await sleep(25);
        if (viewer.firstPacketAt !== undefined) firstPacket.push(viewer.firstPacketAt - viewer.startedAt);
        // The live view's ffmpeg (where setpriv is missing, a watchdog shell runs beside it).
        await during?.(childPids(pid).find((child) => processName(child) === 'ffmpeg'));
      } finally {
        await viewer.end().catch(() => undefined);
        viewer.close();
      }
      for (let wait = 0; childPids(pid).length > 0 && wait < 100; wait += 1) await sleep(25);
    };
    // A first stream loads HAP's and the plugin's streaming code once; idle is measured after it.
    await stream();
    const idle = await settledRssMiB(pid, { waitMs: 1500 });
    let early = Number.NaN;
    let late = Number.NaN;
    let liveCpuPerSecond = Number.NaN;
    await stream(async (child) => {
      // The live view's own ffmpeg over the clip, and the plugin's memory early and late in a stream.
      // Sampled before the clip's end: a copied clip's ffmpeg ends with the clip (a second one holds the last frame).
      const window = CLIP_SECONDS - 1;
      await sleep(window * 1000);
      if (child !== undefined) liveCpuPerSecond = cpuMs(child) / 1000 / window;
      await sleep(1000);
      early = (await settledRssMiB(pid, { waitMs: 200, samples: 3 })).mib;
      await sleep(options.quick ? 5_000 : 20_000);
      late = (await settledRssMiB(pid, { waitMs: 200, samples: 3 })).mib;
    });
    for (let i = 2; i < streams; i += 1) await stream();
    const runningRss = late;

    // A doorbell-sized clip for the CPU figures: 10 s of 1280x720 at 25 fps, made here as HLS.
    const dir = await mkdtemp(join(tmpdir(), 'la-bench-video-'));
    await ffmpegCpuSeconds(ffmpeg, ['-f', 'lavfi', '-i', `testsrc=size=1280x720:rate=25`, '-t', String(CPU_CLIP_SECONDS), '-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-pix_fmt', 'yuv420p', '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod', '-hls_segment_filename', join(dir, 'seg%d.ts'), join(dir, 'index.m3u8')]);
    const playlist = join(dir, 'index.m3u8');
    // The live view's own copy (the clip's H.264 to the relay's port, its last frames kept as a picture), as fast as it can.
    const sink = createSocket('udp4');
    await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
    const asked: LiveTarget = { address: '127.0.0.1', ipv6: false, port: 9, srtpKey: Buffer.alloc(16), srtpSalt: Buffer.alloc(14), ssrc: 1, payloadType: 99, mtu: 1378, width: 1280, height: 720, fps: 30, maxBitrate: 2000, profile: 2, level: 2 };
    // The view reads its playlist from the plugin's relay on standard input; here ffmpeg reads the file.
    // Port 0: ffmpeg sends from any local port (only the plugin's relay insists on one).
    const piped = copyArgs(asked, { port: sink.address().port, from: 0, rtcpFrom: 0 }, join(dir, 'last.jpg'), CPU_CLIP_SECONDS - 1.5 / 25);
    const copy = await ffmpegCpuSeconds(ffmpeg, ['-i', playlist, ...piped.slice(piped.indexOf('pipe:0') + 1)]);
    sink.close();
    const transcode = await ffmpegCpuSeconds(ffmpeg, ['-i', playlist, '-map', '0:v:0', '-vf', 'scale=w=640:h=360:force_original_aspect_ratio=decrease,scale=w=trunc(iw/2)*2:h=trunc(ih/2)*2,format=yuv420p,fps=15', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-b:v', '300k', '-f', 'null', '-']);
    const sorted = [...firstPacket].sort((a, b) => a - b);
    const p50 = round(percentile(sorted, 50), 0);
    const p95 = round(percentile(sorted, 95), 0);
    await rm(dir, { recursive: true, force: true });
    const copyPerSecond = round(copy / CPU_CLIP_SECONDS, 3);
    const transcodePerSecond = round(transcode / CPU_CLIP_SECONDS, 3);
    const lateSeconds = options.quick ? 5 : 20;
    options.log(`video: first packet p50 ${p50} ms, p95 ${p95} ms over ${firstPacket.length} streams; ffmpeg CPU per clip second copy ${copyPerSecond} s, transcode ${transcodePerSecond} s, live view ${fmt(liveCpuPerSecond, 3)} s; RSS idle ${idle.mib} MiB, streaming ${early} MiB, ${lateSeconds} s later ${late} MiB`);
    return {
      part: 'video',
      title: 'Doorbell video (real ffmpeg 4.1 static, the simulator\'s 3 s 160x120 recording, viewer at 640x360 15 fps 300 kbit/s)',
      figures: { streams: firstPacket.length, firstPacketMs: firstPacket, p50, p95, copyCpuPerClipSecond: copyPerSecond, transcodeCpuPerClipSecond: transcodePerSecond, liveViewCpuPerSecond: round(liveCpuPerSecond, 3), rssIdleMiB: idle.mib, rssStreamingMiB: early, rssStreamingLaterMiB: late, secureVideoFirstFragmentMs: null },
      table: {
        header: ['measure', 'value'],
        rows: [
          [`live view: start request to first video packet, p50 / p95 (${firstPacket.length} streams)`, `${fmt(p50, 0)} / ${fmt(p95, 0)} ms`],
          ['ffmpeg CPU per second of a 1280x720 25 fps clip, copying its H.264 as the live view does (and keeping its last frame)', `${fmt(copyPerSecond, 3)} s`],
          ['ffmpeg CPU per second of that clip, transcoding to 640x360 15 fps (as the live view)', `${fmt(transcodePerSecond, 3)} s`],
          ['the live view\'s own ffmpeg (the simulator\'s clip fits: copied), CPU per second while the clip plays (paced in real time)', `${fmt(liveCpuPerSecond, 3)} s`],
          ['plugin (Homebridge process) RSS idle (after a first stream) / with a stream running', `${fmt(idle.mib, 1)} / ${fmt(early, 1)} MiB`],
          [`the same stream ${lateSeconds} s later (growth with the stream)`, `${fmt(late, 1)} MiB (${fmt(late - early, 1)} MiB)`],
          ['Secure Video: request to first fragment', 'measured by the Secure Video part (not in this build)'],
        ],
      },
      goals: [
        goal('live view: first video packet after the start request, p95', '< 3000 ms', `${fmt(p95, 0)} ms`, p95 < 3000),
        goal('plugin RSS with a stream running against idle', '< +5 MiB', `${fmt(runningRss - idle.mib, 1)} MiB`, runningRss - idle.mib < 5),
        goal('plugin RSS does not grow while a stream runs', '< +1 MiB', `${fmt(late - early, 1)} MiB`, late - early < 1),
      ],
      notes: ['Time to first packet is measured at the viewer: from writing SelectedRTPStreamConfiguration (start) to the first RTP packet on its UDP port; it includes the recording lookup at the simulator.', 'CPU per clip second: the whole run of one standalone ffmpeg over a 10 s 1280x720 25 fps HLS clip made with ffmpeg (testsrc, libx264), user + system time from /proc, divided by the clip length. The live view\'s own figure is over the simulator\'s small recording, at real-time pace, per second of wall time.'],
      seconds: round((performance.now() - started) / 1000, 1),
    };
  });
}
