// The last stage: what keeps the plugin in line with the account while it runs. The setup against
// the account (discovery, registrations, the first run's checks) now and every few hours, the
// token file (a link or unlink made in the settings UI), the public address's self-check and the
// delivery watch; each follows what the earlier stages announce.
import { startAccounts, type AccountRuns } from '../accounts/account-runs.js';
import { warnDepartedAccounts } from '../accounts/departed-accounts.js';
import type { AccountSetup } from '../cloud/account-setup.js';
import { selfCheckOnce } from '../cloud/startup-checks.js';
import { SelfCheckWatch } from '../status/self-check-watch.js';
import { watchDelivery, type Delivery } from './delivery.js';
import type { Files, Link, PluginContext } from './link-stage.js';
import type { Listener } from './listener-stage.js';
import type { Views } from './views-stage.js';

export interface Watchers {
  readonly setup: AccountSetup;
  /** Every account's setup. */
  readonly runs: AccountRuns;
  /** The self-check of the public address, repeating on its own once run. */
  readonly selfChecks: SelfCheckWatch;
  readonly delivery: Delivery;
}

export async function watchersStage(context: PluginContext, files: Files, link: Link, listener: Listener, views: Views): Promise<Watchers> {
  const { config, log, shutdown } = context;
  const { address, publisher } = link;
  const selfChecks = new SelfCheckWatch({
    check: () => selfCheckOnce({ publicUrl: address.publicUrl ?? '', instanceNonce: listener.instanceNonce }),
    publish: (record) => {
      publisher.update({ selfCheck: record });
    },
    log,
    now: Date.now,
    setTimer: (fn, ms) => setTimeout(fn, ms).unref(),
    clearTimer: (handle) => {
      clearTimeout(handle as NodeJS.Timeout);
    },
  });
  shutdown.on('halt', () => {
    selfChecks.stop();
  });
  const runs = await startAccounts({
    config,
    shutdown,
    main: link.main,
    extras: link.extras,
    accounts: listener.accounts,
    registry: listener.registry,
    mainStatus: publisher,
    accountChanged: listener.router.accountChanged,
    reported: link.reported,
    mainDisabled: context.mainDisabled,
    listening: () => listener.receiver !== undefined,
    // Without an address yet (a tunnel connecting), the address's arrival runs it.
    selfCheck: () => (address.publicUrl === undefined ? Promise.resolve() : selfChecks.runNow()),
  });
  const setup = runs.main;
  const named = new Set([...config.accounts.map((entry) => entry.id), ...(context.disabledAccountIds ?? [])]);
  void warnDepartedAccounts(files.storage, named, log);
  // After the tokens: the watch's first look at the way in asks the service only once linked. An
  // address announced before this needs nothing here: the first setup run registers and checks
  // whatever address there is then.
  const delivery = watchDelivery(context, files, link, listener, { selfChecks, showSensor: (feed) => views.homekit.deliverySensor(feed) });
  followAddress(context, link, { runs, delivery, selfChecks });
  return { setup, runs, selfChecks, delivery };
}

/** A new address: every account's registrations follow it at once, then the first run's state refresh if it waited for them and a delivery check (callbacks through the old way in may have been lost), and the self-check. */
function followAddress({ shutdown }: PluginContext, { address, publisher, main, extras }: Link, parts: { runs: AccountRuns; delivery: Delivery; selfChecks: SelfCheckWatch }): void {
  const { runs, delivery, selfChecks } = parts;
  address.newAddress.follow(() => {
    if (shutdown.stopping) return;
    const followed = [main, ...extras].map(async ({ account, control }) => {
      const registrar = control.idle ? undefined : control.registrar;
      const report = registrar === undefined ? undefined : await registrar.addressChanged();
      // The main account's registrations are in the status file; an extra account's in its own ledger.
      if (account.main && registrar !== undefined && report !== undefined && !report.skipped) publisher.registrations(registrar.status());
      // refreshStateOnStart waited for an address to be registered at.
      void runs.setupOf(account.id)?.registered(report);
    });
    void Promise.allSettled(followed).then(() => delivery.checkNow());
    void selfChecks.runNow();
  });
  address.wayInLost.follow(() => {
    void delivery.checkNow();
  });
}
