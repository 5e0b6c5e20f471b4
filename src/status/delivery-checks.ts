// What the delivery watch does when events stop arriving, besides saying so: every webhook
// registration is sent again (the service may have lost them) and the public address is checked.
// The warning waits for both, each at most CHECKS_WAIT_MS, and reports what they found in words.
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';

/** The warning waits this long at most for the registrations and the self-check to report. */
export const CHECKS_WAIT_MS = 15_000;

export interface DeliveryChecks {
  clock: Clock;
  /** Sends every registration again; resolves with what came of it, in words. Never rejects. */
  registerAgain(reason: string): Promise<string>;
  /** Runs the public-address self-check; resolves with its result, in words. Never rejects. */
  selfCheck(): Promise<string>;
}

/** Registrations sent again and the self-check, each reported within CHECKS_WAIT_MS. */
export function runDeliveryChecks(checks: DeliveryChecks, reason: string): Promise<[string, string]> {
  return Promise.all([
    bounded(checks.clock, checks.registerAgain(reason), 'every webhook registration is being sent again (the log says how it went)'),
    bounded(checks.clock, checks.selfCheck(), 'the public address self-check is still running (the log says how it went)'),
  ]);
}

function bounded(clock: Clock, work: Promise<string>, meanwhile: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const timer = clock.setTimeout(() => {
      resolve(meanwhile);
    }, CHECKS_WAIT_MS);
    work.then(
      (words) => {
        clock.clearTimeout(timer);
        resolve(words);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        resolve(`it failed (${errorText(error)})`);
      },
    );
  });
}
