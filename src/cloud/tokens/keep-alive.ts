// The timer that keeps the link alive for years: a daily GET /users/me instead of
// spending the refresh token, the refresh grant only near expiry, a look at the store for links the
// settings UI server made, and back-off after failures. Timer rounds never throw. Beside it the
// settings page's test of the link, the same GET /users/me asked once.
import { doublingDelay } from '../../util/backoff.js';
import { reasonOf } from '../../util/reason-messages.js';
import { AuthorizationLostError, RateLimitedError, RefreshRejectedError, TransientError } from '../http/errors.js';
import { LEGACY_MESSAGE_CODE, type UiMessage } from '../../util/ui-message.js';
import { retryRefused } from '../http/refused-retry.js';
import { safeErrorText } from '../http/safe-error-text.js';
import { linkMessage, messageOfSentence } from '../link-messages.js';
import type { AccessTokens, TokenCheck } from './access-tokens.js';
import type { RefreshGrant } from './refresh-grant.js';
import { REAUTHORIZATION_ADVICE, type TokenSession } from './token-session.js';

// When to run the keep-alive call and the refresh grant: pure arithmetic, so every rule has a
// unit test without waiting.
export const DAY_MS = 24 * 60 * 60 * 1000;
/** A successful API call at least this often keeps the access token valid (spec: never under 24 h). */
export const KEEP_ALIVE_INTERVAL_MS = DAY_MS;
export const MAX_REFRESH_MARGIN_MS = 7 * DAY_MS;
export const REFRESH_MARGIN_SHARE = 0.1;
/** setTimeout cannot wait longer than this; longer waits are split into several timers. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long before expiry the refresh grant is due: the smaller of 7 days and 10% of the lifetime. */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.max(0, Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs * REFRESH_MARGIN_SHARE));
}

/** When the refresh grant is due; undefined when the expiry is unknown (then only a 401 triggers one). */
export function refreshDueAt(expiresAt: number | undefined, issuedAt: number | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  // Without an issue time, assume the spec's usual four months so the margin is the 7-day cap.
  const lifetime = issuedAt !== undefined && issuedAt < expiresAt ? expiresAt - issuedAt : 120 * DAY_MS;
  return expiresAt - refreshMarginMs(lifetime);
}

/**
 * A refresh token is valid for at most one year (spec). Header rotation can keep the access token
 * alive for longer than that, so the grant would never run: the refresh token is spent once it is
 * this old, with two months to spare for outages and retries.
 */
export const REFRESH_TOKEN_SPEND_AGE_MS = 300 * DAY_MS;

/**
 * When the refresh token must be spent for its age: from the last grant, else from the link (a
 * seed's own issue time is unknown, so a seed counts from when it was linked).
 */
export function refreshTokenDueAt(record: { lastRefreshAt?: number | undefined; linkedAt: number }): number {
  return (record.lastRefreshAt ?? record.linkedAt) + REFRESH_TOKEN_SPEND_AGE_MS;
}

/** Back-off after a failed keep-alive or refresh: 1 min doubling to 1 h. */
export function retryDelayMs(failures: number): number {
  return doublingDelay(failures, { firstMs: 60_000, maxMs: 60 * 60 * 1000 });
}

/** Delay for the next timer: never negative, never beyond what setTimeout can do. */
export function timerDelay(dueAt: number, now: number, minMs = 1000): number {
  return Math.min(MAX_TIMER_MS, Math.max(minMs, dueAt - now));
}

/** A token nobody has checked yet (a new link, a waiting grant) is checked this soon. */
const FIRST_CHECK_DELAY_MS = 10_000;

