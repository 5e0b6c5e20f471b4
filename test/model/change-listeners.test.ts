import { describe, expect, it } from 'vitest';

import { ChangeListeners } from '../../src/model/change-listeners.js';
import { recordingLog } from '../callbacks/helpers.js';

describe('who hears a device\'s change first does not depend on who was built first', () => {
  it('the model\'s own rules (the guard) hear a change before every view, whenever they subscribed', () => {
    const { log } = recordingLog();
    const changes = new ChangeListeners<string>(log);
    const heard: string[] = [];
    changes.add((change) => heard.push(`homekit ${change}`));
    changes.add((change) => heard.push(`guard ${change}`), 'model');
    changes.add((change) => heard.push(`matter ${change}`));
    changes.emit('unlocked');
    expect(heard).toEqual(['guard unlocked', 'homekit unlocked', 'matter unlocked']);
  });

  it('a listener that throws is logged (through the device\'s logger) and the others still hear the change', () => {
    const { log, lines } = recordingLog();
    const changes = new ChangeListeners<string>(log);
    const heard: string[] = [];
    changes.add(() => {
      throw new Error('boom');
    }, 'model');
    const stop = changes.add((change) => heard.push(change));
    changes.emit('a');
    stop();
    changes.emit('b');
    expect(heard).toEqual(['a']);
    expect(lines).toEqual(['error a follower of its state failed (boom).', 'error a follower of its state failed (boom).']);
  });
});
