// HAP numbers H.264 profiles and levels; ffmpeg and H.264 itself name them. One table for the camera
// view, the copy rule and Secure Video, so the three can never read a number differently.

/** By HAP's number: 0 baseline, 1 main, 2 high. */
export const H264_PROFILES = ['baseline', 'main', 'high'] as const;
/** By HAP's number: 0 is 3.1, 1 is 3.2, 2 is 4.0. */
export const H264_LEVELS = ['3.1', '3.2', '4.0'] as const;

export type H264Profile = (typeof H264_PROFILES)[number];
export type H264Level = (typeof H264_LEVELS)[number];

/** The profile HAP numbers `hap`, or `fallback` for a number it does not define. */
export function h264Profile(hap: number, fallback: H264Profile): H264Profile {
  return H264_PROFILES[hap] ?? fallback;
}

/** The level HAP numbers `hap`, or `fallback` for a number it does not define. */
export function h264Level(hap: number, fallback: H264Level): H264Level {
  return H264_LEVELS[hap] ?? fallback;
}
