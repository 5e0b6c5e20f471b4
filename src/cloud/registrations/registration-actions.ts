// One planned registration action carried out: its intent is written to the ledger before any
// call (a crash during the calls leaves it unconfirmed, so the next start sees it), then the call
// is made and its outcome kept in the ledger and the run's report. Failures are reported, never thrown.
import type { Logger } from '../../util/logger.js';
import type { ApiClient } from '../http/api.js';
import { RequestRejectedError } from '../http/errors.js';
import { describeRegistrationError, type RegistrationCalls, type Run } from './registration-calls.js';
import { scopeKey, type RegistrationLedger } from './registration-ledger.js';
import type { PlannedAction } from './registration-plan.js';
import type { ReconcileReport } from './registration-report.js';
import { describeScope, isSuccessAnswer, registerPath, registrationBody } from './registration-requests.js';
import type { WebhookSecret } from './webhook-secret.js';
import { reasonOf } from '../../util/reason-messages.js';

export interface ActionDeps {
  client: ApiClient;
  calls: RegistrationCalls;
  secret: Pick<WebhookSecret, 'registeredToken'>;
  log: Logger;
  now: () => number;
}

export function recordIntent(ledger: RegistrationLedger, action: PlannedAction, attemptAt: number): void {
  if (action.op === 'delete') {
    ledger.update(scopeKey(action.entry.kind, action.entry.id), { state: 'deleting', lastAttemptAt: attemptAt });
    return;
  }
  const { desired } = action;
  const previous = ledger.get(desired.key);
  ledger.set({
    kind: desired.kind,
    id: desired.id,
    clientId: desired.clientId,
    url: desired.url,
    types: [...desired.types],
    tokenGeneration: desired.tokenGeneration,
    tokenFingerprint: desired.tokenFingerprint,
    state: 'registering',
    lastSuccessAt: previous?.lastSuccessAt,
    lastAttemptAt: attemptAt,
    lastError: previous?.lastError,
    lastReason: previous?.lastReason,
  });
}

export async function carryOut(deps: ActionDeps, ledger: RegistrationLedger, action: PlannedAction, run: Run, report: ReconcileReport): Promise<void> {
  if (action.op === 'register') {
    const { desired } = action;
    deps.log.debug(`Registering the webhook of ${describeScope(desired.kind, desired.id)} (${action.reason}).`);
    try {
      await deps.calls.call(run, async () => {
        const answer = await deps.client.request('POST', registerPath(desired.kind, desired.id), { body: registrationBody(desired, deps.secret.registeredToken) });
        if (!isSuccessAnswer(answer)) throw new RequestRejectedError('the service answered the registration without "success"', 200);
      });
      ledger.update(desired.key, { state: 'registered', lastSuccessAt: deps.now(), lastError: undefined, lastReason: undefined });
      report.registered.push(desired.key);
    } catch (error) {
      ledger.update(desired.key, { state: 'failed', lastError: describeRegistrationError(error), lastReason: reasonOf(error) });
      report.failed.push({ key: desired.key, error: describeRegistrationError(error), reason: reasonOf(error) });
    }
  } else {
    const { entry } = action;
    const key = scopeKey(entry.kind, entry.id);
    try {
      await deps.calls.deleteOne(run, entry.kind, entry.id, entry.clientId);
      ledger.remove(key);
      report.deleted.push(key);
    } catch (error) {
      ledger.update(key, { state: 'deleting', lastError: describeRegistrationError(error), lastReason: reasonOf(error) });
      report.failed.push({ key, error: describeRegistrationError(error), reason: reasonOf(error) });
    }
  }
  await ledger.flush().catch((error: unknown) => {
    deps.log.warn(`The list of registered webhooks could not be saved: ${describeRegistrationError(error)}`);
  });
}
