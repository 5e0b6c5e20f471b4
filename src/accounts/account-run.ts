// One account while the plugin runs, the same for the main account and an extra one: its setup
// (discovery, its own devices, registrations with its own ledger) against its own view of the one
// registry, its tokens started, its token file followed (the settings server links and unlinks in
// its own process), and the setup confirmed again every few hours.
import { unwatchFile, watchFile } from 'node:fs';

import { AccountSetup, type AccountSetupDeps, type RegistryView } from '../cloud/account-setup.js';
import type { LockAccessConfig } from '../config.js';
import type { DeviceRegistry } from '../model/device-registry.js';
import { TOKENS_FILE } from '../storage/token-file.js';
import type { Shutdown } from '../util/shutdown.js';
import type { AccountDevices } from './account-devices.js';
import type { AccountUnit } from './account-unit.js';

/** Registrations are confirmed again this often even when nothing changed (the registrar re-sends those older than a day). */
const RECONCILE_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** How often the token file is checked for a link or unlink made in the settings UI. */
const TOKEN_FILE_POLL_MS = 5_000;

/** An account's view of the one registry: its own devices, and those it registers (it owns). */
export function accountScope(accounts: AccountDevices, registry: DeviceRegistry, account: string): RegistryView {
  const holdings = accounts.holdings;
  if (holdings === undefined) return registry;
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
    nameOf: (kind, id) => registry.nameOf(kind, id),
  };
}

/** The block's config as one account sees it: its own devices and switches. */
export function accountConfig(config: LockAccessConfig, unit: AccountUnit): LockAccessConfig {
  const { locks, doorbells, discoverDevices, userWebhook } = unit.account;
  return { ...config, locks, doorbells, discoverDevices, userWebhook };
}

export interface AccountRunDeps extends Pick<AccountSetupDeps, 'status' | 'listening' | 'selfCheck'> {
  config: LockAccessConfig;
  shutdown: Shutdown;
  accounts: AccountDevices;
  registry: DeviceRegistry;
  /** Asked before each wanted setup run: false while the account must not run (the same user as an earlier one). */
  mayRun?: () => Promise<boolean>;
  /** Its settings have a mistake (what to fix): its tokens never start, so it sends nothing. */
  disabled?: string;
}

/** Starts the account's setup and tokens; resolves once its tokens have started. */
export async function runAccount(unit: AccountUnit, deps: AccountRunDeps): Promise<AccountSetup> {
  const { config, shutdown, accounts } = deps;
  const { tokens, control } = unit;
  const id = unit.account.id;
  const setup = new AccountSetup({
    config: accountConfig(config, unit),
    log: unit.log,
    client: unit.client,
    registry: accountScope(accounts, deps.registry, id),
    status: deps.status,
    isIdle: () => control.idle || accounts.isStopped(id),
    isStopped: () => shutdown.stopping,
    registrar: () => control.registrar,
    listening: deps.listening,
    selfCheck: deps.selfCheck,
  });
  // Never started, its tokens stay unlinked: it owns nothing, registers nothing and asks nothing.
  if (deps.disabled !== undefined) {
    accounts.hasStarted(id);
    return setup;
  }
  const { mayRun } = deps;
  // Every run, the periodic one too, goes through `mayRun`: a check that could not tell is asked again.
  const want = (asFirstRun = false) => {
    if (mayRun === undefined) setup.request(asFirstRun);
    else setup.requestIf(mayRun(), asFirstRun);
  };
  unit.setupWanted.follow(want);
  tokens.onStateChange((state) => {
    // Linked again after an unlink (the settings page): its devices count again.
    if (state === 'linked') accounts.holdings?.rejoin(id);
    control.onLinkState(state);
    accounts.holdings?.relink();
  });
  // A setting to fix or tokens not saved yet change the message, not the state.
  tokens.onStatusChange(() => {
    unit.status.link(tokens.state);
  });
  // A start that finds the account linked has asked for the setup already: the change to linked
  // reached LinkControl above, which converges.
  const state = await tokens.start();
  accounts.hasStarted(id);
  const tokensFile = unit.storage.file(TOKENS_FILE);
  watchFile(tokensFile, { interval: TOKEN_FILE_POLL_MS, persistent: false }, () => {
    void tokens.syncWithStore();
  });
  const reconcile = setInterval(() => {
    if (tokens.state === 'linked' && !control.idle) want();
  }, RECONCILE_INTERVAL_MS).unref();
  shutdown.on('halt', () => {
    unwatchFile(tokensFile);
    clearInterval(reconcile);
  });
  unit.status.link(state);
  return setup;
}
