// Whether a recording has sound, asked of ffmpeg itself before the camera view starts: the stream's
// ffmpeg cannot take "the sound, if there is any" (a missing track fails the whole start), so the
// view learns it first. The question has a short deadline: sound must never hold back the picture,
// and no answer in time means no sound.
import type { FfmpegRun } from './ffmpeg-processes.js';
import type { VideoRoom } from './video-room.js';

/** ffmpeg lists each track of its input as "Stream #0:1...: Audio: aac ...". */
const AUDIO_TRACK = /^Stream #0:\d+.*: Audio: /;

/** Resolves true when ffmpeg finds a sound track in the playlist within `withinMs`; false otherwise. Never rejects. */
export async function clipHasAudio(room: VideoRoom, playlist: string, withinMs: number): Promise<boolean> {
  if (withinMs <= 0) return false;
  let found = false;
  let run: FfmpegRun;
  try {
    // No output: ffmpeg opens the input, lists its tracks and ends (with "an output is needed").
    run = room.spawn(['-loglevel', 'info', '-probesize', '500000', '-analyzeduration', '500000', '-i', playlist], {
      label: 'recording sound check',
      onErrorLine: (line) => {
        if (AUDIO_TRACK.test(line)) found = true;
      },
    });
  } catch {
    return false;
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
    return false;
  }
  return found;
}
