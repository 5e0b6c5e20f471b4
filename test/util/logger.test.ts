import { describe, expect, it } from 'vitest';

import { deviceLogger } from '../../src/util/logger.js';
import { recordingLog } from '../callbacks/helpers.js';

describe('a device\'s log prefix, in one place', () => {
  it('every level starts with the device\'s name, read per line so a rename shows at once', () => {
    const { log, lines } = recordingLog();
    let name = 'Front Door';
    const device = deviceLogger(log, () => name);
    device.info('locked.');
    device.warn('the bridge is offline.');
    name = 'Main Door';
    device.error('could not lock.');
    device.debug('joining it.');
    expect(lines).toEqual(['info Front Door: locked.', 'warn Front Door: the bridge is offline.', 'error Main Door: could not lock.', 'debug Main Door: joining it.']);
  });
});
