// Words for a remote command that failed, for the lock's log line (the model writes it): the cloud
// error's own message, plus what to do when the lock's bridge was the problem.
import { BridgeError, type BridgeProblem } from './http/errors.js';
import { errorText } from '../util/error-text.js';

const BRIDGE_ADVICE: Record<BridgeProblem, string> = {
  timeout: 'Try again in a moment.',
  noBridge: 'Remote control needs a Lock Access Wi-Fi bridge paired with this lock.',
  offline: 'Check that the bridge has power and Wi-Fi.',
  busy: 'Try again in a moment.',
};

/** "the lock's Wi-Fi bridge is offline (422). Check that the bridge has power and Wi-Fi." */
export function describeCommandFailure(error: unknown): string {
  const reason = errorText(error, 'an unknown error').replace(/\.$/, '');
  const advice = error instanceof BridgeError ? ` ${BRIDGE_ADVICE[error.problem]}` : '';
  return `${reason}.${advice}`;
}
