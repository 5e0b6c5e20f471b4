// Linking and unlinking while the plugin runs: an unlink (from the settings UI, or the account's
// deletion) deletes registrations and tokens and leaves the plugin idle; linking again brings a
// fresh registrar and a first setup run. The registrar lives here because only linking creates it.
import type { LinkState } from './tokens/token-manager.js';
import type { RegistrationStatus, WebhookRegistrar } from './registrations/registrations.js';
import { unlinkAccount, type UnlinkTokens } from './account-unlink.js';
import type { Logger } from '../util/logger.js';

/** What linking and setup use of the webhook registrar. */
export type Registrar = Pick<WebhookRegistrar, 'reconcile' | 'sendAllAgain' | 'addressChanged' | 'status' | 'unlinkAll' | 'stop' | 'knownRegistrations'>;

/** Where the link state and what is left registered at the service are shown (the status file). */
export interface LinkReporter {
  link(state: LinkState): void;
  registrations(registrations: RegistrationStatus[]): void;
}

export interface LinkControlDeps {
  log: Logger;
  status: LinkReporter;
  newRegistrar(): Registrar | undefined;
  /** The token manager: whether a token can still sign in, and forgetting the tokens. */
  tokens: UnlinkTokens;
  /** Runs discovery and registration again; `asFirstRun` repeats the self-check and state refresh. */
  converge(asFirstRun: boolean): void;
}

export class LinkControl {
  private idleNow = false;
  private registrarNow: Registrar | undefined;

  constructor(private readonly deps: LinkControlDeps) {
    this.registrarNow = deps.newRegistrar();
  }

  /** Unlinked: nothing is registered, events are dropped. A getter because unlinking can happen while a run awaits. */
  get idle(): boolean {
    return this.idleNow;
  }

  get registrar(): Registrar | undefined {
    return this.registrarNow;
  }

  /**
   * Deletes every registration (whenever any token can still sign in) and the tokens, then stays
   * idle (the account was deleted). The same unlink as the settings page's; never rejects: it runs
   * from a callback nobody awaits, so what could not be done is logged.
   */
  async unlink(reason: string): Promise<void> {
    if (this.idleNow) return;
    this.idleNow = true;
    const { log } = this.deps;
    const registrar = this.registrarNow;
    this.registrarNow = undefined;
    const result = await unlinkAccount(this.deps.tokens, registrar, log);
    // The status shows what is left behind at the service, so the settings page can say so.
    this.deps.status.registrations(result.left);
    if (result.tokensNotSaved !== undefined) return; // already logged with what to do
    log.warn(`Lock Access is unlinked because ${reason}: registrations and tokens are deleted and the plugin is idle. Link the account again in the plugin settings to resume.`);
  }

  /** The token manager's link state changed (here, or in the settings UI's process). */
  onLinkState(state: LinkState): void {
    const { log } = this.deps;
    this.deps.status.link(state);
    if (state === 'linked') {
      let firstRun = false;
      if (this.idleNow) {
        // Linked again in the settings UI: a fresh registrar reads the ledger that process left.
        this.idleNow = false;
        this.registrarNow = this.deps.newRegistrar();
        // That ledger may be out of date (a run here may have written it after that unlink), and
        // registering is idempotent: the first run sends every registration.
        void this.registrarNow?.sendAllAgain('the account was linked again');
        firstRun = true;
        log.info('Lock Access is linked again: registering webhooks.');
      }
      this.deps.converge(firstRun);
    } else if (state === 'unlinked' && !this.idleNow) {
      // Unlinked in the settings UI, which already deleted the registrations: stop touching them.
      this.idleNow = true;
      this.registrarNow?.stop();
      this.registrarNow = undefined;
      log.warn('Lock Access was unlinked in the plugin settings: the plugin is idle until the account is linked again.');
      // What that process could not delete is in the ledger it left: the status shows it.
      void this.showLeftBehind().catch(() => undefined);
    }
  }

  stop(): void {
    this.registrarNow?.stop();
  }

  /** Never rejects (knownRegistrations() does not). */
  private async showLeftBehind(): Promise<void> {
    const reader = this.deps.newRegistrar();
    if (!reader) return;
    reader.stop();
    const left = await reader.knownRegistrations();
    if (this.idleNow) this.deps.status.registrations(left);
  }
}
