// The extra accounts while the plugin runs: each has its own setup (discovery, registrations with
// its own ledger), its token file, its reconcile timer, its membership and lifecycle notices, and
// the check that it is not the same user as an earlier account. The main account's part of this
// stays in watchers-stage.ts.
import { unwatchFile, watchFile } from 'node:fs';

import type { AccountUnit } from '../accounts/account-unit.js';
import { AccountSetup, type RegistryView } from '../cloud/account-setup.js';
import { AccountUser } from '../cloud/account-user.js';
import type { AccountChange } from '../callbacks/event-router.js';
import type { LockAccessConfig } from '../config.js';
import { TOKENS_FILE } from '../storage/token-file.js';
import { AccountStatusReporter } from '../status/account-status.js';
import { errorText } from '../util/error-text.js';
import type { AccountDevices } from './account-devices.js';
import type { Files, PluginContext } from './link-stage.js';
import type { Listener } from './listener-stage.js';

const RECONCILE_INTERVAL_MS = 6 * 60 * 60 * 1000;
const TOKEN_FILE_POLL_MS = 5_000;
/** How long an unlinking account waits for its shared devices' new owners to register them. */
const HANDOVER_LIMIT_MS = 60_000;

/** An account's view of the one registry: its own devices, the ones it registers (it owns). */
export function accountScope(accounts: AccountDevices, listener: Pick<Listener, 'registry'>, account: string): RegistryView {
  const holdings = accounts.holdings;
  if (holdings === undefined) return listener.registry;
  return {
    remembered: () => holdings.remembered(account),
    sync: (wanted, sweep) => {
      holdings.report(account, wanted, sweep);
    },
    remove: (kind, id) => {
      holdings.remove(account, kind, id);
    },
    lockIds: () => holdings.owned(account, 'lock'),
    doorbellIds: () => holdings.owned(account, 'doorbell'),
    nameOf: (kind, id) => listener.registry.nameOf(kind, id),
  };
}

/** The block's config as one account sees it: its own devices and switches. */
export function accountConfig(config: LockAccessConfig, unit: AccountUnit): LockAccessConfig {
  const { locks, doorbells, discoverDevices, userWebhook } = unit.account;
  return { ...config, locks, doorbells, discoverDevices, userWebhook };
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

/** Whether an extra account is another user than every earlier linked account (asked once it is linked). */
class DistinctUsers {
  private readonly users = new Map<string, AccountUser>();
  private readonly verdicts = new Map<string, boolean>();

  constructor(private readonly all: readonly AccountUnit[], private readonly accounts: AccountDevices) {}

  async check(unit: AccountUnit, disable: (reason: string) => void): Promise<boolean> {
    const known = this.verdicts.get(unit.account.id);
    if (known !== undefined) return known;
    const own = await this.user(unit).id();
    // Unknown (no answer yet): nothing can be compared; the next run asks again.
    if (own === undefined) return true;
    for (const earlier of this.all.slice(0, this.all.indexOf(unit))) {
      if (!this.accounts.linked(earlier.account.id)) continue;
      if ((await this.user(earlier).id()) !== own) continue;
      const other = earlier.account.main ? 'the main account' : `account ${earlier.account.name} (${earlier.account.id})`;
      disable(`it is the same Lock Access user as ${other} (GET /users/me answers the same user), so it is disabled and registers nothing: registering it would take over the registrations of ${other}. Remove this entry, or link it to another Lock Access account`);
      this.verdicts.set(unit.account.id, false);
      return false;
    }
    this.verdicts.set(unit.account.id, true);
    return true;
  }

  private user(unit: AccountUnit): AccountUser {
    let user = this.users.get(unit.account.id);
    if (user === undefined) {
      user = new AccountUser(unit.client);
      this.users.set(unit.account.id, user);
    }
    return user;
  }
}

/** Starts every extra account; the returned setups are keyed by account id. */
export async function startExtraAccounts(context: PluginContext, files: Files, listener: Listener, units: { main: AccountUnit; extras: readonly AccountUnit[] }): Promise<Map<string, AccountSetup>> {
  const { config, shutdown } = context;
  const { accounts } = listener;
  const distinct = new DistinctUsers([units.main, ...units.extras], accounts);
  const setups = new Map<string, AccountSetup>();
  for (const unit of units.extras) {
    const id = unit.account.id;
    const reporter = new AccountStatusReporter(files.status, id, unit.account.name);
    const setup = new AccountSetup({
      config: accountConfig(config, unit),
      log: unit.log,
      client: unit.client,
      registry: accountScope(accounts, listener, id),
      status: { registrations: () => undefined, knownFrom: () => undefined },
      isIdle: () => unit.control.idle || accounts.isStopped(id),
      isStopped: () => shutdown.stopping,
      registrar: () => unit.control.registrar,
      listening: () => listener.receiver !== undefined,
      // The public address is one for all accounts: the main account's setup checks it.
      selfCheck: () => Promise.resolve(),
    });
    setups.set(id, setup);
    const disable = (reason: string) => {
      unit.log.error(`This account is disabled: ${reason}.`);
      reporter.disabled(reason);
      accounts.stop(id);
    };
    unit.setupWanted.follow((asFirstRun) => {
      // The same user as an earlier account is found before it registers anything.
      void distinct.check(unit, disable).then((ok) => {
        if (ok) setup.request(asFirstRun);
      });
    });
    unit.tokens.onStateChange((state) => {
      unit.control.onLinkState(state);
      accounts.holdings?.relink();
    });
    // A setting to fix or tokens not saved yet change the message, not the state.
    unit.tokens.onStatusChange(() => {
      const status = unit.tokens.status();
      reporter.link(unit.tokens.state, status.message, status.problem === 'settings' ? 'settings' : undefined);
    });
    await unit.tokens.start();
    const tokensFile = unit.storage.file(TOKENS_FILE);
    watchFile(tokensFile, { interval: TOKEN_FILE_POLL_MS, persistent: false }, () => {
      void unit.tokens.syncWithStore();
    });
    const reconcile = setInterval(() => {
      if (unit.tokens.state === 'linked' && !unit.control.idle) setup.request();
    }, RECONCILE_INTERVAL_MS).unref();
    shutdown.on('halt', () => {
      unwatchFile(tokensFile);
      clearInterval(reconcile);
    });
  }
  return setups;
}

/** A notice on an extra account's user route: its membership changes, or its deletion. */
export function extraAccountChanged(change: AccountChange, setups: ReadonlyMap<string, AccountSetup>, accounts: AccountDevices): void {
  const id = change.account;
  if (id === undefined) return;
  const unit = accounts.unit(id);
  const setup = setups.get(id);
  if (unit === undefined || setup === undefined) return;
  if (change.kind === 'membership') {
    setup.membershipChanged(change.lockId, change.change, change.userId);
    return;
  }
  void unlinkAccount(unit, accounts, 'the Lock Access account was deleted');
}
