// One Secure Video recording: ffmpeg reads the clip's playlist (rewritten to the plugin's HLS relay,
// on its standard input) and writes fragmented MP4 to a pipe;
// the boxes are cut into the initialization segment and ~4-s fragments and handed out as they come.
// Each packet is held back until the next one arrives, so the last one can be marked last. Whatever
// ends the recording (the end of the clip, the hub closing, a failure, a stall) ends ffmpeg too.
import type { Readable, Writable } from 'node:stream';

import { describeExit, type FfmpegExit } from './ffmpeg-processes.js';
import { Mp4FormatError, Mp4Segmenter, type Mp4Segment } from './mp4-boxes.js';
import { recordingArgs, type RecordingFormat } from './recording-args.js';

/** How long ffmpeg may go without writing anything before the recording is given up. */
export const RECORDING_STALL_MS = 10_000;

export interface RecordingPacket {
  data: Buffer;
  isLast: boolean;
}

/** The process owner as a recording needs it: start ffmpeg with a pipe for its output, stop it. */
export interface RecordingProcesses {
  spawn(args: readonly string[], options: { label: string; stdout: 'pipe'; stdin: 'pipe' }): { readonly stdout: Readable | undefined; readonly stdin: Writable | undefined; readonly exited: Promise<FfmpegExit>; stop(): Promise<FfmpegExit> };
}

/** A recording that could not be made, or was cut short; `message` is for the log (no address in it). */
export class RecordingFailed extends Error {
  constructor(
    message: string,
    /** Some packets went out before it failed. */
    readonly partial: boolean,
  ) {
    super(message);
  }
}

export interface RecordingRun {
  processes: RecordingProcesses;
  /** Words for the log, e.g. "Front Doorbell recording"; never an address. */
  label: string;
  /** The clip's playlist, rewritten to the plugin's HLS relay. */
  playlist: string;
  format: RecordingFormat;
  encoder?: string;
  /** Ends the recording (the hub closed the stream); ffmpeg is stopped at once. */
  signal?: AbortSignal;
  /** Called when the clip ended early but what came before it was complete enough to send. */
  onCutShort?: (why: string) => void;
  stallMs?: number;
}

/**
 * The packets of one recording: the initialization segment, then fragments, the last marked last.
 * Throws RecordingFailed when ffmpeg produced no fragment at all (after the initialization segment,
 * if that went out: `partial`). A failure after some fragments ends
 * the clip at the last complete fragment (marked last) and reports it through `onCutShort`.
 */
export async function* recordingPackets(run: RecordingRun): AsyncGenerator<RecordingPacket, void, undefined> {
  let child: ReturnType<RecordingProcesses['spawn']>;
  try {
    child = run.processes.spawn(recordingArgs(run.format, run.encoder), { label: run.label, stdout: 'pipe', stdin: 'pipe' });
  } catch (error) {
    // The owner refuses new children (shutting down, no usable ffmpeg); its words hold no address.
    throw new RecordingFailed(error instanceof Error ? error.message : String(error), false);
  }
  if (child.stdin) {
    // An ffmpeg that ended before it read the playlist: its exit says why.
    child.stdin.on('error', () => undefined);
    child.stdin.end(run.playlist);
  }
  const stop = (): void => {
    void child.stop();
  };
  run.signal?.addEventListener('abort', stop, { once: true });
  const stall = { hit: false };
  let stallTimer: NodeJS.Timeout | undefined;
  const armStall = (): void => {
    clearTimeout(stallTimer);
    stallTimer = setTimeout(() => {
      stall.hit = true;
      stop();
    }, run.stallMs ?? RECORDING_STALL_MS);
  };
  const segmenter = new Mp4Segmenter();
  let held: Mp4Segment | undefined;
  let sent = 0;
  let formatError: string | undefined;
  // A function, not a narrowed property: the signal changes while this generator waits.
  const aborted = (): boolean => run.signal?.aborted === true;
  try {
    if (aborted()) return;
    const stdout = child.stdout;
    if (stdout) {
      armStall();
      try {
        for await (const chunk of stdout as AsyncIterable<Buffer>) {
          armStall();
          for (const segment of segmenter.push(chunk)) {
            // The initialization segment goes at once (it is never the last); a fragment waits for
            // the next one, so the last can be marked last.
            if (segment.kind === 'init') {
              yield { data: segment.data, isLast: false };
              sent++;
              continue;
            }
            if (held) {
              yield { data: held.data, isLast: false };
              sent++;
            }
            held = segment;
          }
        }
      } catch (error) {
        if (!(error instanceof Mp4FormatError)) throw error;
        formatError = `ffmpeg wrote MP4 that cannot be read (${error.message})`;
        stop();
      }
    }
    clearTimeout(stallTimer);
    const exit = await child.exited;
    if (aborted()) return;
    const why = stall.hit
      ? `ffmpeg wrote nothing for ${Math.round((run.stallMs ?? RECORDING_STALL_MS) / 1000)} s`
      : (formatError ?? (exit.code === 0 && exit.spawnError === undefined ? undefined : describeExit(exit)));
    const complete = why === undefined && !segmenter.cutShort;
    if (held) {
      if (!complete) run.onCutShort?.(why ?? 'the clip ended inside a fragment');
      yield { data: held.data, isLast: true };
      return;
    }
    throw new RecordingFailed(why ?? 'ffmpeg made no video from the clip', sent > 0);
  } finally {
    clearTimeout(stallTimer);
    run.signal?.removeEventListener('abort', stop);
    // Returning early (the hub closed the stream) or failing: the child must not outlive the recording.
    await child.stop();
  }
}
