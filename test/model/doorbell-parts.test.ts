// One rule for which parts a doorbell has and their names: HomeKit binds each part to its services,
// Matter gives the button and motion an endpoint each.
import { describe, expect, it } from 'vitest';

import { doorbellParts } from '../../src/model/doorbell-parts.js';

describe('which parts a doorbell has', () => {
  it('the button, the camera, motion and the chime, named after the doorbell', () => {
    expect(doorbellParts('Front Doorbell')).toEqual([
      { kind: 'button', name: 'Front Doorbell' },
      { kind: 'camera', name: 'Front Doorbell' },
      { kind: 'motion', name: 'Front Doorbell Motion' },
      { kind: 'chime', name: 'Front Doorbell Chime' },
    ]);
  });

  it('with Secure Video, a recording trigger named after the doorbell too; without it, none', () => {
    expect(doorbellParts('Front Doorbell', { recording: true }).at(-1)).toEqual({ kind: 'recording', name: 'Front Doorbell Recording' });
    expect(doorbellParts('Front Doorbell', { recording: false }).map((part) => part.kind)).not.toContain('recording');
  });
});