/** GET /users/me with the current access token; spends the refresh token only if that token is rejected. */
export async function testConnection(parts: { check: TokenCheck; access: AccessTokens; onHeaderToken(token: string, sentWith?: string): void }): Promise<{ ok: boolean; message: UiMessage }> {
  const { check, access } = parts;
  let token: string;
  try {
    token = await access.get();
  } catch (error) {
    return { ok: false, message: failedTest(error) };
  }
  let result: Awaited<ReturnType<TokenCheck['check']>>;
  // After a 401 as every call with a token (the check itself never throws: an error is the renewal's).
  try {
    ({ answer: result, token } = await retryRefused(token, await check.check(token), {
      refused: (answer) => answer.kind === 'unauthorized',
      renew: (refused) => access.afterUnauthorized(refused),
      send: (retry) => check.check(retry),
    }));
  } catch (error) {
    return { ok: false, message: failedTest(error) };
  }
  if (result.kind === 'ok') {
    parts.onHeaderToken(result.headerToken ?? token, token);
    return { ok: true, message: linkMessage('link.test.ok') };
  }
  if (result.kind === 'unauthorized') return { ok: false, message: linkMessage('link.test.refused') };
  return { ok: false, message: linkMessage('link.test.unreachable', { reason: result.reason }) };
}

/** No token to test with: the link's own sentence when it is one, else why (a reason code; the words in the log). */
function failedTest(error: unknown): UiMessage {
  const known = messageOfSentence(safeErrorText(error));
  return known.code === LEGACY_MESSAGE_CODE ? linkMessage('link.test.failed', { reason: reasonOf(error) }) : known;
}

export interface KeepAliveOptions {
  check: TokenCheck;
  refresh: RefreshGrant;
  access: AccessTokens;
  /** A newer token from an answer's header (the manager's noteResponseToken). */
  onHeaderToken: (token: string, sentWith?: string) => void;
}

function formatDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

export class KeepAlive {
  private timer: NodeJS.Timeout | undefined;
  private retryAt: number | undefined;
  private failures = 0;
  private expiryWarned = false;
  private stopped = true;

  constructor(
    private readonly session: TokenSession,
    private readonly options: KeepAliveOptions,
  ) {}

  get running(): boolean {
    return !this.stopped;
  }

