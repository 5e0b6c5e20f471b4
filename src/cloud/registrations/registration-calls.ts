// How the registrar sends each call: through one pool (bounded concurrency that slows every caller
// after a 429), retried with back-off, and cut short for the whole run as soon as the
// account is not linked, an unlink takes over, or the plugin stops.
import { errorText } from '../../util/error-text.js';
import type { Logger } from '../../util/logger.js';
import type { ApiClient } from '../http/api.js';
import { AuthorizationLostError, CloudError, NotLinkedError, RateLimitedError, RequestRejectedError } from '../http/errors.js';
import type { HookKind } from './registration-ledger.js';
import { deletePath, describeScope } from './registration-requests.js';
import { ConcurrencyPool, type RetryOptions, type Sleep, withRetry } from '../http/retry.js';

/** Why a run stopped starting calls: an unlink took over. */
export class UnlinkInProgress extends Error {
  constructor() {
    super('the account is being unlinked');
  }
}

/** Why a run stopped starting calls: the plugin is shutting down. */
export class Stopped extends Error {
  constructor() {
    super('the plugin is shutting down');
  }
}

/** One reconcile or unlink run. */
export interface Run {
  /** Set when the run must stop starting calls: every waiting task fails with it. */
  abort: Error | undefined;
  /** Earliest time the service allowed us back (a Retry-After we did not wait for). */
  notBefore: number;
}

export function newRun(): Run {
  return { abort: undefined, notBefore: 0 };
}

/** The account is not linked (any more): no further call of the run can succeed. */
export function isAuthProblem(error: unknown): boolean {
  return error instanceof AuthorizationLostError || error instanceof NotLinkedError;
}

/** A failure in words for the ledger, the report and the log, with the HTTP status when there is one. */
export function describeRegistrationError(error: unknown): string {
  if (error instanceof CloudError) return error.status === undefined ? error.message : `${error.message} (HTTP ${error.status})`;
  return errorText(error);
}

export interface RegistrationCallsOptions {
  client: ApiClient;
  log: Logger;
  concurrency: number;
  retry: Omit<RetryOptions, 'sleep' | 'random'>;
  now: () => number;
  sleep: Sleep;
  random: () => number;
  /** True once the registrar was stopped: nothing new starts. */
  isStopped: () => boolean;
}

export class RegistrationCalls {
  private readonly pool: ConcurrencyPool;

  constructor(private readonly options: RegistrationCallsOptions) {
    this.pool = new ConcurrencyPool({ concurrency: options.concurrency, sleep: options.sleep, now: options.now });
  }

  /** One API call through the pool, retried per the schedule; auth loss stops the whole run. */
  async call(run: Run, request: () => Promise<unknown>): Promise<void> {
    const { isStopped } = this.options;
    try {
      await withRetry(
        () =>
          this.pool.run(async () => {
            const abort = run.abort ?? (isStopped() ? new Stopped() : undefined);
            if (abort) throw abort;
            await request();
          }),
        {
          ...this.options.retry,
          sleep: this.options.sleep,
          random: this.options.random,
          shouldContinue: () => run.abort === undefined && !isStopped(),
        },
      );
    } catch (error) {
      if (isAuthProblem(error)) run.abort ??= error as Error;
      if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) {
        run.notBefore = Math.max(run.notBefore, this.options.now() + error.retryAfterMs);
      }
      throw error;
    }
  }

  /**
   * DELETE one registration. 404 means it is already gone. Another refusal (400, 403, ...) will not
   * change on retry, so the scope is dropped from the ledger with a warning instead of failing forever.
   */
  async deleteOne(run: Run, kind: HookKind, id: string, clientId: string): Promise<void> {
    const { client, log } = this.options;
    log.debug(`Deleting the webhook of ${describeScope(kind, id)}.`);
    try {
      await this.call(run, () => client.request('DELETE', deletePath(kind, id, clientId)));
    } catch (error) {
      if (error instanceof CloudError && error.status === 404) return;
      if (error instanceof RequestRejectedError) {
        log.warn(`The service refused to delete the webhook of ${describeScope(kind, id)} (${describeRegistrationError(error)}); it is no longer tracked.`);
        return;
      }
      throw error;
    }
  }
}
