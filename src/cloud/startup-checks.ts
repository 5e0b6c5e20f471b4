// The first setup run's two extra steps: the self-check of the public URL (repeated by
// SelfCheckWatch), and asking every lock for its state (the service answers with `status` callbacks).
import type { ApiClient } from './http/api.js';
import { operateLock } from './remote-operate.js';
import { ConcurrencyPool, realSleep } from './http/retry.js';
import { checkPublicUrl } from './self-check.js';
import { callbackUrls } from '../config.js';
import { errorText } from '../util/error-text.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import { redactUrlIn, withoutCredentials } from '../util/redact-url.js';
import type { UiMessage } from '../util/ui-message.js';

/** What one self-check found; the watch in status/ logs it and plans the next. */
export interface SelfCheckOutcome {
  ok: boolean;
  url: string;
  /** What was found, without credentials. */
  message: UiMessage;
}

/** State refreshes at start-up: a few at once is plenty and stays clear of rate limits. */
const STATUS_REFRESH_CONCURRENCY = 4;

/** One check of the public address, in words without credentials (the watch logs and schedules). */
export async function selfCheckOnce(options: { publicUrl: string; instanceNonce: string }): Promise<SelfCheckOutcome> {
  const { publicUrl, instanceNonce } = options;
  const result = await checkPublicUrl({ publicUrl, instanceNonce });
  const health = callbackUrls(publicUrl).health();
  // user:password of a proxy's basic auth in publicUrl never reaches the log or the status file.
  const redact = (text: string) => redactUrlIn(redactUrlIn(text, health), publicUrl);
  const params = Object.fromEntries(Object.entries(result.message.params).map(([name, value]) => [name, typeof value === 'string' ? redact(value) : value]));
  return { ok: result.ok, url: withoutCredentials(health), message: { code: result.message.code, params, text: redact(result.message.text) } };
}

/** Asks every lock for its state; a lock that cannot be asked is logged and the others go on. */
export async function refreshLockStates(options: { client: ApiClient; lockIds: readonly string[]; log: Logger; nameOf: (lockId: string) => string }): Promise<void> {
  const { client, lockIds, log, nameOf } = options;
  if (lockIds.length === 0) return;
  const pool = new ConcurrencyPool({ concurrency: STATUS_REFRESH_CONCURRENCY, sleep: realSleep, now: Date.now });
  await Promise.all(
    lockIds.map((lockId) =>
      pool.run(async () => {
        try {
          await operateLock(client, lockId, 'status');
        } catch (error) {
          deviceLogger(log, () => nameOf(lockId)).warn(`could not ask for the current state (${errorText(error)}).`);
        }
      }),
    ),
  );
}
