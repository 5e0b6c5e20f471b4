// Which parts a doorbell has and what they are called: the one rule both views follow, as for a
// lock (lock-parts.ts). HomeKit binds each part to its services and removes whatever a pass did not
// bind; Matter gives a part an endpoint or leaves it HomeKit-only. A new part (a camera feature, a
// sensor) is a new kind here plus one binding in each view: the views' switches over `kind` do not
// compile until they bind it.

export type DoorbellPart =
  /** The button: the doorbell's main part, which rings. */
  | { kind: 'button'; name: string }
  /** The camera that shows the doorbell's pictures. */
  | { kind: 'camera'; name: string }
  /** Motion seen by the doorbell, on until the doorbell's motion timeout ends it. */
  | { kind: 'motion'; name: string }
  /** Whether a press rings (Home automations can turn it off). */
  | { kind: 'chime'; name: string };

export type DoorbellPartKind = DoorbellPart['kind'];

/** The doorbell's parts, named after the doorbell (`name`: the name the views show). */
export function doorbellParts(name: string): DoorbellPart[] {
  return [
    { kind: 'button', name },
    { kind: 'camera', name },
    { kind: 'motion', name: `${name} Motion` },
    { kind: 'chime', name: `${name} Chime` },
  ];
}
