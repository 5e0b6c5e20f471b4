// The first stages: the plugin's files, then the link with the account (tokens, the cloud client,
// the webhook token, the public address, link and unlink). Nothing here waits for the service.
import type { API, MatterAccessory, PlatformAccessory } from 'homebridge';

import type { AccountUnit, ExtraAccountUnit } from '../accounts/account-unit.js';
import { openAccountUnits } from '../accounts/account-units.js';
import { DedupeStore } from '../callbacks/dedupe.js';
import type { CloudHttpClient } from '../cloud/http/http-client.js';
import type { LinkControl } from '../cloud/link-control.js';
import type { ReconcileReport } from '../cloud/registrations/registration-report.js';
import type { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import type { TokenManager } from '../cloud/tokens/token-manager.js';
import type { LockAccessConfig, MainDisabled } from '../config.js';
import { moveContextToRecords } from '../storage/context-migration.js';
import { DeviceRecords } from '../storage/device-records.js';
import { EventLog } from '../status/event-log.js';
import { StatusPublisher } from '../status/status-publisher.js';
import { StatusWriter } from '../status/status.js';
import { Storage } from '../storage.js';
import { LogLimiter } from '../util/log-limiter.js';
import type { Logger } from '../util/logger.js';
import { pluginVersion } from '../util/plugin-version.js';
import type { Shutdown } from '../util/shutdown.js';
import { Signal } from '../util/signal.js';
import { Reach } from '../cloud/tunnel/reach.js';

/** What Homebridge hands the plugin, and where each part says how it stops. */
export interface PluginContext {
  api: API;
  log: Logger;
  config: LockAccessConfig;
  /** The top-level account fields have a mistake (what to fix): the main account sends nothing. */
  mainDisabled?: MainDisabled;
  /** Ids of the entries of `accounts` that do not run (a mistake in them): still the config's. */
  disabledAccountIds?: readonly string[];
  /** Accessories and Matter endpoints Homebridge restored from its cache before launch. */
  cachedAccessories: readonly PlatformAccessory[];
  cachedMatter: readonly MatterAccessory[];
  pluginName: string;
  platformName: string;
  shutdown: Shutdown;
}

export interface Files {
  readonly storage: Storage;
  readonly status: StatusWriter;
  readonly eventLog: EventLog;
  readonly records: DeviceRecords;
  readonly dedupe: DedupeStore;
  /** The log for lines written per event, held to a household pace. */
  readonly eventLines: LogLimiter;
}

export interface Link {
  readonly tokens: TokenManager;
  readonly client: CloudHttpClient;
  readonly secret: WebhookSecret;
  /** Writes the status file and the event log: the one writer. */
  readonly publisher: StatusPublisher;
  /** The public address, kept only here; the registrar and the self-check read it. */
  readonly address: Reach;
  readonly control: LinkControl;
  /** A setup run against the account is wanted (`true`: with the first run's checks again). */
  readonly setupWanted: Signal<[asFirstRun: boolean]>;
  /** The main account (the fields above are its parts). */
  readonly main: AccountUnit;
  /** The enabled extra accounts, in config order. */
  readonly extras: readonly ExtraAccountUnit[];
  /** A registration run's report, per account (only with extra accounts). */
  readonly reported: Signal<[account: string, report: ReconcileReport]>;
}

/** The status file, the event log, the devices' saved state and the duplicate store, read before anything is served. */
export async function openFiles({ api, log, cachedAccessories, shutdown }: PluginContext): Promise<Files> {
  const storage = Storage.under(api.user.storagePath());
  const status = await StatusWriter.open(storage, { log });
  // For the diagnostics file: the settings server cannot ask Homebridge itself.
  status.update({ versions: { plugin: pluginVersion(), homebridge: api.serverVersion, node: process.version } });
  const [eventLog, records, dedupe] = await Promise.all([EventLog.open(storage, { log }), DeviceRecords.open(storage, log), DedupeStore.open({ storage, log })]);
  if (await moveContextToRecords(cachedAccessories, records)) log.info('Moved the saved device state from the accessory cache to lock-access/devices.json.');
  shutdown.on('flush', () => Promise.all([dedupe.close(), eventLog.flush(), status.flush(), records.close()]));
  return { storage, status, eventLog, records, dedupe, eventLines: new LogLimiter(log) };
}

export async function linkStage({ config, log, shutdown }: PluginContext, files: Files): Promise<Link> {
  let publisher: StatusPublisher | undefined;
  const units = await openAccountUnits(config, {
    storage: files.storage,
    log,
    shutdown,
    publicUrl: () => address.publicUrl,
    accountsStatus: files.status,
    mainStatus: (tokens) => (publisher = new StatusPublisher({
      status: files.status,
      eventLog: files.eventLog,
      linkMessage: () => tokens.status().message,
      linkProblem: () => tokens.status().problem,
      linkSetting: () => tokens.status().setting,
    })),
  });
  if (publisher === undefined) throw new Error('the main account made its status publisher');
  const shown = publisher;
  const address = new Reach({
    webhook: config.webhook,
    log,
    publish: (publicAddress) => {
      shown.update({ publicAddress });
    },
  });
  // The tunnel closes with Homebridge; callbacks in flight through it are answered first.
  shutdown.on('halt', () => address.stop());
  const { tokens, client, secret, control, setupWanted } = units.main;
  return { ...units, tokens, client, secret, publisher: shown, address, control, setupWanted };
}
