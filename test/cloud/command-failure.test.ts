import { describe, expect, it } from 'vitest';

import { BridgeError, RequestRejectedError, TransientError } from '../../src/cloud/http/errors.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';

describe('a failed command from Apple Home says which problem, and what to do', () => {
  it.each([
    ['timeout', 408, "the lock's Wi-Fi bridge did not answer in time (408). Try again in a moment."],
    ['noBridge', 409, 'the lock has no Wi-Fi bridge, so it cannot be operated remotely (409). Remote control needs a Lock Access Wi-Fi bridge paired with this lock.'],
    ['offline', 422, "the lock's Wi-Fi bridge is offline (422). Check that the bridge has power and Wi-Fi."],
    ['busy', 423, "the lock's Wi-Fi bridge is busy with another command (423). Try again in a moment."],
  ] as const)('bridge %s (%i): the problem and the advice', (problem, status, words) => {
    expect(describeCommandFailure(new BridgeError(problem, status))).toBe(words);
  });

  it('other errors: their own message, one full stop, no advice', () => {
    expect(describeCommandFailure(new RequestRejectedError('the service refused the command (400)', 400))).toBe('the service refused the command (400).');
    expect(describeCommandFailure(new TransientError('the service did not answer.'))).toBe('the service did not answer.');
  });

  it('something thrown that is not an error gives plain words, never its contents', () => {
    expect(describeCommandFailure({ token: 'secret' })).toBe('an unknown error.');
  });
});
