// The set-up and clean-up both video parts share: the simulator with one doorbell (and recordings
// made for the run), Homebridge with this plugin and the test ffmpeg, a paired controller, and the
// webhook registration done. Everything is stopped and removed afterwards, also when the part fails.
import { HapController } from '../../test/harness/hap.js';
import { freePort, startHomebridge, type RunningHomebridge } from '../../test/harness/homebridge.js';
import { startSimulator, type Simulator } from '../../test/sim/index.js';
import { simPlatformConfig } from '../../test/sim/plugin-config.js';
import { pluginOverride } from './env.js';

export const BENCH_DOORBELL = { id: 'BELL-1', name: 'Front Doorbell' };

export interface VideoBenchOptions {
  ffmpeg: string;
  /** Other fields of the doorbell's config entry. */
  doorbell?: Record<string, unknown>;
  /** dvrID → a folder with a recording's playlist, served by the simulator. */
  recordings?: Record<string, string>;
  /** Environment for Homebridge (e.g. the settled-RSS preload). */
  env?: Record<string, string>;
}

export interface VideoBench {
  sim: Simulator;
  hb: RunningHomebridge;
  controller: HapController;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `part` against a started video bench and always stops and removes what was started. */
export async function withVideoBench<T>(options: VideoBenchOptions, part: (bench: VideoBench) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ doorbells: [BENCH_DOORBELL], ...(options.recordings ? { recordings: options.recordings } : {}) });
  let hb: RunningHomebridge | undefined;
  let controller: HapController | undefined;
  try {
    const listenPort = await freePort();
    hb = await startHomebridge({
      platforms: [simPlatformConfig(sim, listenPort, { doorbells: [{ ...BENCH_DOORBELL, ...options.doorbell }], discoverDevices: false, userWebhook: false, video: { ffmpegPath: options.ffmpeg } })],
      ...(options.env ? { env: options.env } : {}),
      ...pluginOverride(),
    });
    await hb.waitForLog(/Webhook listener ready/, 120_000);
    controller = await HapController.pair({ port: hb.bridgePort, username: hb.username, pin: hb.pin });
    for (let i = 0; sim.registrations().length < 1 && i < 400; i += 1) await sleep(50);
    return await part({ sim, hb, controller });
  } finally {
    await controller?.close().catch(() => undefined);
    await hb?.stop();
    await hb?.cleanup();
    await sim.close();
  }
}
