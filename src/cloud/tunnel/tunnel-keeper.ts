// The tunnel's life: open it once the listener runs, adopt its address (origin plus the listener's
// path), hand every new address on so the registrations follow, retry a failed open with back-off,
// and close it at shutdown. A failure is one error line per cause (repeats go to the debug log);
// until the first success there is no address, so nothing is registered at a made-up one.
import { doublingDelay } from '../../util/backoff.js';
import type { Logger } from '../../util/logger.js';
import { TunnelError, type TunnelAdapter, type TunnelTarget } from './tunnel-adapter.js';
import type { UiMessage } from '../../util/ui-message.js';
import { tunnelFailureLine, tunnelFailureMessage, tunnelMessage } from './tunnel-messages.js';

export type TunnelStateName = 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'closed';

export interface TunnelState {
  state: TunnelStateName;
  /** What it means, never the authtoken. */
  message: UiMessage;
  since: number;
  /** The adopted public address. */
  url?: string;
  /** When the next try runs after a failure. */
  nextTryAt?: number;
}

export interface TunnelKeeperDeps {
  adapter: TunnelAdapter;
  target: TunnelTarget;
  /** The listener's path prefix ('' or '/path'), appended to the tunnel's origin. */
  prefix: string;
  /** For the words of a refused domain. */
  domain?: string | undefined;
  log: Logger;
  /** A new public address (the first one, or a changed one). */
  onAddress(url: string): void;
  onState(state: TunnelState): void;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** After a failed open: 30 s, then doubling up to every 30 minutes. */
export const TUNNEL_RETRY = { firstMs: 30_000, maxMs: 30 * 60_000 } as const;

export class TunnelKeeper {
  private url: string | undefined;
  private failures = 0;
  private lastProblem: string | undefined;
  private timer: unknown;
  private stopped = false;
  private opening: Promise<void> | undefined;
  private lost = false;

  constructor(private readonly deps: TunnelKeeperDeps) {}

  /** The provider as the user knows it, for the log. */
  private get name(): string {
    return this.deps.adapter.provider;
  }

  /** The adopted public address; undefined until the tunnel first connects. */
  get address(): string | undefined {
    return this.url;
  }

  /** Opens the tunnel now (one try at a time); a failure plans the next try. */
  start(): Promise<void> {
    this.opening ??= this.tryOpen().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /** The SDK's own reconnects: the session dropped, or came back (maybe at another address). */
  sessionLost(): void {
    if (this.stopped || this.lost || this.url === undefined) return;
    this.lost = true;
    this.deps.log.warn(`The ${this.name} tunnel lost its connection to ${this.name}; it reconnects on its own. Until then the service cannot deliver events (it sends them again later).`);
    this.publish('reconnecting', tunnelMessage('tunnel.reconnecting', { provider: this.name }));
  }

  sessionBack(origin: string | undefined): void {
    if (this.stopped || !this.lost) return;
    this.lost = false;
    this.deps.log.info(`The ${this.name} tunnel is connected again.`);
    this.adopt(origin ?? this.url ?? '');
  }

  /** Closes the tunnel and stops trying. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clearTimer(this.timer);
    this.timer = undefined;
    await this.opening?.catch(() => undefined);
    await this.deps.adapter.close();
    this.publish('closed', tunnelMessage('tunnel.closed'));
  }

  private async tryOpen(): Promise<void> {
    if (this.stopped) return;
    this.timer = undefined;
    if (this.url === undefined) this.publish('connecting', tunnelMessage('tunnel.connecting', { provider: this.name }));
    let origin: string;
    try {
      origin = await this.deps.adapter.open(this.deps.target);
    } catch (error) {
      if (!this.isStopped()) this.failed(error instanceof TunnelError ? error : new TunnelError('other', String(error)));
      return;
    }
    if (this.isStopped()) {
      await this.deps.adapter.close();
      return;
    }
    if (this.failures > 0) this.deps.log.info(`The ${this.name} tunnel connects again after ${this.failures} failed ${this.failures === 1 ? 'try' : 'tries'}.`);
    this.failures = 0;
    this.lastProblem = undefined;
    this.adopt(origin);
  }

  /** Read after an await: stop() may have run meanwhile. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private adopt(origin: string): void {
    const url = `${origin.replace(/\/+$/, '')}${this.deps.prefix}`;
    const changed = url !== this.url;
    this.url = url;
    this.publish('connected', tunnelMessage('tunnel.connected', { provider: this.name, url }));
    if (!changed) return;
    this.deps.log.info(`The ${this.name} tunnel is connected: the service reaches this plugin at ${url}; the webhooks are registered with this address.`);
    this.deps.onAddress(url);
  }

  private failed(error: TunnelError): void {
    this.failures += 1;
    const retries = error.problem !== 'sdkMissing';
    const message = tunnelFailureMessage(error, { domain: this.deps.domain });
    // One error per cause; the same cause again is a debug line (the back-off keeps trying).
    if (error.problem !== this.lastProblem) this.deps.log.error(tunnelFailureLine(message, error.detail, retries));
    else this.deps.log.debug(`${this.name} tunnel: try ${this.failures} failed again (${error.detail}).`);
    this.lastProblem = error.problem;
    if (!retries) {
      this.publish('failed', message);
      return;
    }
    const delay = doublingDelay(this.failures, TUNNEL_RETRY);
    this.publish('failed', message, this.deps.now() + delay);
    this.timer = this.deps.setTimer(() => {
      void this.start();
    }, delay);
  }

  private publish(state: TunnelStateName, message: UiMessage, nextTryAt?: number): void {
    this.deps.onState({
      state,
      message,
      since: this.deps.now(),
      ...(this.url === undefined ? {} : { url: this.url }),
      ...(nextTryAt === undefined ? {} : { nextTryAt }),
    });
  }
}
