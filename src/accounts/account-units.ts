// The accounts of the block, each built once as a unit (account-unit.ts), in config order: the main
// account from the top-level fields, then each enabled entry of `accounts`. An extra account's link
// is shown in the status file's `accounts` section; its registrations are in its own ledger.
import type { LinkReporter } from '../cloud/link-control.js';
import type { ReconcileReport } from '../cloud/registrations/registration-report.js';
import type { TokenManager } from '../cloud/tokens/token-manager.js';
import type { LockAccessConfig } from '../config.js';
import { accountSettings } from '../config/account-settings.js';
import { AccountStatusReporter, type AccountsStatusSink } from '../status/account-status.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import type { Shutdown } from '../util/shutdown.js';
import { Signal } from '../util/signal.js';
import { accountUnit, type AccountUnit, type ExtraAccountUnit } from './account-unit.js';

export interface AccountUnits {
  readonly main: AccountUnit;
  /** The enabled extra accounts, in config order. */
  readonly extras: readonly ExtraAccountUnit[];
  /** A registration run's report, per account (only with extra accounts: a handover completes on it). */
  readonly reported: Signal<[account: string, report: ReconcileReport]>;
}

export interface AccountUnitsDeps {
  /** The plugin's folder (`lock-access/`). */
  storage: Storage;
  log: Logger;
  shutdown: Shutdown;
  /** The listener's public address (read at each registration run). */
  publicUrl: () => string | undefined;
  /** Where the main account's link and registrations are shown, made once its tokens exist. */
  mainStatus: (tokens: TokenManager) => LinkReporter;
  /** The status file, for the extra accounts' section. */
  accountsStatus: AccountsStatusSink;
}

export async function openAccountUnits(config: LockAccessConfig, deps: AccountUnitsDeps): Promise<AccountUnits> {
  const [mainSettings, ...extraSettings] = accountSettings(config);
  if (mainSettings === undefined) throw new Error('the main account is always first');
  const reported = new Signal<[account: string, report: ReconcileReport]>();
  const several = extraSettings.length > 0;
  const unitDeps = (id: string) => ({
    config,
    storage: deps.storage,
    log: deps.log,
    shutdown: deps.shutdown,
    publicUrl: deps.publicUrl,
    ...(several ? { onReport: (report: ReconcileReport) => {
      reported.emit(id, report);
    } } : {}),
  });
  const main = await accountUnit(mainSettings, { ...unitDeps(mainSettings.id), status: deps.mainStatus });
  const extras: ExtraAccountUnit[] = [];
  for (const settings of extraSettings) {
    const reporter = new AccountStatusReporter(deps.accountsStatus, settings.id, settings.name);
    const unit = await accountUnit(settings, { ...unitDeps(settings.id), status: (tokens) => extraLinkReporter(reporter, tokens) });
    extras.push({ ...unit, entry: reporter });
  }
  return { main, extras, reported };
}

/** An extra account's link in the status file's `accounts` section (its registrations are in its own ledger). */
function extraLinkReporter(reporter: AccountStatusReporter, tokens: TokenManager): LinkReporter {
  return {
    link: (state) => {
      const status = tokens.status();
      reporter.link(state, status.message, status.problem, status.setting);
    },
    registrations: () => undefined,
  };
}
