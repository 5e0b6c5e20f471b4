// The video room's front door: made once by the runtime from the `video` config, it checks ffmpeg
// once (and what can end its children should Homebridge die, after ending any children and
// removing any last-frame folders left by the last run), says once when video cannot work, owns
// every ffmpeg child (FfmpegProcesses), and hands the doorbell views what they need: whether video
// works, the settings, and a recording opened for ffmpeg through the plugin's HLS relay (its
// address looked up afresh and fetched with the plugin's trust; the lookup and the fetch are the
// cloud's, handed in, so no view reaches the cloud).
import { tmpdir } from 'node:os';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { ChildLedger, type LedgerStore } from './child-ledger.js';
import { checkFfmpeg, ffmpegWarning, type FfmpegCheck, type FfmpegInfo } from './ffmpeg-check.js';
import { FfmpegProcesses, type FfmpegRun, type SpawnOptions } from './ffmpeg-processes.js';
import { hostsOnly } from './ffmpeg-text.js';
import { HlsRelay, type MediaAccess, type RelayedRecording } from './hls-relay.js';
import { checkOrphanGuard, type OrphanGuard } from './orphan-guard.js';
import type { VideoConfig } from './video-config.js';
import { makeViewScratch, sweepViewScratch } from './view-scratch.js';
import type { UiMessage } from '../util/ui-message.js';

/**
 * Answers a recording's playlist address (`.m3u8`), looked up afresh each time: it may be a
 * short-lived signed link. Rejects with an error whose message holds no address.
 */
export type PlaylistLookup = (doorbellId: string, dvrId: string) => Promise<string>;

/** What the settings page shows: whether video works and which ffmpeg it uses. */
export interface VideoRoomStatus {
  state: 'checking' | 'ready' | 'unavailable';
  ffmpegPath?: string;
  ffmpegVersion?: string;
  h264Encoder?: string;
  problem?: UiMessage;
  secureVideo: boolean;
  replayMinutes: number;
}

export interface VideoRoomOptions {
  config: VideoConfig;
  log: Logger;
  lookup: PlaylistLookup;
  /** How recordings are fetched (the plugin's own trust), for ffmpeg through the HLS relay. */
  media: MediaAccess;
  /** The status changed (the check finished). */
  onStatus?: (status: VideoRoomStatus) => void;
  /** Where the running children are written down, so the next start can end any left behind. */
  ledger?: LedgerStore;
  /**
   * The check (and the cameras it lets set up) waits for this: at start the calls to the service go
   * first. At once without it.
   */
  checkAfter?: Promise<unknown>;
}

/** For the debug line: what ends ffmpeg should Homebridge die without a shutdown. */
const GUARD_WORDS: Record<OrphanGuard, string> = {
  pdeathsig: 'each ends with Homebridge by the parent-death signal',
  watchdog: 'each ends with Homebridge by a watchdog',
  none: 'one left by a killed Homebridge is ended at the next start',
};

/** Thrown by `spawn` while video does not work (no usable ffmpeg, or shutting down). */
export class VideoUnavailableError extends Error {}

export class VideoRoom {
  /** Resolves once ffmpeg has been checked: its facts, or undefined when video does not work. */
  readonly ready: Promise<FfmpegInfo | undefined>;
  private info: FfmpegInfo | undefined;
  private problem: UiMessage | undefined;
  private checked = false;
  private processes: FfmpegProcesses | undefined;
  private stopped = false;
  private readonly ledger: ChildLedger | undefined;
  private readonly relay: HlsRelay;

