// What a reconcile run reports: to its caller (ReconcileReport), to the log (one line per run), and
// per scope to the status page (RegistrationStatus, never the token).
import type { Logger } from '../../util/logger.js';
import { withoutCredentials } from '../../util/redact-url.js';
import { messageCatalog, type UiMessage } from '../../util/ui-message.js';
import type { HookKind, LedgerEntry } from './registration-ledger.js';

export interface ReconcileReport {
  /** Ledger keys (`lock:ID`, `doorbell:ID`, `user`) sent and confirmed in this run. */
  registered: string[];
  deleted: string[];
  /** Confirmed, current and fresh: nothing was sent. */
  unchanged: string[];
  /** `error` for the log, `reason` the same as a code the settings page words. */
  failed: { key: string; error: string; reason: UiMessage }[];
  /** The account is not linked (or no longer): nothing more is tried until the platform calls again. */
  authorizationLost: boolean;
  /** True when the run did nothing because the registrar was stopped or an unlink took over. */
  skipped: boolean;
}

export interface RegistrationStatus {
  kind: HookKind;
  /** Device id; empty for the user registration. */
  id: string;
  url: string;
  /** pending: sent (or about to be) and not confirmed yet. */
  state: 'registered' | 'pending' | 'failed' | 'deleting';
  /** ISO time of the last confirmation by the service. */
  lastSuccessAt: string | undefined;
  lastError: string | undefined;
  /** Why it failed, for the settings page (absent in a ledger an earlier version wrote). */
  lastReason?: UiMessage | undefined;
}

/** What an unlink did: how many registrations it deleted, and each one it could not (kept to retry after the next link). */
export interface UnlinkOutcome {
  deleted: number;
  left: RegistrationStatus[];
  /** The ledger could not be read or written: the list above may be incomplete (`reason`: the same as a code the settings page words). */
  error?: string;
  reason?: UiMessage;
}

export function emptyReport(skipped: boolean): ReconcileReport {
  return { registered: [], deleted: [], unchanged: [], failed: [], authorizationLost: false, skipped };
}

const STATUS_OF: Record<LedgerEntry['state'], RegistrationStatus['state']> = { registered: 'registered', registering: 'pending', failed: 'failed', deleting: 'deleting' };

/** The ledger's entries as the status page shows them. */
export function registrationStatus(entries: readonly LedgerEntry[]): RegistrationStatus[] {
  return entries.map((entry) => ({
    kind: entry.kind,
    id: entry.id,
    url: withoutCredentials(entry.url),
    state: STATUS_OF[entry.state],
    lastSuccessAt: entry.lastSuccessAt === undefined ? undefined : new Date(entry.lastSuccessAt).toISOString(),
    lastError: entry.lastError,
    lastReason: entry.lastReason,
  }));
}

/** One line per run: a warning with the first failures, info when something changed, else debug. */
export function logOutcome(report: ReconcileReport, log: Logger): void {
  if (report.skipped) {
    log.debug('Webhook registration stopped early (unlink or shutdown).');
    return;
  }
  if (report.authorizationLost) {
    log.warn('Webhooks could not be registered because the account is not linked: link it again in the plugin settings.');
    return;
  }
  const parts = [`${report.registered.length} registered`, `${report.deleted.length} deleted`, `${report.unchanged.length} unchanged`];
  if (report.failed.length > 0) {
    const shown = report.failed.slice(0, 5).map((failure) => `${failure.key}: ${failure.error}`);
    log.warn(`Webhooks: ${parts.join(', ')}, ${report.failed.length} failed (tried again later): ${shown.join('; ')}${report.failed.length > 5 ? '; ...' : ''}`);
  } else if (report.registered.length + report.deleted.length > 0) {
    log.info(`Webhooks: ${parts.join(', ')}.`);
  } else {
    log.debug(`Webhooks: ${parts.join(', ')}.`);
  }
}

export const RESEND_MESSAGES = {
  'resend.notLinked': 'the webhook registrations could not be sent again: the account is not linked',
  'resend.skipped': 'the webhook registrations could not be sent again now (none made yet, or the plugin is stopping)',
  'resend.confirmed': 'every webhook registration was sent again ({confirmed} confirmed)',
  'resend.someFailed': 'every webhook registration was sent again: {confirmed} confirmed, {failed} failed (the log says why)',
} as const;

const say = messageCatalog(RESEND_MESSAGES);

/** What sending every registration again came to, as a message (its text a log line's clause). */
export function describeResend(report: ReconcileReport): UiMessage {
  if (report.authorizationLost) return say('resend.notLinked');
  if (report.skipped) return say('resend.skipped');
  const confirmed = report.registered.length;
  if (report.failed.length === 0) return say('resend.confirmed', { confirmed });
  return say('resend.someFailed', { confirmed, failed: report.failed.length });
}
