// One camera-view stream of a copied clip: the clip's H.264 as it is, through the relay, in real
// time from its start; when the clip ends, a second ffmpeg holds its last frame (kept as a picture
// by the first) through the same relay, until the viewer closes. To the stream's owner it is one
// run: `exited` resolves when the stream ends for good (the copy failed, the hold could not start or
// ended, or it was stopped), `stop()` ends whichever ffmpeg runs and the relay.
import type { Socket } from 'node:dgram';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { errorText } from '../util/error-text.js';
import type { FfmpegExit, FfmpegRun, SpawnOptions } from './ffmpeg-processes.js';
import { copyArgs, liveArgs, type LiveAudioTarget, type LiveTarget } from './live-args.js';
import { RtpRelay, type RelaySink } from './rtp-relay.js';
import type { VideoRoom } from './video-room.js';

/** What the stream owner needs of a run: when it ended and how to end it. */
export type StreamRun = Pick<FfmpegRun, 'exited' | 'stop'>;

export interface CopyPlan {
  /** The recording's playlist, rewritten to the plugin's HLS relay: the copy reads it on its standard input. */
  playlist: string;
  /** Seconds into the clip from which frames are kept as its last frame (a frame or two before its end). */
  lastFrameAt: number;
  /** The clip's own size: the held frame keeps it, so the picture does not jump. */
  width: number;
  height: number;
  audio?: LiveAudioTarget;
}

const VIDEO_CLOCK = 90_000;

/** Starts the copy; throws when its ffmpeg cannot be started (nothing is left running then). */
export async function startCopiedStream(room: VideoRoom, output: Socket, target: LiveTarget, plan: CopyPlan, encoder: string, options: Omit<SpawnOptions, 'stdin' | 'stdout'>): Promise<StreamRun> {
  const dir = await room.scratchFolder();
  const lastFrame = join(dir, 'last.jpg');
  let relay: RtpRelay;
  let copy: FfmpegRun;
  try {
    relay = await RtpRelay.open(output, { address: target.address, port: target.port, srtpKey: target.srtpKey, srtpSalt: target.srtpSalt, ssrc: target.ssrc, payloadType: target.payloadType, clockRate: VIDEO_CLOCK });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  try {
    copy = room.spawn(copyArgs(target, await relay.nextSender(), lastFrame, plan.lastFrameAt, plan.audio), { ...options, label: `${options.label} (copied)`, stdin: 'pipe' });
  } catch (error) {
    relay.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  if (copy.stdin) {
    // A copy that ended before it read the playlist: its exit says why.
    copy.stdin.on('error', () => undefined);
    copy.stdin.end(plan.playlist);
  }
  let current: FfmpegRun = copy;
  const state = { stopping: false };
  // Read through a function: the flag changes while the hold's start awaits.
  const stopping = (): boolean => state.stopping;
  let resolveEnd: (exit: FfmpegExit) => void = () => undefined;
  const exited = new Promise<FfmpegExit>((resolve) => {
    resolveEnd = resolve;
  });
  const finish = (exit: FfmpegExit): void => {
    relay.close();
    void rm(dir, { recursive: true, force: true }).finally(() => {
      resolveEnd(state.stopping ? { ...exit, stopped: true } : exit);
    });
  };
  const failedHold = (why: string): FfmpegExit => ({ code: null, signal: null, stopped: false, errorOutput: '', spawnError: `for the held last frame: ${why}` });

  void copy.exited.then(async (exit) => {
    // A failure of the copy, or a stop, ends the stream; the clip's end goes on to the hold.
    if (state.stopping || exit.stopped || exit.code !== 0 || exit.spawnError !== undefined) {
      finish(exit);
      return;
    }
    let image: Buffer;
    try {
      image = await readFile(lastFrame);
    } catch (error) {
      finish(failedHold(`the clip's last frame was not kept (${errorText(error)})`));
      return;
    }
    let sink: RelaySink;
    try {
      sink = await relay.nextSender();
    } catch (error) {
      finish(failedHold(errorText(error)));
      return;
    }
    if (stopping()) {
      finish(exit);
      return;
    }
    relay.splice();
    let hold: FfmpegRun;
    try {
      hold = room.spawn(liveArgs({ kind: 'still' }, { ...target, width: plan.width, height: plan.height }, encoder, sink), { ...options, label: `${options.label} (last frame)`, stdin: 'pipe' });
    } catch (error) {
      finish(failedHold(errorText(error)));
      return;
    }
    current = hold;
    if (hold.stdin) {
      // A hold that ended before it read the picture: its exit says why.
      hold.stdin.on('error', () => undefined);
      hold.stdin.end(image);
    }
    void hold.exited.then((holdExit) => {
      finish(holdExit.spawnError === undefined ? holdExit : failedHold(holdExit.spawnError));
    });
  });

  return {
    exited,
    stop: async () => {
      state.stopping = true;
      // The copy may have ended and the hold not be started yet: that start is skipped, and the end awaited.
      await current.stop();
      return exited;
    },
  };
}
