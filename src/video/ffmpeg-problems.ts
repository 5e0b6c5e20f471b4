// Why doorbell video is off, as message codes: the settings page words them in its language, the
// log in English. What ffmpeg itself said (its exit code and first error line) goes to the log only.
import { messageCatalog } from '../util/ui-message.js';

export const FFMPEG_PROBLEMS = {
  'videoProblem.noProgram': 'no program at {path}',
  'videoProblem.notOnPath': 'no ffmpeg on the PATH',
  'videoProblem.notAllowed': '{path} is not allowed to run (check its permissions)',
  'videoProblem.noVersion': '{path} did not answer "-version"',
  'videoProblem.notFfmpeg': '{path} is not ffmpeg (its -version does not say "ffmpeg version")',
  'videoProblem.noH264': 'ffmpeg {version} at {path} has no H.264 encoder (libx264 or a hardware one)',
  'videoProblem.noHls': 'ffmpeg {version} at {path} cannot read HLS playlists (no hls demuxer)',
  'videoProblem.noHttp': 'ffmpeg {version} at {path} cannot read recordings (no http protocol)',
  'videoProblem.noRtp': 'ffmpeg {version} at {path} cannot send a live view (no rtp protocol)',
  'videoProblem.noList': 'ffmpeg {version} at {path} did not list what it can do',
} as const;

export const ffmpegProblem = messageCatalog(FFMPEG_PROBLEMS);
