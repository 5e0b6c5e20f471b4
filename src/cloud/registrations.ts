// Registers, reconciles and deletes the webhooks that point the service at our listener (design
// section 5). The plan is pure (registration-plan.ts), the ledger is the memory (registration-
// ledger.ts); this file runs the calls with bounded concurrency and retries, and never throws at
// its caller: every outcome ends up in the report, the ledger and the log.
import { CALLBACK_TOKEN_HEADER } from '../settings.js';
import type { Storage } from '../storage.js';
import type { ApiClient } from './api.js';
import { AuthorizationLostError, CloudError, NotLinkedError, RateLimitedError, RequestRejectedError } from './errors.js';
import { type HookKind, type LedgerEntry, RegistrationLedger, scopeKey } from './registration-ledger.js';
import { type DesiredRegistration, nextRefreshAt, planReconcile, type PlannedAction, desiredRegistrations, type WantedHooks } from './registration-plan.js';
import { backoffDelay, ConcurrencyPool, DEFAULT_RETRY, realSleep, type RetryOptions, type Sleep, withRetry } from './retry.js';
import type { WebhookSecret } from './webhook-secret.js';

export type { WantedHooks } from './registration-plan.js';

export interface RegistrarLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

export interface ReconcileReport {
  /** Ledger keys (`lock:ID`, `doorbell:ID`, `user`) sent and confirmed in this run. */
  registered: string[];
  deleted: string[];
  /** Confirmed, current and fresh: nothing was sent. */
  unchanged: string[];
  failed: { key: string; error: string }[];
  /** The account is not linked (or no longer): nothing more is tried until the platform calls again. */
  authorizationLost: boolean;
  /** True when the run did nothing because the registrar was stopped or an unlink took over. */
  skipped: boolean;
}

export interface RegistrationStatus {
  kind: HookKind;
  /** Device id; empty for the user registration. */
  id: string;
  url: string;
  /** pending: sent (or about to be) and not confirmed yet. */
  state: 'registered' | 'pending' | 'failed' | 'deleting';
  /** ISO time of the last confirmation by the service. */
  lastSuccessAt: string | undefined;
  lastError: string | undefined;
}

export interface RegistrarOptions {
  client: ApiClient;
  storage: Storage;
  clientId: string;
  publicUrl: string;
  secret: WebhookSecret;
  log: RegistrarLogger;
  /** Calls at once (default 8). */
  concurrency?: number;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
  /** Overrides of the retry schedule (tests). */
  retry?: Partial<Omit<RetryOptions, 'sleep' | 'random'>>;
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

class UnlinkInProgress extends Error {
  constructor() {
    super('the account is being unlinked');
  }
}

class Stopped extends Error {
  constructor() {
    super('the plugin is shutting down');
  }
}

interface Run {
  /** Set when the run must stop starting calls: every waiting task fails with it. */
  abort: Error | undefined;
  /** Earliest time the service allowed us back (a Retry-After we did not wait for). */
  notBefore: number;
}

interface QueuedReconcile {
  wanted: WantedHooks;
  cancelled: boolean;
  promise: Promise<ReconcileReport>;
}

export function registerPath(kind: HookKind, id: string): string {
  if (kind === 'user') return '/webhook/user';
  const device = encodeURIComponent(id);
  return kind === 'lock' ? `/webhook/${device}` : `/webhook/doorbell/${device}`;
}

export function deletePath(kind: HookKind, id: string, clientId: string): string {
  const client = encodeURIComponent(clientId);
  if (kind === 'user') return `/webhook/user/${client}`;
  const device = encodeURIComponent(id);
  return kind === 'lock' ? `/webhook/${device}/${client}` : `/webhook/doorbell/${device}/${client}`;
}

/** The registration body of the spec: all six fields, POST callbacks, our header and token. */
export function registrationBody(desired: DesiredRegistration, token: string) {
  return {
    url: desired.url,
    method: 'POST' as const,
    clientID: desired.clientId,
    header: CALLBACK_TOKEN_HEADER,
    token,
    notificationTypes: [...desired.types],
  };
}

export function describeScope(kind: HookKind, id: string): string {
  return kind === 'user' ? 'the account (user webhook)' : `${kind} ${id}`;
}

function isSuccessAnswer(answer: unknown): boolean {
  return typeof answer === 'object' && answer !== null && (answer as Record<string, unknown>).message === 'success';
}

function isAuthProblem(error: unknown): boolean {
  return error instanceof AuthorizationLostError || error instanceof NotLinkedError;
}

function describeError(error: unknown): string {
  if (error instanceof CloudError) return error.status === undefined ? error.message : `${error.message} (HTTP ${error.status})`;
  return error instanceof Error ? error.message : String(error);
}

export class WebhookRegistrar {
  private readonly client: ApiClient;
  private readonly storage: Storage;
  private readonly clientId: string;
  private readonly publicUrl: string;
  private readonly secret: WebhookSecret;
  private readonly log: RegistrarLogger;
  private readonly now: () => number;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly retry: Omit<RetryOptions, 'sleep' | 'random'>;
  private readonly pool: ConcurrencyPool;

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

