// What the listener writes down about each answered callback: counters for the status file, the
// last callback per device, and the log lines. How a rejection is counted and made visible (design
// section 6, "Rejections are never silent") is decided in rejected() and countRejection() only.
import type { Logger } from '../util/logger.js';
import { errorText } from '../util/error-text.js';
import type { CallbackRoute } from './callback-kinds.js';
import type { LastCallback, Rejected, Verdict } from './accept.js';
import { RejectionNotices } from './rejection-notice.js';

export interface ReceiverStats {
  accepted: number;
  duplicates: number;
  ignoredUnknown: number;
  /** Rejections by reason (signature failures, 'bad-token', 'schema-violation', ...). */
  rejected: Record<string, number>;
  /** Epoch ms of the last accepted callback per 'lock:ID', 'doorbell:ID' or 'user'. */
  lastCallbackAt: Record<string, number>;
  /** Times the event sink threw after a callback was acknowledged. */
  sinkErrors: number;
  /**
   * The last refused callback: when, why, for which device path (`lock:ID`), and for a stale or
   * future signature this clock's offset from it (ms).
   */
  lastRejection?: { at: number; reason: string; clockOffsetMs?: number; device?: string };
  /** The last request to a path the listener does not serve (a proxy that strips or changes the path). */
  lastUnknownPath?: { at: number; path: string };
}

/** Longest path kept for the status file: enough to recognise a prefix, never a flood. */
const MAX_PATH_CHARS = 200;

/** Bounds, so a sender inventing ids or kinds cannot grow memory or the log without limit. */
const MAX_LAST_CALLBACK_KEYS = 1_000;
const MAX_UNKNOWN_KINDS_LOGGED = 100;

export class ReceiverTally {
  readonly stats: ReceiverStats = { accepted: 0, duplicates: 0, ignoredUnknown: 0, rejected: {}, lastCallbackAt: {}, sinkErrors: 0 };
  private readonly unknownKindsLogged = new Set<string>();
  // Counted rather than Object.keys(...).length on every callback.
  private lastCallbackKeys = 0;
  private readonly notices = new RejectionNotices();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** One answered callback: the verdict's counters, last-callback time and log line. */
  note(route: CallbackRoute, verdict: Verdict, pathId?: string): void {
    switch (verdict.kind) {
      case 'rejected':
        this.rejected(route, verdict, pathId);
        return;
      case 'ignored':
        this.markLastCallback(verdict.record.lastCallback);
        this.stats.ignoredUnknown++;
        if (!this.unknownKindsLogged.has(verdict.kindName) && this.unknownKindsLogged.size < MAX_UNKNOWN_KINDS_LOGGED) {
          this.unknownKindsLogged.add(verdict.kindName);
          this.log.info(`Webhook: a callback of a kind or value this plugin does not know (${verdict.kindName}) was accepted; nothing it could not map was changed.`);
        }
        return;
      case 'duplicate':
        this.markLastCallback(verdict.record.lastCallback);
        this.stats.duplicates++;
        this.log.debug(`Webhook: duplicate ${route} callback ignored.`);
        return;
      case 'accepted':
        this.markLastCallback(verdict.record.lastCallback);
        this.stats.accepted++;
        return;
    }
  }

  /** A callback the pipeline refused: counted, and a fixable cause warned about at most once an hour. */
  rejected(route: CallbackRoute, verdict: Rejected, pathId?: string): void {
    this.countRejection(verdict.reason);
    const at = this.now();
    const device = route === 'user' ? 'user:' : pathId === undefined ? undefined : `${route}:${pathId.slice(0, MAX_PATH_CHARS)}`;
    this.stats.lastRejection = {
      at,
      reason: verdict.reason,
      ...(verdict.offsetMs === undefined ? {} : { clockOffsetMs: verdict.offsetMs }),
      ...(device === undefined ? {} : { device }),
    };
    const warning = this.notices.note(verdict.reason, at, verdict.offsetMs);
    if (warning !== undefined) this.log.warn(warning);
    this.log.debug(`Webhook: ${route} callback refused with ${verdict.status} (${verdict.reason}${verdict.detail === undefined ? '' : `: ${verdict.detail}`}).`);
  }

  /** A request to a path the listener does not serve: its path (never its query) is kept for the test event. */
  unknownPath(url: string): void {
    const path = url.split('?')[0] ?? '';
    this.stats.lastUnknownPath = { at: this.now(), path: path.slice(0, MAX_PATH_CHARS) };
  }

  /** Counts a refused request by reason (also for what the listener refuses before the pipeline). */
  countRejection(reason: string): void {
    this.stats.rejected[reason] = (this.stats.rejected[reason] ?? 0) + 1;
  }

  /** The event sink failed after the reply: counted and logged, the reply already stood. */
  sinkFailed(route: CallbackRoute, error: unknown): void {
    this.stats.sinkErrors++;
    this.log.error(`Webhook: handling an accepted ${route} callback failed: ${errorText(error, 'unknown error')}`);
  }

  private markLastCallback({ key, at }: LastCallback): void {
    if (!Object.hasOwn(this.stats.lastCallbackAt, key)) {
      if (this.lastCallbackKeys >= MAX_LAST_CALLBACK_KEYS) return;
      this.lastCallbackKeys += 1;
    }
    this.stats.lastCallbackAt[key] = at;
  }
}
