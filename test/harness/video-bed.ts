// The set-up the doorbell video end-to-end files share: the service simulator with doorbells (and
// recordings made at test time), the built plugin in a real Homebridge with the real ffmpeg, a paired
// HomeKit controller, camera viewers that end after each test, and the ffmpeg children of Homebridge
// (from /proc) to assert that none is left behind.
import { expect } from 'vitest';

import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';
import { CameraViewer, childPids, streamServices, type StreamIds, type ViewerOptions } from './camera-viewer.js';
import { E2eSession, fireAccepted, type SessionStart } from './e2e-session.js';
import { freePort } from './homebridge.js';

export { alive, commandLine, processName, running } from './processes.js';

export interface BedDoorbell {
  id: string;
  name: string;
  /** Other fields of the doorbell's config entry (e.g. `motionTimeoutSeconds`). */
  [field: string]: unknown;
}

export interface VideoBedOptions {
  doorbells: BedDoorbell[];
  /** dvrID → a folder with a recording's playlist (see makeClip), served by the simulator. */
  recordings?: Record<string, string>;
  /** The plugin's `video` block besides `ffmpegPath` (the test ffmpeg). */
  video?: Record<string, unknown>;
  /** Homebridge's debug lines too (no address may appear in them either). */
  debug?: boolean;
  /** Environment for Homebridge (added to this process's). */
  env?: Record<string, string>;
}

/** How long a viewer's stop may wait for an answer. */
const END_GIVEN_UP_MS = 5_000;
/** How long a viewer may take to decode the frames a test waits for (inside the 30 s a test gets). */
const FRAMES_CEILING_MS = 25_000;

/** The two doorbells most video files use. */
export const FRONT_DOORBELL: BedDoorbell = { id: 'BELL-1', name: 'Front Doorbell' };
export const SIDE_DOORBELL: BedDoorbell = { id: 'BELL-2', name: 'Side Doorbell' };

export class VideoBed {
  readonly ffmpeg = testFfmpeg();
  readonly session = new E2eSession();
  readonly eventually = this.session.eventually;
  readonly paired = this.session.paired;
  private readonly viewers: CameraViewer[] = [];
  private simulator: Simulator | undefined;
  private homebridge: SessionStart | undefined;

  get sim(): Simulator {
    if (!this.simulator) throw new Error('the video bed has not started');
    return this.simulator;
  }

  /** Homebridge's whole log so far, debug included. */
  logs(): string {
    return this.session.hb?.logs.join('\n') ?? '';
  }

  /** Starts the simulator and Homebridge, waits for the webhook registrations and pairs a controller that sees every doorbell. */
  async start(options: VideoBedOptions): Promise<void> {
    const doorbells = options.doorbells.map(({ id, name }) => ({ id, name }));
    this.simulator = await startSimulator({ doorbells, ...(options.recordings ? { recordings: options.recordings } : {}) });
    const listenPort = await freePort();
    this.homebridge = {
      platforms: [
        simPlatformConfig(this.simulator, listenPort, {
          doorbells: options.doorbells,
          discoverDevices: false,
          userWebhook: false,
          video: { ffmpegPath: this.ffmpeg, ...options.video },
        }),
      ],
      registrations: { sim: this.simulator, atLeast: options.doorbells.length },
      ...(options.debug ? { debug: true } : {}),
      ...(options.env ? { env: options.env } : {}),
    };
    await this.session.start(this.homebridge);
    await this.videoChecked();
    await this.session.pair(options.doorbells.length + 1, `the bridge and ${options.doorbells.length} doorbell(s)`);
  }

  /**
   * Stops Homebridge (if it still runs) and starts it again with the same identity and config (the
   * pairing stays); `env`, when given, replaces the environment the bed started with.
   */
  async restart(env?: Record<string, string>): Promise<void> {
    if (!this.homebridge) throw new Error('the video bed has not started');
    if (env !== undefined) this.homebridge = { ...this.homebridge, env };
    await this.session.restart(this.homebridge);
    await this.videoChecked();
  }

  /**
   * The camera's video and recording services are set up once ffmpeg has been checked, which waits
   * for start-up's first setup against the service: a test that asks for them waits for its line.
   */
  private async videoChecked(): Promise<void> {
    // The check waits up to 10 s for the setup, then runs its ffmpeg questions one at a time. Its
    // line is a debug line: beds without debug lines (no recording asked for) go on at once.
    if (this.homebridge?.debug !== true) return;
    await this.session.hb?.waitForLog(/Doorbell video (uses ffmpeg|is off)/, 90_000);
  }

  /**
   * The stream-management services of a doorbell's camera. They are added once ffmpeg has been
   * checked, which may end after the pairing on a busy machine: this waits until the camera has them.
   */
  async streamsOf(name: string): Promise<StreamIds[]> {
    return this.eventually(async () => {
      const streams = streamServices(await this.paired().accessory(name));
      return streams.length > 0 ? streams : undefined;
    }, `the camera services of ${name}`);
  }