  constructor(options: RegistrarOptions) {
    this.client = options.client;
    this.storage = options.storage;
    this.clientId = options.clientId;
    this.publicUrl = options.publicUrl;
    this.secret = options.secret;
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timers = options.timers ?? unrefTimers;
    this.pool = new ConcurrencyPool({ concurrency: options.concurrency ?? DEFAULT_CONCURRENCY, sleep: this.sleep, now: this.now });
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
   * Deletes every registration in the ledger and the user registration, then the ledger. Runs
   * after (and cuts short) any reconcile in progress. Registrations that could not be deleted stay
   * in the ledger, so the next link deletes them. Never rejects.
   */
  unlinkAll(): Promise<void> {
    this.clearTimer();
    this.lastWanted = undefined;
    if (this.queued) this.queued.cancelled = true;
    if (this.activeRun) this.activeRun.abort = new UnlinkInProgress();
    const done = this.chain.then(() => this.runUnlink());
    this.chain = done.catch(() => undefined);
    return done.catch((error: unknown) => {
      this.log.error(`Unlinking could not finish: ${describeError(error)}`);
    });
  }

  /** Per registration scope, for the status page: never the token. */
  status(): RegistrationStatus[] {
    const states: Record<LedgerEntry['state'], RegistrationStatus['state']> = { registered: 'registered', registering: 'pending', failed: 'failed', deleting: 'deleting' };
    return (this.ledger?.all() ?? []).map((entry) => ({
      kind: entry.kind,
      id: entry.id,
      url: entry.url,
      state: states[entry.state],
      lastSuccessAt: entry.lastSuccessAt === undefined ? undefined : new Date(entry.lastSuccessAt).toISOString(),
      lastError: entry.lastError,
    }));
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
    if (this.stopped) return emptyReport(true);
    this.clearTimer();
    const run: Run = { abort: undefined, notBefore: 0 };
    this.activeRun = run;
    const report = emptyReport(false);
    try {
      const ledger = await this.loadLedger();
      const desired = desiredRegistrations(wanted, {
        publicUrl: this.publicUrl,
        clientId: this.clientId,
        token: { generation: this.secret.generation, fingerprint: this.secret.fingerprint },
      });
      const plan = planReconcile(desired, ledger.all(), this.now());
      report.unchanged = plan.unchanged;
      // Intents first: if we crash during the calls, the next start sees them unconfirmed.
      for (const action of plan.actions) this.recordIntent(ledger, action);
      if (plan.actions.length > 0) await ledger.flush();
      await Promise.all(plan.actions.map((action) => this.execute(ledger, action, run, report)));
      await ledger.flush();
      report.authorizationLost = run.abort !== undefined && isAuthProblem(run.abort);
      report.skipped = run.abort instanceof UnlinkInProgress || run.abort instanceof Stopped;
      const allCurrent = desired.every((item) => {
        const entry = ledger.get(item.key);
        return entry?.state === 'registered' && entry.tokenFingerprint === this.secret.fingerprint;
      });
      if (allCurrent && report.failed.length === 0) await this.secret.retirePrevious();
      this.logOutcome(report);
    } catch (error) {
      // Storage trouble: nothing was lost at the service, try again later.
      report.failed.push({ key: '*', error: describeError(error) });
      this.log.error(`Webhook registration could not run: ${describeError(error)}`);
    } finally {
      if (this.activeRun === run) this.activeRun = undefined;
    }
    this.scheduleNext(report, run);
    return report;
  }

  private recordIntent(ledger: RegistrationLedger, action: PlannedAction): void {
    const attemptAt = this.now();
    if (action.op === 'delete') {
      ledger.update(scopeKey(action.entry.kind, action.entry.id), { state: 'deleting', lastAttemptAt: attemptAt });
      return;
    }
    const { desired } = action;
    const previous = ledger.get(desired.key);
    ledger.set({
      kind: desired.kind,
      id: desired.id,
      clientId: desired.clientId,
      url: desired.url,
      types: [...desired.types],
      tokenGeneration: desired.tokenGeneration,
      tokenFingerprint: desired.tokenFingerprint,
      state: 'registering',
      lastSuccessAt: previous?.lastSuccessAt,
      lastAttemptAt: attemptAt,
      lastError: previous?.lastError,
    });
  }

  private async execute(ledger: RegistrationLedger, action: PlannedAction, run: Run, report: ReconcileReport): Promise<void> {
    if (action.op === 'register') {
      const { desired } = action;
      this.log.debug(`Registering the webhook of ${describeScope(desired.kind, desired.id)} (${action.reason}).`);
      try {
        await this.call(run, async () => {
          const answer = await this.client.request('POST', registerPath(desired.kind, desired.id), { body: registrationBody(desired, this.secret.token) });
          if (!isSuccessAnswer(answer)) throw new RequestRejectedError('the service answered the registration without "success"', 200);
        });
        ledger.update(desired.key, { state: 'registered', lastSuccessAt: this.now(), lastError: undefined });
        report.registered.push(desired.key);
      } catch (error) {
        ledger.update(desired.key, { state: 'failed', lastError: describeError(error) });
        report.failed.push({ key: desired.key, error: describeError(error) });
      }
    } else {
      const { entry } = action;
      const key = scopeKey(entry.kind, entry.id);
      try {
        await this.deleteOne(run, entry.kind, entry.id, entry.clientId);
        ledger.remove(key);
        report.deleted.push(key);
      } catch (error) {
        ledger.update(key, { state: 'deleting', lastError: describeError(error) });
        report.failed.push({ key, error: describeError(error) });
      }
    }
    await ledger.flush().catch((error: unknown) => {
      this.log.warn(`The list of registered webhooks could not be saved: ${describeError(error)}`);
    });
  }

  /**
   * DELETE one registration. 404 means it is already gone. Another refusal (400, 403, ...) will not
   * change on retry, so the scope is dropped from the ledger with a warning instead of failing forever.
   */
  private async deleteOne(run: Run, kind: HookKind, id: string, clientId: string): Promise<void> {
    this.log.debug(`Deleting the webhook of ${describeScope(kind, id)}.`);
    try {
      await this.call(run, () => this.client.request('DELETE', deletePath(kind, id, clientId)));
    } catch (error) {
      if (error instanceof CloudError && error.status === 404) return;
      if (error instanceof RequestRejectedError) {
        this.log.warn(`The service refused to delete the webhook of ${describeScope(kind, id)} (${describeError(error)}); it is no longer tracked.`);
        return;
      }
      throw error;
    }
  }

  /** One API call through the pool, retried per the schedule; auth loss stops the whole run. */
  private async call(run: Run, request: () => Promise<unknown>): Promise<void> {
    try {
      await withRetry(
        () =>
          this.pool.run(async () => {
            const abort = run.abort ?? (this.stopped ? new Stopped() : undefined);
            if (abort) throw abort;
            await request();
          }),
        {
          ...this.retry,
          sleep: this.sleep,
          random: this.random,
          shouldContinue: () => run.abort === undefined && !this.stopped,
        },
      );
    } catch (error) {
      if (isAuthProblem(error)) run.abort ??= error as Error;
      if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) {
        run.notBefore = Math.max(run.notBefore, this.now() + error.retryAfterMs);
      }
      throw error;
    }
  }

