// Every account while the plugin runs, in config order: the main account, then each extra one. Each
// runs on its own (account-run.ts); what ties them is here: a device's new owner registers it before
// its old owner deletes its own registration, an account's user route changes that account alone,
// and an extra account that is an earlier account's user is disabled before it registers anything.
import type { AccountSetup, AccountSetupDeps } from '../cloud/account-setup.js';
import type { AccountChange } from '../callbacks/event-router.js';
import type { ReconcileReport } from '../cloud/registrations/registration-report.js';
import { MAIN_ACCOUNT_ID, type LockAccessConfig, type MainDisabled } from '../config.js';
import type { DeviceRegistry } from '../model/device-registry.js';
import { errorText } from '../util/error-text.js';
import type { Shutdown } from '../util/shutdown.js';
import type { Signal } from '../util/signal.js';
import type { UiMessage } from '../util/ui-message.js';
import type { AccountDevices } from './account-devices.js';
import { runAccount } from './account-run.js';
import type { AccountUnit, ExtraAccountUnit } from './account-unit.js';
import { DistinctUsers } from './same-user.js';

/** How long an unlinking account waits for its shared devices' new owners to register them. */
const HANDOVER_LIMIT_MS = 60_000;

export interface AccountRunsDeps extends Pick<AccountSetupDeps, 'listening' | 'selfCheck'> {
  config: LockAccessConfig;
  shutdown: Shutdown;
  main: AccountUnit;
  extras: readonly ExtraAccountUnit[];
  accounts: AccountDevices;
  registry: DeviceRegistry;
  /** The main account's results in the status file's own fields: registrations, and the fields of a disabled main account. */
  mainStatus: AccountSetupDeps['status'] & { disabled(fields: readonly string[]): void };
  /** Notices on the accounts' user routes. */
  accountChanged: Signal<[AccountChange]>;
  /** Each registration run's report, per account (with extra accounts only). */
  reported: Signal<[account: string, report: ReconcileReport]>;
  /** The top-level account fields have a mistake (what to fix): the main account is disabled. */
  mainDisabled?: MainDisabled | undefined;
}

export interface AccountRuns {
  /** The main account's setup. */
  readonly main: AccountSetup;
  /** The setup of an account id (`main` or an extra id). */
  setupOf(account: string): AccountSetup | undefined;
  /** Resolves once no account's setup runs or is asked for (one account's run can ask for another's). */
  settled(): Promise<void>;
}

/**
 * Unlink (a `lifecycle` notice, or the settings page): the account's shared devices are handed over
 * first (their new owners register them), then its own registrations go and its tokens.
 */
export async function unlinkAccount(unit: AccountUnit, accounts: AccountDevices, reason: string): Promise<void> {
  await accounts.holdings?.leave(unit.account.id, HANDOVER_LIMIT_MS);
  await unit.control.unlink(reason).catch((error: unknown) => {
    unit.log.error(`Lock Access could not finish unlinking (${errorText(error)}); unlink it again in the plugin settings.`);
  });
}

/** Starts every account's setup and tokens, the main account first (an extra account is compared with it). */
export async function startAccounts(deps: AccountRunsDeps): Promise<AccountRuns> {
  const { main, extras, accounts } = deps;
  const setups = new Map<string, AccountSetup>();
  const setupOf = (account: string) => setups.get(account);
  // A new owner registers the device; once it has, the old owner runs to delete its own registration.
  accounts.ownerChanged.follow((_key, from, to) => {
    const account = to ?? from;
    if (account !== undefined) setupOf(account)?.request();
  });
  deps.reported.follow((account, report) => {
    accounts.holdings?.registered(account, [...report.registered, ...report.unchanged]);
  });
  deps.accountChanged.follow((change) => {
    const id = change.account ?? MAIN_ACCOUNT_ID;
    const unit = accounts.unit(id);
    const setup = setupOf(id);
    if (unit === undefined || setup === undefined) return;
    if (change.kind === 'membership') setup.membershipChanged(change.lockId, change.change, change.userId);
    // Nobody awaits this: a failure is logged, never left unhandled.
    else void unlinkAccount(unit, accounts, 'the Lock Access account was deleted');
  });
  const common = { config: deps.config, shutdown: deps.shutdown, accounts, registry: deps.registry, listening: deps.listening };
  const mainSetup = await runAccount(main, { ...common, status: deps.mainStatus, selfCheck: deps.selfCheck, ...(deps.mainDisabled === undefined ? {} : { disabled: deps.mainDisabled.text }) });
  if (deps.mainDisabled !== undefined) deps.mainStatus.disabled(deps.mainDisabled.fields);
  setups.set(MAIN_ACCOUNT_ID, mainSetup);
  // An account that had to wait for its comparison wants a run again later; its run asks first.
  const distinct = new DistinctUsers([main, ...extras], (account) => accounts.linked(account), (unit) => {
    unit.setupWanted.emit(false);
  });
  deps.shutdown.on('halt', () => {
    distinct.stop();
  });
  for (const unit of extras) {
    const id = unit.account.id;
    const disable = (reason: UiMessage) => {
      unit.log.error(`This account is disabled. ${reason.text}`);
      unit.entry.disabled(reason);
      accounts.stop(id);
    };
    setups.set(id, await runAccount(unit, {
      ...common,
      // Its registrations are in its own ledger; the public address is one for all accounts, and the main account's setup checks it.
      status: { registrations: () => undefined, knownFrom: () => undefined },
      selfCheck: () => Promise.resolve(),
      mayRun: () => distinct.check(unit, disable, (reason) => {
        unit.entry.waitFor(reason);
        unit.status.link(unit.tokens.state);
      }),
    }));
  }
  // An account that links may be the same user as a later one already running without a verdict
  // (it was compared while this one was not linked): that one is compared again now, before its next run.
  for (const [index, unit] of [main, ...extras].entries()) {
    unit.tokens.onStateChange((state) => {
      if (state !== 'linked') return;
      for (const later of extras.slice(index)) if (distinct.undecided(later) && accounts.linked(later.account.id)) later.setupWanted.emit(false);
    });
  }
  const settled = async () => {
    for (let busy = true; busy;) busy = (await Promise.all([...setups.values()].map((setup) => setup.settled()))).includes(true);
  };
  return { main: mainSetup, setupOf, settled };
}