  /** One stream-management service of a doorbell; throws when it has none at `index`. */
  async streamOf(name: string, index = 0): Promise<StreamIds> {
    const ids = (await this.streamsOf(name))[index];
    if (!ids) throw new Error(`${name} has no stream service ${index}`);
    return ids;
  }

  /** A viewer that has set up and started a stream (both answered success); ended by `endViewers`. */
  async view(ids: StreamIds, options: Omit<ViewerOptions, 'ffmpeg'> = {}): Promise<CameraViewer> {
    const viewer = await CameraViewer.setUp(this.paired(), ids, { ffmpeg: this.ffmpeg });
    this.viewers.push(viewer);
    expect(viewer.setupStatus).toBe(0);
    expect(await viewer.start({ ffmpeg: this.ffmpeg, ...options })).toBe(0);
    return viewer;
  }

  /**
   * Waits until a viewer has decoded `count` frames. The ceiling is far above the few seconds a
   * quiet machine needs: the viewer's decoder runs in the test process, which a busy machine starves.
   */
  frames(viewer: CameraViewer, count: number): Promise<true> {
    return this.eventually(() => Promise.resolve(viewer.frames().count >= count ? true : undefined), `${count} decoded frames`, FRAMES_CEILING_MS);
  }

  /**
   * Ends every viewer still open, so a failed test leaves no stream to make the next one's service
   * busy. A stop that gets no answer (its Homebridge was killed) is given up after a few seconds.
   */
  async endViewers(): Promise<void> {
    for (const viewer of this.viewers.splice(0)) {
      let timer: NodeJS.Timeout | undefined;
      const givenUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_GIVEN_UP_MS)));
      await Promise.race([viewer.end().catch(() => undefined), givenUp]);
      clearTimeout(timer);
      viewer.close();
    }
  }

  /** The children of the Homebridge running now: the plugin starts no other program than ffmpeg. */
  ffmpegChildren(): number[] {
    const pid = this.session.hb?.child.pid;
    return pid === undefined ? [] : childPids(pid);
  }

  /** Waits until Homebridge has `count` ffmpeg children (none by default). */
  ffmpegCount(count: number, what: string, timeoutMs = 3_000): Promise<true> {
    return this.eventually(() => Promise.resolve(this.ffmpegChildren().length === count ? true : undefined), what, timeoutMs);
  }

  /** Fires videoavailable for a doorbell and waits until the plugin has logged it as a new recording. */
  async recording(dvrId: string, doorbell: BedDoorbell): Promise<void> {
    const pattern = new RegExp(`${doorbell.name}: Recording available`);
    const announced = () => this.session.hb?.logs.filter((line) => pattern.test(line)).length ?? 0;
    const before = announced();
    await fireAccepted(this.sim, 'video-available', { doorbellId: doorbell.id, dvrId });
    await this.eventually(() => Promise.resolve(announced() > before ? true : undefined), `the recording ${dvrId} applied`);
  }

  /**
   * The recording becomes the newest and a viewer starts a stream of it, once the plugin has
   * examined the clip: the plugin gives that check 1.2 s before it answers the viewer, and without
   * an answer in time it encodes the picture and sends no sound (its rule, so a start is never held
   * back). Cases about what follows an answer (copy or encode, sound) use this: a view whose check
   * was late on a busy machine is ended and started again, at most three times. `logsFrom` marks
   * the log lines since the view was asked for. The plugin says how it plays in a debug line: the
   * bed must start with `debug`.
   */
  async playExamined(dvrId: string, doorbell: BedDoorbell, options: Omit<ViewerOptions, 'ffmpeg'> = {}): Promise<{ viewer: CameraViewer; logsFrom: number }> {
    const plays = new RegExp(`${doorbell.name}: the camera view (sends the clip's H\\.264 as it is|encodes the clip: [^\\n]*)`);
    for (let attempt = 1; ; attempt += 1) {
      await this.recording(dvrId, doorbell);
      const ids = await this.streamOf(doorbell.name);
      const logsFrom = this.session.hb?.logs.length ?? 0;
      const viewer = await this.view(ids, options);
      const how = await this.eventually(() => Promise.resolve(plays.exec((this.session.hb?.logs ?? []).slice(logsFrom).join('\n'))?.[1]), `${doorbell.name}'s view saying how it plays the clip`);
      if (!how.endsWith('could not be examined in time')) return { viewer, logsFrom };
      if (attempt === 3) throw new Error(`the plugin's check of ${dvrId} was late three times in a row`);
      await this.endViewers();
    }
  }

  /** Ends the viewers, the controller, Homebridge (with its storage) and the simulator; safe after a failed start. */
  async close(): Promise<void> {
    await this.endViewers();
    await this.session.close();
    await this.simulator?.close();
  }
}
