// One account of the service, built once per enabled account: its storage folder, tokens (refresh
// single-flight, keep-alive, its own file lock), HTTP client, header secret, registrar and ledger,
// and link control. The main account keeps the plugin's own folder and files; an extra account X
// keeps its own in `lock-access/accounts/X/` (mode 0700), so nothing of one account is another's.
import { CloudHttpClient } from '../cloud/http/http-client.js';
import { LinkControl, type LinkReporter, type Registrar } from '../cloud/link-control.js';
import type { ReconcileReport } from '../cloud/registrations/registration-report.js';
import { WebhookRegistrar } from '../cloud/registrations/registrations.js';
import { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import { TokenManager } from '../cloud/tokens/token-manager.js';
import type { LockAccessConfig } from '../config.js';
import type { AccountSettings } from '../config/account-settings.js';
import type { AccountStatusReporter } from '../status/account-status.js';
import type { Storage } from '../storage.js';
import { accountStorage } from './account-storage.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import type { Shutdown } from '../util/shutdown.js';
import { Signal } from '../util/signal.js';

export interface AccountUnit {
  readonly account: AccountSettings;
  /** The plugin's log; an extra account's lines start with its name and id. */
  readonly log: Logger;
  readonly storage: Storage;
  readonly tokens: TokenManager;
  readonly client: CloudHttpClient;
  readonly secret: WebhookSecret;
  readonly control: LinkControl;
  /** Where its link state is shown (the status file's own fields, or its entry under `accounts`). */
  readonly status: LinkReporter;
  /** A setup run against this account is wanted (`true`: with the first run's checks again). */
  readonly setupWanted: Signal<[asFirstRun: boolean]>;
  /** The address this account's registrations point at: the public address, plus `/a/<id>` for an extra account. */
  readonly publicUrl: () => string | undefined;
}

/** An extra account: its entry under `accounts` in the status file (link, wait, disabled, delivery), one writer for all of them. */
export interface ExtraAccountUnit extends AccountUnit {
  readonly entry: AccountStatusReporter;
}

export interface AccountUnitDeps {
  config: Pick<LockAccessConfig, 'authUrl' | 'baseUrl'>;
  /** The plugin's folder (`lock-access/`). */
  storage: Storage;
  log: Logger;
  shutdown: Shutdown;
  /** The listener's public address (read at each registration run). */
  publicUrl: () => string | undefined;
  /** Where this account's link state and registrations are shown, made once its tokens exist. */
  status: (tokens: TokenManager) => LinkReporter;
  /** Each reconcile run's report (a handover completes when the new owner has registered). */
  onReport?: (report: ReconcileReport) => void;
}


export async function accountUnit(account: AccountSettings, deps: AccountUnitDeps): Promise<AccountUnit> {
  const { config, shutdown } = deps;
  const log = account.main ? deps.log : deviceLogger(deps.log, () => `${account.name} (${account.id})`);
  const storage = accountStorage(deps.storage, account.id);
  const tokens = new TokenManager({
    storage,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    apiKey: account.apiKey,
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    seeds: { refreshToken: account.refreshToken, accessToken: account.accessToken },
    log,
  });
  const client = new CloudHttpClient({ baseUrl: config.baseUrl, apiKey: account.apiKey, tokens, log });
  const secret = await WebhookSecret.load(storage, { log });
  const status = deps.status(tokens);
  const setupWanted = new Signal<[asFirstRun: boolean]>();
  // A token that could be read only later, or was replaced: every registration is sent again at
  // once, so callbacks do not carry an old token until the daily refresh.
  secret.onChange(() => {
    setupWanted.emit(false);
  });
  const publicUrl = account.main ? deps.publicUrl : () => {
    const base = deps.publicUrl();
    return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/a/${account.id}`;
  };
  const newRegistrar = (): Registrar => {
    const registrar = new WebhookRegistrar({ client, storage, clientId: account.clientId, publicUrl, secret, log });
    const { onReport } = deps;
    if (onReport === undefined) return registrar;
    const reconcile = registrar.reconcile.bind(registrar);
    return Object.assign(registrar, {
      reconcile: async (...args: Parameters<typeof reconcile>) => {
        const report = await reconcile(...args);
        onReport(report);
        return report;
      },
    });
  };
  const control = new LinkControl({
    log,
    status,
    newRegistrar,
    tokens,
    converge: (asFirstRun) => {
      setupWanted.emit(asFirstRun);
    },
  });
  shutdown.on('halt', () => {
    tokens.stop();
    control.stop();
    secret.stop();
  });
  return { account, log, storage, tokens, client, secret, control, status, setupWanted, publicUrl };
}