  /** Allows timers again; the first schedule() follows once the tokens are loaded. */
  start(): void {
    this.stopped = false;
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  /** A (re-)link: back-off and warnings start over, and the new tokens get their own schedule. */
  afterLink(): void {
    this.clearBackoff();
    if (!this.stopped) this.schedule();
  }

  /** A successful grant: failures so far no longer count, and a later expiry deserves a new warning. */
  clearBackoff(): void {
    this.failures = 0;
    this.retryAt = undefined;
    this.expiryWarned = false;
  }

  /** The tokens are gone (unlink): nothing is due until the next link. */
  forget(): void {
    this.retryAt = undefined;
    this.failures = 0;
    this.clearTimer();
  }

  /** Sets the one timer for whatever is due first: keep-alive, expiry refresh, a waiting check, or a retry. */
  schedule(): void {
    this.clearTimer();
    const session = this.session;
    if (this.stopped || !session.record) return;
    const now = session.now();
    const due: number[] = [];
    if (session.current) {
      due.push(session.lastAliveAt !== undefined ? session.lastAliveAt + KEEP_ALIVE_INTERVAL_MS : now + FIRST_CHECK_DELAY_MS);
      const refreshAt = refreshDueAt(session.current.expiresAt, session.current.issuedAt);
      if (refreshAt !== undefined && session.refreshUsable()) due.push(refreshAt);
      if (session.refreshUsable()) due.push(refreshTokenDueAt(session.record));
    } else if (session.refreshUsable() && session.state !== 'unlinked') {
      due.push(now);
    }
    if (session.record.pendingAccessToken) due.push(now + FIRST_CHECK_DELAY_MS);
    if (due.length === 0) return;
    let next = Math.min(...due);
    if (this.retryAt !== undefined) next = Math.max(next, this.retryAt);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void session.track(this.tick()).finally(() => {
        this.schedule();
      });
    }, timerDelay(next, now));
    this.timer.unref();
  }

  /** Counts a failed round and sets the retry back-off; logged as a warning from the third failure on. */
  noteFailure(error: unknown, what: string): void {
    if (error instanceof AuthorizationLostError || error instanceof RefreshRejectedError) return; // already logged once
    this.failures += 1;
    const delay = error instanceof RateLimitedError && error.retryAfterMs !== undefined ? Math.max(error.retryAfterMs, retryDelayMs(this.failures)) : retryDelayMs(this.failures);
    this.retryAt = this.session.now() + delay;
    const text = `Lock Access could not ${what}: ${safeErrorText(error)} Trying again in ${Math.round(delay / 60_000)} min.`;
    if (this.failures >= 3) this.session.log.warn(text);
    else this.session.log.debug(text);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One maintenance round. Never throws: it runs from a timer. */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.maintain();
    } catch (error) {
      this.noteFailure(error, 'keep the tokens fresh');
    }
  }

  private async maintain(): Promise<void> {
    const session = this.session;
    const { check, refresh, access } = this.options;
    const now = session.now();
    // The settings UI server may have linked, re-linked or unlinked in the meantime.
    const onDisk = await session.store.read();
    if (onDisk === undefined || onDisk.rotations !== session.record?.rotations) session.adopt(onDisk);
    if (!session.record) return;
    if (session.record.pendingAccessToken) {
      await session.store.locked(async () => {
        const fresh = await session.store.read();
        if (!fresh) {
          session.adopt(undefined);
          return;
        }
        if (fresh.rotations !== session.record?.rotations) session.adopt(fresh);
        // Renewed tokens not on disk yet: their waiting access token is the one in memory.
        await check.validatePending(session.saver.unsaved && session.record ? session.record : fresh, 'expiry');
      });
    }
    if (!session.current) {
      if (session.refreshUsable() && session.state !== 'unlinked') await refresh.run('noAccessToken');
      return;
    }
    if (session.lastAliveAt === undefined || now >= session.lastAliveAt + KEEP_ALIVE_INTERVAL_MS) {
      const token = session.current.token;
      const result = await check.check(token);
      if (result.kind === 'ok') {
        // An unlink while the check was under way: its answer keeps nothing alive.
        if (!session.acceptsHeaderFrom(token)) return;
        this.options.onHeaderToken(result.headerToken ?? token, token);
        session.aliveAt(now);
        session.log.debug('Lock Access: daily keep-alive call succeeded.');
      } else if (result.kind === 'unauthorized') {
        await access.afterUnauthorized(token);
        return;
      } else {
        throw new TransientError(`the daily keep-alive call failed (${result.detail})`);
      }
    }
    const current = session.current;
    const record = session.record;
    if (session.refreshUsable() && now >= refreshTokenDueAt(record)) {
      // Header rotation kept the access token alive, so no grant ran; the refresh token nears its year.
      const days = Math.floor((now - (record.lastRefreshAt ?? record.linkedAt)) / DAY_MS);
      session.log.info(`Lock Access: the refresh token is ${days} days old and valid for one year at most, so it is spent now for a new one (the access token keeps working meanwhile).`);
      await refresh.run('refreshTokenAge');
      this.failures = 0;
      this.retryAt = undefined;
      return;
    }
    const refreshAt = refreshDueAt(current.expiresAt, current.issuedAt);
    if (refreshAt === undefined || now < refreshAt) {
      this.failures = 0;
      this.retryAt = undefined;
      return;
    }
    if (session.refreshUsable()) {
      await refresh.run('expiry');
      this.failures = 0;
      this.retryAt = undefined;
    } else if (!this.expiryWarned && current.expiresAt !== undefined) {
      this.expiryWarned = true;
      session.log.warn(`Lock Access: the access token expires on ${formatDate(current.expiresAt)} and there is no unused refresh token to renew it. ${REAUTHORIZATION_ADVICE.replace('Until then', 'Before then, to avoid an interruption; after that')}`);
    }
  }
}
