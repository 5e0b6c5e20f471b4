// Unlink ("User unlink ... deletes every registration"): every scope the ledger knows and
// the user registration, all within the pool's bounds. What could not be deleted stays in the
// ledger with its error, so the next link deletes it; an empty ledger is erased.
import type { Logger } from '../../util/logger.js';
import { describeRegistrationError, type RegistrationCalls, type Run } from './registration-calls.js';
import { type HookKind, type RegistrationLedger, scopeKey } from './registration-ledger.js';
import { registrationStatus, type UnlinkOutcome } from './registration-report.js';
import { describeScope } from './registration-requests.js';
import { reasonOf } from '../../util/reason-messages.js';

export interface DeleteAllOptions {
  calls: RegistrationCalls;
  /** Our client id: the user registration's delete path names it. */
  clientId: string;
  log: Logger;
  now: () => number;
}

/** Rejects only when the ledger cannot be written; failed deletes are logged, kept and returned. */
export async function deleteAllRegistrations(ledger: RegistrationLedger, run: Run, options: DeleteAllOptions): Promise<UnlinkOutcome> {
  const { calls, clientId, log, now } = options;
  const targets: { kind: HookKind; id: string; clientId: string }[] = ledger.all().map((entry) => ({ kind: entry.kind, id: entry.id, clientId: entry.clientId }));
  // The service may hold a user registration this ledger never saw (another install, a lost file).
  if (!targets.some((target) => target.kind === 'user')) targets.push({ kind: 'user', id: '', clientId });
  for (const target of targets) ledger.update(scopeKey(target.kind, target.id), { state: 'deleting', lastAttemptAt: now() });
  await ledger.flush();
  const failures: string[] = [];
  let deleted = 0;
  await Promise.all(
    targets.map(async (target) => {
      const key = scopeKey(target.kind, target.id);
      try {
        await calls.deleteOne(run, target.kind, target.id, target.clientId);
        ledger.remove(key);
        deleted += 1;
      } catch (error) {
        ledger.update(key, { lastError: describeRegistrationError(error), lastReason: reasonOf(error) });
        failures.push(`${describeScope(target.kind, target.id)}: ${describeRegistrationError(error)}`);
      }
    }),
  );
  if (ledger.size === 0) {
    await ledger.erase();
    log.info('Unlinked: every webhook registration was deleted.');
    return { deleted, left: [] };
  }
  await ledger.flush();
  log.warn(`Unlinked, but ${failures.length} webhook registration(s) could not be deleted and are kept to retry after the next link: ${failures.slice(0, 5).join('; ')}`);
  return { deleted, left: registrationStatus(ledger.all()) };
}
