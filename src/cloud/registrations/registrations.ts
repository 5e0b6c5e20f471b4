// Registers, reconciles and deletes the webhooks that point the service at our listener. The plan
// is pure (registration-plan.ts), the ledger is the memory (registration-ledger.ts), each planned
// action is carried out by registration-actions.ts through registration-calls.ts, unlink is
// registration-unlink.ts and the report registration-report.ts. This file runs reconcile after
// reconcile, one at a time, and never throws at its caller: every outcome ends up in the report,
// the ledger and the log.
import type { Storage } from '../../storage.js';
import type { Logger } from '../../util/logger.js';
import type { ApiClient } from '../http/api.js';
import { carryOut, recordIntent } from './registration-actions.js';
import { describeRegistrationError, isAuthProblem, newRun, RegistrationCalls, type Run, Stopped, UnlinkInProgress } from './registration-calls.js';
import { RegistrationLedger } from './registration-ledger.js';
import { desiredRegistrations, nextRefreshAt, planReconcile, type WantedHooks } from './registration-plan.js';
import { emptyReport, logOutcome, registrationStatus, type ReconcileReport, type RegistrationStatus, type UnlinkOutcome } from './registration-report.js';
import { deleteAllRegistrations } from './registration-unlink.js';
import { jitteredDelay } from '../../util/backoff.js';
import { reasonOf } from '../../util/reason-messages.js';
import { DEFAULT_RETRY, realSleep, type Sleep } from '../http/retry.js';
import type { WebhookSecret } from './webhook-secret.js';

export type { WantedHooks } from './registration-plan.js';
export type { ReconcileReport, RegistrationStatus, UnlinkOutcome } from './registration-report.js';

export interface RegistrarOptions {
  client: ApiClient;
  storage: Storage;
  clientId: string;
  /**
   * The public address the service calls, read at each run (the one place that keeps it: the
   * configured address, or the tunnel's); undefined while there is none, and nothing is registered.
   */
  publicUrl: () => string | undefined;
  secret: WebhookSecret;
  log: Logger;
  /** Calls at once (default 8). */
  concurrency?: number;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
  /** Timer of the next reconcile (tests); unref'ed global timers by default. */
  timers?: RegistrarTimers;
}

export interface RegistrarTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Timers that never keep Homebridge's process alive. */
const unrefTimers: RegistrarTimers = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

export const DEFAULT_CONCURRENCY = 8;
/** Delay before the next reconcile after a run with failures grows from this, with full jitter... */
const FAILED_RUN_BASE_MS = 60_000;
/** ...up to this. */
const FAILED_RUN_CAP_MS = 60 * 60 * 1000;
const MAX_TIMER_MS = 2_147_483_647;

interface QueuedReconcile {
  wanted: WantedHooks;
  cancelled: boolean;
  promise: Promise<ReconcileReport>;
}

export class WebhookRegistrar {
  private readonly client: ApiClient;
  private readonly storage: Storage;
  private readonly clientId: string;
  private readonly publicUrl: () => string | undefined;
  private readonly secret: WebhookSecret;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly calls: RegistrationCalls;

  private ledgerLoad: Promise<RegistrationLedger> | undefined;
  private ledger: RegistrationLedger | undefined;
  /** Every reconcile and unlink runs after the previous one: they share the ledger. */
  private chain: Promise<unknown> = Promise.resolve();
  private queued: QueuedReconcile | undefined;
  private activeRun: Run | undefined;
  private lastWanted: WantedHooks | undefined;
  private readonly timers: RegistrarTimers;
  private timer: unknown;
  private failedRuns = 0;
  private stopped = false;
  /** Why the next run sends every registration, current or not. */
  private sendAllReason: string | undefined;

  constructor(options: RegistrarOptions) {
    this.client = options.client;
    this.storage = options.storage;
    this.clientId = options.clientId;
    this.publicUrl = options.publicUrl;
    this.secret = options.secret;
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.timers = options.timers ?? unrefTimers;
    this.calls = new RegistrationCalls({
      client: options.client,
      log: options.log,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      retry: DEFAULT_RETRY,
      now: this.now,
      sleep: options.sleep ?? realSleep,
      random: this.random,
      isStopped: () => this.stopped,
    });
  }

  /**
   * Brings the service's registrations in line with `wanted`. Serialised: a call made while a run
   * is in progress waits for it, and calls that pile up meanwhile merge into one run with the
   * latest `wanted`. Never rejects.
   */
  reconcile(wanted: WantedHooks): Promise<ReconcileReport> {
    this.lastWanted = wanted;
    if (this.queued && !this.queued.cancelled) {
      this.queued.wanted = wanted;
      return this.queued.promise;
    }
    const slot = { wanted, cancelled: false } as QueuedReconcile;
    slot.promise = this.chain.then(() => {
      if (this.queued === slot) this.queued = undefined;
      if (slot.cancelled) return emptyReport(true);
      return this.runReconcile(slot.wanted);
    });
    this.queued = slot;
    this.chain = slot.promise.catch(() => undefined);
    return slot.promise;
  }

  /**
   * The public address changed (a tunnel's, while running): every wanted registration is sent again
   * at once with it, not at the next daily refresh (those the ledger shows at this address already
   * are not). Undefined before the first reconcile, which then uses the new address.
   */
  addressChanged(): Promise<ReconcileReport> | undefined {
    return this.lastWanted && !this.stopped ? this.reconcile(this.lastWanted) : undefined;
  }

  /**
   * Sends every wanted registration again, even those the ledger shows current: the service may
   * have lost them, or the way in changed. Runs after any run in progress, with the last wanted
   * set; before the first reconcile, that first one sends everything. Never rejects.
   */
  sendAllAgain(reason: string): Promise<ReconcileReport> {
    this.sendAllReason = reason;
    if (!this.lastWanted) return Promise.resolve(emptyReport(true));
    return this.reconcile(this.lastWanted);
  }

