// What the delivery watch does when events stop arriving, besides saying so: every webhook
// registration is sent again (the service may have lost them) and the public address is checked.
// The warning waits for both, each at most CHECKS_WAIT_MS, and reports what they found as messages.
import type { Clock } from '../util/clock.js';
import { reasonOf } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { deliveryMessage } from './delivery-messages.js';

/** The warning waits this long at most for the registrations and the self-check to report. */
export const CHECKS_WAIT_MS = 15_000;

export interface DeliveryChecks {
  clock: Clock;
  /** Sends every registration again; resolves with what came of it. Never rejects. */
  registerAgain(reason: string): Promise<UiMessage>;
  /** Runs the public-address self-check; resolves with its result. Never rejects. */
  selfCheck(): Promise<UiMessage>;
}

/** Registrations sent again and the self-check, each reported within CHECKS_WAIT_MS. */
export function runDeliveryChecks(checks: DeliveryChecks, reason: string): Promise<[UiMessage, UiMessage]> {
  return Promise.all([
    bounded(checks.clock, checks.registerAgain(reason), deliveryMessage('deliveryCheck.registrations.running')),
    bounded(checks.clock, checks.selfCheck(), deliveryMessage('deliveryCheck.selfCheck.running')),
  ]);
}

function bounded(clock: Clock, work: Promise<UiMessage>, meanwhile: UiMessage): Promise<UiMessage> {
  return new Promise<UiMessage>((resolve) => {
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
        resolve(deliveryMessage('deliveryCheck.failed', { reason: reasonOf(error) }));
      },
    );
  });
}
