// Which parts a doorbell has and what they are called: the one rule both views follow, as for a
// lock (lock-parts.ts). HomeKit binds each part to its services and removes whatever a pass did not
// bind; Matter gives a part an endpoint or leaves it HomeKit-only. A new part (a camera feature, a
// sensor) is a new kind here plus one binding in each view: the views' switches over `kind` do not
// compile until they bind it.

/**
 * The kinds of part: `button` (the doorbell's main part, which rings), `camera` (shows its
 * pictures), `motion` (on until the doorbell's motion timeout ends it), `chime` (whether a press
 * rings; Home automations can turn it off), `recording` (HomeKit Secure Video's trigger: on while a
 * new recording is ready to be fetched; not the motion part, which keeps its own meaning: a hub
 * asking on motion would find no clip yet).
 */
export type DoorbellPartKind = 'button' | 'camera' | 'motion' | 'chime' | 'recording';

export interface DoorbellPart {
  kind: DoorbellPartKind;
  name: string;
}

/** What the plugin can do for doorbells beyond the basics (known from the config and ffmpeg). */
export interface DoorbellFeatures {
  /** Recordings become HomeKit Secure Video clips. */
  recording?: boolean;
}

/** The doorbell's parts, named after the doorbell (`name`: the name the views show). */
export function doorbellParts(name: string, features: DoorbellFeatures = {}): DoorbellPart[] {
  return [
    { kind: 'button', name },
    { kind: 'camera', name },
    { kind: 'motion', name: `${name} Motion` },
    { kind: 'chime', name: `${name} Chime` },
    ...(features.recording === true ? [{ kind: 'recording' as const, name: `${name} Recording` }] : []),
  ];
}
