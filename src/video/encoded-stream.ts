// One camera-view stream that ffmpeg encodes (a still picture, or a recording that cannot be
// copied): ffmpeg sends plain RTP to a relay of ours on this machine, which protects it as SRTP for
// the viewer. To the stream's owner it is one run: `exited` resolves once ffmpeg has ended and the
// relay is closed, `stop()` ends both.
import type { Socket } from 'node:dgram';

import type { StreamRun } from './copied-stream.js';
import type { SpawnOptions } from './ffmpeg-processes.js';
import { liveArgs, type LiveAudioTarget, type LiveSource, type LiveTarget } from './live-args.js';
import { RtpRelay } from './rtp-relay.js';
import type { VideoRoom } from './video-room.js';

const VIDEO_CLOCK = 90_000;

/**
 * Starts the stream; `input` is written to ffmpeg's standard input (the still picture, or the
 * recording's relayed playlist). Throws when ffmpeg cannot be started (nothing is left open then).
 */
export async function startEncodedStream(room: VideoRoom, output: Socket, target: LiveTarget, source: LiveSource, encoder: string, options: Omit<SpawnOptions, 'stdin' | 'stdout'>, input: Buffer | string, audio?: LiveAudioTarget): Promise<StreamRun> {
  const relay = await RtpRelay.open(output, { address: target.address, port: target.port, srtpKey: target.srtpKey, srtpSalt: target.srtpSalt, ssrc: target.ssrc, payloadType: target.payloadType, clockRate: VIDEO_CLOCK });
  let run;
  try {
    run = room.spawn(liveArgs(source, target, encoder, await relay.nextSender(), audio), { ...options, stdin: 'pipe' });
  } catch (error) {
    relay.close();
    throw error;
  }
  if (run.stdin) {
    // An ffmpeg gone before it read its input (a viewer that left at once): its exit says why.
    run.stdin.on('error', () => undefined);
    run.stdin.end(input);
  }
  const exited = run.exited.then((exit) => {
    relay.close();
    return exit;
  });
  return {
    exited,
    stop: async () => {
      await run.stop();
      return exited;
    },
  };
}
