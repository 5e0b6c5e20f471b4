// Whether a recording's video can go to the viewer as it is (copied) rather than encoded again. It
// fits when it is H.264 in 4:2:0 (what HomeKit decodes), of a profile at or below the one selected,
// no larger than the selected size on either side, at or below the selected frame rate, and within
// the selected level's limits for picture size and macroblocks per second (so the viewer's decoder,
// set up for that level, keeps up). The bitrate cannot be told before the stream (the playlist does
// not say it): recordings are made for upload and stay well below what HomeKit asks on a home
// network; a viewer on a slow link asks for a smaller size, which a camera's clip rarely fits, and
// then the clip is encoded at the asked bitrate.
import type { ClipVideo } from './clip-probe.js';
import { H264_PROFILES, h264Level, type H264Level } from './h264-names.js';

/** What the viewer selected (HAP's numbering: profile 0 baseline, 1 main, 2 high; level 0 is 3.1, 1 is 3.2, 2 is 4.0). */
export interface CopySelection {
  width: number;
  height: number;
  fps: number;
  profile: number;
  level: number;
}

/** H.264's limits per level: largest picture in macroblocks, macroblocks per second. */
const LEVEL_LIMITS: Readonly<Record<H264Level, { frame: number; perSecond: number }>> = {
  '3.1': { frame: 3_600, perSecond: 108_000 },
  '3.2': { frame: 5_120, perSecond: 216_000 },
  '4.0': { frame: 8_192, perSecond: 245_760 },
};
/** A clip at 15.02 fps is a 15 fps clip. */
const RATE_SLACK = 0.1;

/** Why the clip is encoded rather than copied, or undefined when it fits. */
export function whyNotCopied(video: ClipVideo | undefined, asked: CopySelection): string | undefined {
  if (video === undefined) return 'its video could not be examined in time';
  if (video.codec !== 'h264') return `its video is ${video.codec}, not H.264`;
  if (!/^yuvj?420p$/.test(video.pixelFormat)) return `its pictures are ${video.pixelFormat || 'of an unknown kind'}, not 4:2:0`;
  // ffmpeg names a baseline clip "Constrained Baseline"; HAP's numbers follow H264_PROFILES.
  const rank = H264_PROFILES.findIndex((name) => name === video.profile.toLowerCase().replace(/^constrained /, ''));
  if (rank < 0 || rank > asked.profile) return `its H.264 profile (${video.profile || 'unknown'}) is above the one asked for`;
  if (video.width > asked.width || video.height > asked.height) return `it is ${video.width}x${video.height}, larger than the ${asked.width}x${asked.height} asked for`;
  if (video.fps === undefined || video.fps > asked.fps + RATE_SLACK) return `its frame rate (${video.fps ?? 'unknown'}) is above the ${asked.fps} fps asked for`;
  const limits = LEVEL_LIMITS[h264Level(asked.level, '3.1')];
  const macroblocks = Math.ceil(video.width / 16) * Math.ceil(video.height / 16);
  if (macroblocks > limits.frame || macroblocks * video.fps > limits.perSecond) return 'it is above the H.264 level asked for';
  return undefined;
}