  /**
   * Deletes every registration in the ledger and the user registration, then the ledger. Runs
   * after (and cuts short) any reconcile in progress. Registrations that could not be deleted stay
   * in the ledger, so the next link deletes them, and in the outcome. Never rejects.
   */
  unlinkAll(): Promise<UnlinkOutcome> {
    this.clearTimer();
    this.lastWanted = undefined;
    if (this.queued) this.queued.cancelled = true;
    if (this.activeRun) this.activeRun.abort = new UnlinkInProgress();
    const done = this.chain.then(() => this.runUnlink());
    this.chain = done.catch(() => undefined);
    return done.catch((error: unknown): UnlinkOutcome => {
      const text = describeRegistrationError(error);
      this.log.error(`Unlinking could not finish: ${text}`);
      return { deleted: 0, left: this.status(), error: text, reason: reasonOf(error) };
    });
  }

  /** What an unlink would leave when no token can authenticate: every registration the ledger knows, untouched. */
  async knownRegistrations(): Promise<RegistrationStatus[]> {
    try {
      return registrationStatus((await this.loadLedger()).all());
    } catch {
      return [];
    }
  }

  /** Per registration scope, for the status page: never the token. */
  status(): RegistrationStatus[] {
    return registrationStatus(this.ledger?.all() ?? []);
  }

  /** Stops timers and starts no new calls (calls in flight finish). */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
    if (this.queued) this.queued.cancelled = true;
    if (this.activeRun) this.activeRun.abort = new Stopped();
  }

  private loadLedger(): Promise<RegistrationLedger> {
    this.ledgerLoad ??= RegistrationLedger.load(this.storage, (reason) => {
      this.log.warn(`The list of registered webhooks could not be read (${reason}); every webhook is registered again.`);
    }).then((ledger) => {
      this.ledger = ledger;
      return ledger;
    });
    return this.ledgerLoad;
  }

  private async runReconcile(wanted: WantedHooks): Promise<ReconcileReport> {
    // No address yet: registering a made-up one would send events nowhere; addressChanged runs it.
    const publicUrl = this.publicUrl();
    if (this.stopped || publicUrl === undefined) return emptyReport(true);
    this.clearTimer();
    const run = newRun();
    this.activeRun = run;
    const report = emptyReport(false);
    const sendAll = this.sendAllReason;
    this.sendAllReason = undefined;
    try {
      if (sendAll !== undefined) this.log.debug(`Sending every webhook registration again: ${sendAll}.`);
      const ledger = await this.loadLedger();
      const desired = desiredRegistrations(wanted, {
        publicUrl,
        clientId: this.clientId,
        token: { generation: this.secret.generation, fingerprint: this.secret.fingerprint },
      });
      const plan = planReconcile(desired, ledger.all(), this.now(), undefined, sendAll !== undefined);
      report.unchanged = plan.unchanged;
      // Intents first: if we crash during the calls, the next start sees them unconfirmed.
      for (const action of plan.actions) recordIntent(ledger, action, this.now());
      if (plan.actions.length > 0) await ledger.flush();
      const deps = { client: this.client, calls: this.calls, secret: this.secret, log: this.log, now: this.now };
      await Promise.all(plan.actions.map((action) => carryOut(deps, ledger, action, run, report)));
      // Nothing done, nothing written: the settings UI may have unlinked and deleted the list
      // meanwhile, and this copy would bring back registrations that no longer exist.
      if (plan.actions.length > 0) await ledger.flush();
      report.authorizationLost = run.abort !== undefined && isAuthProblem(run.abort);
      report.skipped = run.abort instanceof UnlinkInProgress || run.abort instanceof Stopped;
      logOutcome(report, this.log);
    } catch (error) {
      // Storage trouble: nothing was lost at the service, try again later.
      report.failed.push({ key: '*', error: describeRegistrationError(error), reason: reasonOf(error) });
      this.log.error(`Webhook registration could not run: ${describeRegistrationError(error)}`);
    } finally {
      if (this.activeRun === run) this.activeRun = undefined;
    }
    this.scheduleNext(report, run);
    return report;
  }

  private async runUnlink(): Promise<UnlinkOutcome> {
    const ledger = await this.loadLedger();
    const run = newRun();
    this.activeRun = run;
    try {
      return await deleteAllRegistrations(ledger, run, { calls: this.calls, clientId: this.clientId, log: this.log, now: this.now });
    } finally {
      if (this.activeRun === run) this.activeRun = undefined;
    }
  }

  /** After failures: retry with growing, jittered delays. Otherwise: wake up when a registration turns a day old. */
  private scheduleNext(report: ReconcileReport, run: Run): void {
    if (this.stopped || report.skipped || report.authorizationLost || !this.lastWanted) return;
    let delay: number;
    if (report.failed.length > 0) {
      delay = Math.max(FAILED_RUN_BASE_MS / 4, jitteredDelay(this.failedRuns + 1, { firstMs: FAILED_RUN_BASE_MS, maxMs: FAILED_RUN_CAP_MS }, this.random));
      delay = Math.max(delay, run.notBefore - this.now());
      this.failedRuns++;
    } else {
      this.failedRuns = 0;
      const due = nextRefreshAt(this.ledger?.all() ?? []);
      if (due === undefined) return;
      delay = Math.max(60_000, due - this.now());
    }
    this.clearTimer();
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      if (this.lastWanted) void this.reconcile(this.lastWanted);
    }, Math.min(delay, MAX_TIMER_MS));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
  }
}