  private async runUnlink(): Promise<void> {
    const ledger = await this.loadLedger();
    const run: Run = { abort: undefined, notBefore: 0 };
    this.activeRun = run;
    try {
      const targets = ledger.all().map((entry) => ({ kind: entry.kind, id: entry.id, clientId: entry.clientId }));
      if (!targets.some((target) => target.kind === 'user')) targets.push({ kind: 'user', id: '', clientId: this.clientId });
      for (const target of targets) ledger.update(scopeKey(target.kind, target.id), { state: 'deleting', lastAttemptAt: this.now() });
      await ledger.flush();
      const failures: string[] = [];
      await Promise.all(
        targets.map(async (target) => {
          const key = scopeKey(target.kind, target.id);
          try {
            await this.deleteOne(run, target.kind, target.id, target.clientId);
            ledger.remove(key);
          } catch (error) {
            ledger.update(key, { lastError: describeError(error) });
            failures.push(`${describeScope(target.kind, target.id)}: ${describeError(error)}`);
          }
        }),
      );
      if (ledger.size === 0) {
        await ledger.erase();
        this.log.info('Unlinked: every webhook registration was deleted.');
      } else {
        await ledger.flush();
        this.log.warn(`Unlinked, but ${failures.length} webhook registration(s) could not be deleted and are kept to retry after the next link: ${failures.slice(0, 5).join('; ')}`);
      }
    } finally {
      if (this.activeRun === run) this.activeRun = undefined;
    }
  }

