// The `video` section of the config: where ffmpeg is, how long a recording plays in the camera
// view, and whether recordings become HomeKit Secure Video clips. Part of the config schema.
import { z } from 'zod/v3';

import { DEFAULT_REPLAY_MINUTES, MAX_REPLAY_MINUTES } from '../settings.js';
import { fieldProblem } from '../util/field-messages.js';

const REPLAY = 'video.replayMinutes';

/** Doorbell video: the camera view's recordings and HomeKit Secure Video, both through ffmpeg. */
export const videoSchema = z.object({
  /** The ffmpeg program; absent: `ffmpeg` on the PATH. */
  ffmpegPath: z.string().trim().optional(),
  /** A recording newer than this plays in the camera view (0: never, the still picture only). */
  replayMinutes: z
    .number({ message: fieldProblem('config.field.minutes', { field: REPLAY }) })
    .int(fieldProblem('config.field.wholeMinutes', { field: REPLAY }))
    .min(0, fieldProblem('config.field.neverToMax', { field: REPLAY, max: MAX_REPLAY_MINUTES }))
    .max(MAX_REPLAY_MINUTES, fieldProblem('config.field.neverToMax', { field: REPLAY, max: MAX_REPLAY_MINUTES }))
    .default(DEFAULT_REPLAY_MINUTES),
  /** Recordings become HomeKit Secure Video clips. */
  secureVideo: z.boolean({ message: fieldProblem('config.field.switch', { field: 'video.secureVideo' }) }).default(true),
});

export type VideoConfig = z.infer<typeof videoSchema>;
