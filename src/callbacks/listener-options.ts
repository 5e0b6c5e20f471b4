// What the webhook listener is built with: the config, the checks' secrets, where accepted events
// go and whom it tells what, and the limits it holds each connection to.
import type { WebhookConfig } from '../config.js';
import type { DeviceEvent } from '../model/events.js';
import type { Logger } from '../util/logger.js';
import type { CallbackContext } from './accept.js';
import type { DedupeStore } from './dedupe.js';
import type { ReceiverStats } from './receiver-tally.js';

export interface ReceiverOptions {
  webhook: WebhookConfig;
  /** Refused at start-up if empty or whitespace-padded. */
  apiKey: string;
  /** The current stored webhook token (may change at run time). */
  callbackToken: () => string | undefined;
  instanceNonce: string;
  dedupe: DedupeStore;
  log: Logger;
  onEvents: (events: DeviceEvent[], context: CallbackContext) => void;
  now?: () => number;
  /** False while the event sink cannot take events yet: callbacks get 503 and are retried. */
  isReady?: () => boolean;
  /** After a refused callback was answered and counted (the status file shows counts within seconds). */
  onRejected?: (stats: ReceiverStats) => void;
  /**
   * After every callback that passed the signature and header checks (accepted, duplicate or of an
   * unknown kind: each proves that the way in works), with its device key (`lock:ID`, `user`).
   */
  onVerified?: (key: string, stats: ReceiverStats, account: string | undefined) => void;
  /**
   * The extra account an `/a/<id>/…` path names, while it is enabled and linked: its callbacks are
   * checked with its own key and header secret. Undefined (and no function): that path is 404.
   */
  accounts?: (id: string) => AccountGate | undefined;
  /** The socket limits; LISTENER_LIMITS unless a test needs them shorter. */
  limits?: ListenerLimits;
  /** How often the TLS certificate and key files are looked at for a renewal (ms). */
  tlsWatchIntervalMs?: number;
}

/** What verifies an extra account's callbacks: its API key and its header secret. */
export interface AccountGate {
  readonly apiKey: string;
  readonly callbackToken: () => string | undefined;
}

export interface ListenerLimits {
  /** All request headers must have arrived this long after the connection or the previous request. */
  headersTimeoutMs: number;
  /** The body must have arrived this long after the headers. */
  bodyTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** How often the two timeouts above are checked, so they are enforced within this much. */
  checkEveryMs: number;
  maxConnections: number;
}

/**
 * Genuine callbacks are a few KiB and arrive in one go. The keep-alive timeout is longer than the
 * 60 s that common reverse proxies and tunnels keep idle upstream connections: they then never
 * reuse a socket the plugin is closing, a race that shows as sporadic 502s and needless retries.
 */
export const LISTENER_LIMITS: ListenerLimits = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  keepAliveTimeoutMs: 75_000,
  checkEveryMs: 1_000,
  maxConnections: 256,
};