  private logOutcome(report: ReconcileReport): void {
    if (report.skipped) {
      this.log.debug('Webhook registration stopped early (unlink or shutdown).');
      return;
    }
    if (report.authorizationLost) {
      this.log.warn('Webhooks could not be registered because the account is not linked: link it again in the plugin settings.');
      return;
    }
    const parts = [`${report.registered.length} registered`, `${report.deleted.length} deleted`, `${report.unchanged.length} unchanged`];
    if (report.failed.length > 0) {
      const shown = report.failed.slice(0, 5).map((failure) => `${failure.key}: ${failure.error}`);
      this.log.warn(`Webhooks: ${parts.join(', ')}, ${report.failed.length} failed (tried again later): ${shown.join('; ')}${report.failed.length > 5 ? '; ...' : ''}`);
    } else if (report.registered.length + report.deleted.length > 0) {
      this.log.info(`Webhooks: ${parts.join(', ')}.`);
    } else {
      this.log.debug(`Webhooks: ${parts.join(', ')}.`);
    }
  }

  /** After failures: retry with growing, jittered delays. Otherwise: wake up when a registration turns a day old. */
  private scheduleNext(report: ReconcileReport, run: Run): void {
    if (this.stopped || report.skipped || report.authorizationLost || !this.lastWanted) return;
    let delay: number;
    if (report.failed.length > 0) {
      delay = Math.max(FAILED_RUN_BASE_MS / 4, backoffDelay(this.failedRuns, { baseMs: FAILED_RUN_BASE_MS, capMs: FAILED_RUN_CAP_MS, random: this.random }));
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

function emptyReport(skipped: boolean): ReconcileReport {
  return { registered: [], deleted: [], unchanged: [], failed: [], authorizationLost: false, skipped };
}