  constructor(private readonly options: VideoRoomOptions) {
    this.relay = new HlsRelay(options.media, options.log);
    this.ledger = options.ledger && new ChildLedger(options.ledger, options.log);
    // The sweep is done before any child of this run can start.
    const sweep = Promise.all([this.ledger?.sweep(), sweepViewScratch(this.scratchBase)]);
    this.ready = Promise.resolve(options.checkAfter).then(async () => {
      // Homebridge shut down before the check began: nothing to start.
      if (this.stopped) return undefined;
      // The processes are asked one after the other, each after the last has ended.
      const check = await checkFfmpeg(options.config.ffmpegPath);
      const guard = await checkOrphanGuard();
      await sweep;
      return this.adopt(check, guard);
    });
  }

  /** Where copied views keep their clip's last frame: the system's temporary folder. */
  private get scratchBase(): string {
    return tmpdir();
  }

  /** A new folder for one copied view's last frame; the view removes it when it ends. */
  scratchFolder(): Promise<string> {
    return makeViewScratch(this.scratchBase);
  }

  get settings(): Readonly<VideoConfig> {
    return this.options.config;
  }

  /** ffmpeg's facts once checked and usable; undefined before the check and when video does not work. */
  get ffmpeg(): FfmpegInfo | undefined {
    return this.info;
  }

  /** How many ffmpeg children run now. */
  get running(): number {
    return this.processes?.count ?? 0;
  }

  status(): VideoRoomStatus {
    const { secureVideo, replayMinutes } = this.options.config;
    if (!this.checked) return { state: 'checking', secureVideo, replayMinutes };
    if (this.info === undefined) return { state: 'unavailable', ...(this.problem === undefined ? {} : { problem: this.problem }), secureVideo, replayMinutes };
    return { state: 'ready', ffmpegPath: this.info.path, ffmpegVersion: this.info.version, h264Encoder: this.info.h264Encoder, secureVideo, replayMinutes };
  }

  /**
   * Starts an ffmpeg child owned by the room (see FfmpegProcesses). Throws VideoUnavailableError
   * when there is no usable ffmpeg (await `ready` first) or the plugin is shutting down.
   */
  spawn(args: readonly string[], options: SpawnOptions): FfmpegRun {
    if (this.stopped || this.processes === undefined) throw new VideoUnavailableError(this.stopped ? 'the plugin is shutting down' : 'ffmpeg is not available');
    return this.processes.spawn(args, options);
  }

  /**
   * A recording opened for ffmpeg: its playlist address looked up now, the playlist fetched with
   * the plugin's trust and rewritten to the relay (close it when its stream ends). Rejects with
   * words that hold no address; `signal` gives up (the stream could not wait).
   */
  async openRecording(doorbellId: string, dvrId: string, signal?: AbortSignal): Promise<RelayedRecording> {
    let address: string;
    try {
      address = await this.options.lookup(doorbellId, dvrId);
    } catch (error) {
      throw new Error(`the recording could not be looked up (${hostsOnly(errorText(error)).replace(/\.$/, '')})`);
    }
    if (this.stopped) throw new VideoUnavailableError('the plugin is shutting down');
    try {
      return await this.relay.open(address, signal);
    } catch (error) {
      throw new Error(hostsOnly(errorText(error)).replace(/\.$/, ''));
    }
  }

  /** Ends every ffmpeg child and refuses new ones (Homebridge shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.processes?.stopAll(), this.relay.stop()]);
  }

  private adopt(check: FfmpegCheck, guard: OrphanGuard): FfmpegInfo | undefined {
    this.checked = true;
    if (check.ok) {
      this.info = check.info;
      if (!this.stopped) this.processes = new FfmpegProcesses(check.info.path, this.options.log, { guard, ...(this.ledger ? { ledger: this.ledger } : {}) });
      this.options.log.debug(`Doorbell video uses ffmpeg ${check.info.version} (${check.info.path}, H.264 by ${check.info.h264Encoder}; ${GUARD_WORDS[guard]}).`);
    } else {
      this.problem = check.problem;
      // Said once, at start: the camera keeps its still pictures.
      this.options.log.warn(ffmpegWarning(check));
    }
    this.options.onStatus?.(this.status());
    return this.info;
  }
}
