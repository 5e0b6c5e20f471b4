// Size of the committed motion still image (assets/motion.jpg), used in motion callbacks.
export const MOTION_IMAGE = { width: 320, height: 240 } as const;
