// What a recording holds, asked of ffmpeg itself before the camera view starts: whether it has
// sound (the stream's ffmpeg cannot take "the sound, if there is any": a missing track fails the
// whole start), and its video's codec, profile, size, rate and length (whether it can be copied, and
// where its last frame is). One look at the playlist and the head of its first segment, with a
// short deadline: the question must never hold back the picture, and no answer in time means no
// sound and an encoded stream, which always works.
import type { FfmpegRun } from './ffmpeg-processes.js';
import { PIPED_PLAYLIST } from './playlist-rewrite.js';
import type { VideoRoom } from './video-room.js';

export interface ClipVideo {
  /** ffmpeg's codec name, such as h264. */
  codec: string;
  /** As ffmpeg words it ("Constrained Baseline", "Main", "High"); '' when it says none. */
  profile: string;
  pixelFormat: string;
  width: number;
  height: number;
  /** Frames per second; undefined when ffmpeg does not say. */
  fps: number | undefined;
}

export interface ClipFacts {
  audio: boolean;
  video: ClipVideo | undefined;
  /** Seconds; undefined when ffmpeg does not know (a playlist without its end). */
  duration: number | undefined;
}

/** ffmpeg lists each track of its input as "Stream #0:1...: Audio: aac ...". */
const AUDIO_TRACK = /^Stream #0:\d+.*: Audio: /;
const VIDEO_TRACK = /^Stream #0:\d+.*?: Video: (\w+)(?: \(([^)]*)\))?(.*)$/;
const DURATION = /^Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/;

const NOTHING: ClipFacts = { audio: false, video: undefined, duration: undefined };

/** Reads one line of ffmpeg's description of its input into `facts`. */
export function readProbeLine(line: string, facts: ClipFacts): void {
  if (AUDIO_TRACK.test(line)) facts.audio = true;
  const duration = DURATION.exec(line);
  if (duration) facts.duration = Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]);
  const video = VIDEO_TRACK.exec(line);
  // The first video track is the one the stream maps.
  if (!video || facts.video !== undefined) return;
  const rest = video[3] ?? '';
  const size = /, (\d{2,5})x(\d{2,5})\b/.exec(rest);
  if (!size) return;
  const fps = /, ([\d.]+) fps\b/.exec(rest) ?? /, ([\d.]+) tbr\b/.exec(rest);
  facts.video = {
    codec: video[1] ?? '',
    profile: video[2]?.startsWith('[') === false ? video[2] : '',
    pixelFormat: /, ((?:yuv|nv|gray|rgb|bgr)\w*)/.exec(rest)?.[1] ?? '',
    width: Number(size[1]),
    height: Number(size[2]),
    fps: fps ? Number(fps[1]) : undefined,
  };
}

/** What ffmpeg finds in the playlist (rewritten to the plugin's HLS relay) within `withinMs`; nothing known when late. Never rejects. */
export async function probeClip(room: VideoRoom, playlist: string, withinMs: number): Promise<ClipFacts> {
  if (withinMs <= 0) return NOTHING;
  const facts: ClipFacts = { audio: false, video: undefined, duration: undefined };
  let run: FfmpegRun;
  try {
    // No output: ffmpeg opens the input, lists its tracks and ends (with "an output is needed").
    run = room.spawn(['-loglevel', 'info', '-probesize', '500000', '-analyzeduration', '500000', ...PIPED_PLAYLIST], {
      label: 'recording check',
      stdin: 'pipe',
      onErrorLine: (line) => {
        readProbeLine(line, facts);
      },
    });
  } catch {
    return NOTHING;
  }
  if (run.stdin) {
    run.stdin.on('error', () => undefined);
    run.stdin.end(playlist);
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => {
      resolve('late');
    }, withinMs);
  });
  const answer = await Promise.race([run.exited, late]);
  clearTimeout(timer);
  if (answer === 'late') {
    await run.stop();
    return NOTHING;
  }
  return facts;
}
