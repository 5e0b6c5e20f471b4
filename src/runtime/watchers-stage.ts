// The last stage: what keeps the plugin in line with the account while it runs. The setup against
// the account (discovery, registrations, the first run's checks) now and every few hours, the
// token file (a link or unlink made in the settings UI), the public address's self-check and the
// delivery watch; each follows what the earlier stages announce.
import { unwatchFile, watchFile } from 'node:fs';

import { AccountSetup } from '../cloud/account-setup.js';
import { MAIN_ACCOUNT_ID } from '../config.js';
import { selfCheckOnce } from '../cloud/startup-checks.js';
import { TOKENS_FILE } from '../storage/token-file.js';
import { SelfCheckWatch } from '../status/self-check-watch.js';
import { errorText } from '../util/error-text.js';
import { watchDelivery, type Delivery } from './delivery.js';
import { accountScope, extraAccountChanged, startExtraAccounts, unlinkAccount } from './extra-accounts.js';
import type { Files, Link, PluginContext } from './link-stage.js';
import type { Listener } from './listener-stage.js';
import type { Views } from './views-stage.js';

/** Registrations are confirmed again this often even when nothing changed (the registrar re-sends those older than a day). */
const RECONCILE_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** How often the token file is checked for a link or unlink made in the settings UI. */
const TOKEN_FILE_POLL_MS = 5_000;

export interface Watchers {
  readonly setup: AccountSetup;
  /** The self-check of the public address, repeating on its own once run. */
  readonly selfChecks: SelfCheckWatch;
  readonly delivery: Delivery;
}

export async function watchersStage(context: PluginContext, files: Files, link: Link, listener: Listener, views: Views): Promise<Watchers> {
  const { config, log, shutdown } = context;
  const { address, control, publisher } = link;
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
  const setup = new AccountSetup({
    config,
    log,
    client: link.client,
    registry: accountScope(listener.accounts, listener, MAIN_ACCOUNT_ID),
    status: publisher,
    isIdle: () => control.idle,
    isStopped: () => shutdown.stopping,
    registrar: () => control.registrar,
    listening: () => listener.receiver !== undefined,
    // Without an address yet (a tunnel connecting), the address's arrival runs it.
    selfCheck: () => (address.publicUrl === undefined ? Promise.resolve() : selfChecks.runNow()),
  });
  link.setupWanted.follow((asFirstRun) => {
    setup.request(asFirstRun);
  });
  // Filled once the main account's tokens have started: an extra account is compared with it.
  let extraSetups: ReadonlyMap<string, AccountSetup> = new Map();
  const setupOf = (account: string | undefined) => (account === undefined || account === MAIN_ACCOUNT_ID ? setup : extraSetups.get(account));
  // A new owner registers the device; once it has, the old owner runs to delete its own registration.
  listener.accounts.ownerChanged.follow((_key, from, to) => {
    if (to !== undefined) setupOf(to)?.request();
    else setupOf(from)?.request();
  });
  link.reported.follow((account, report) => {
    listener.accounts.holdings?.registered(account, [...report.registered, ...report.unchanged]);
  });
  listener.router.accountChanged.follow((change) => {
    if (change.account !== undefined) {
      extraAccountChanged(change, extraSetups, listener.accounts);
      return;
    }
    if (change.kind === 'membership') {
      setup.membershipChanged(change.lockId, change.change, change.userId);
      return;
    }
    // The main account's shared devices are handed over before its registrations go.
    if (listener.accounts.holdings !== undefined) {
      void unlinkAccount(link.main, listener.accounts, 'the Lock Access account was deleted');
      return;
    }
    // Nobody awaits this: a failure (the token file could not be deleted) is logged, never left unhandled.
    control.unlink('the Lock Access account was deleted').catch((error: unknown) => {
      log.error(`Lock Access could not finish unlinking (${errorText(error)}); unlink it again in the plugin settings.`);
    });
  });
  await startTokens(context, files, link, setup, listener.accounts.holdings);
  extraSetups = await startExtraAccounts(context, files, listener, link);
  // After the tokens: the watch's first look at the way in asks the service only once linked. An
  // address announced before this needs nothing here: the first setup run registers and checks
  // whatever address there is then.
  const delivery = watchDelivery(context, files, link, listener, { selfChecks, showSensor: (feed) => views.homekit.deliverySensor(feed) });
  followAddress(context, link, { setup, delivery, selfChecks });
  return { setup, selfChecks, delivery };
}

/** A new address: registrations follow it at once, then the first run's state refresh if it waited for them and a delivery check (callbacks through the old way in may have been lost), and the self-check. */
function followAddress({ shutdown }: PluginContext, { address, control, publisher }: Link, parts: { setup: AccountSetup; delivery: Delivery; selfChecks: SelfCheckWatch }): void {
  const { setup, delivery, selfChecks } = parts;
  address.newAddress.follow(() => {
    if (shutdown.stopping) return;
    const registrar = control.idle ? undefined : control.registrar;
    void Promise.resolve(registrar?.addressChanged()).then((report) => {
      if (registrar !== undefined && report !== undefined && !report.skipped) publisher.registrations(registrar.status());
      // refreshStateOnStart waited for an address to be registered at.
      void setup.registered(report);
      return delivery.checkNow();
    });
    void selfChecks.runNow();
  });
  address.wayInLost.follow(() => {
    void delivery.checkNow();
  });
}

/** Tokens, then the setup now and every few hours; a link made in the settings UI is picked up from the token file. */
async function startTokens({ shutdown }: PluginContext, files: Files, { tokens, control, publisher }: Link, setup: AccountSetup, holdings: Listener['accounts']['holdings']): Promise<void> {
  tokens.onStateChange((state) => {
    control.onLinkState(state);
    holdings?.relink();
  });
  // A setting to fix or tokens not saved yet change the message, not the state.
  tokens.onStatusChange(() => {
    publisher.link(tokens.state);
  });
  const state = await tokens.start();
  // The settings UI server links and unlinks in its own process, through the same token file.
  const tokensFile = files.storage.file(TOKENS_FILE);
  watchFile(tokensFile, { interval: TOKEN_FILE_POLL_MS, persistent: false }, () => {
    void tokens.syncWithStore();
  });
  const reconcile = setInterval(() => {
    if (tokens.state === 'linked' && !control.idle) setup.request();
  }, RECONCILE_INTERVAL_MS).unref();
  shutdown.on('halt', () => {
    unwatchFile(tokensFile);
    clearInterval(reconcile);
  });
  // A start that finds the account linked has asked for the setup already: the change to linked
  // reached LinkControl above, which converges. Asking again here ran the whole setup twice.
  publisher.link(state);
}
