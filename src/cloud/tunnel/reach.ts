// The public address the service calls, kept here only: webhook.publicUrl as configured, or, with
// webhook.tunnel, the built-in tunnel's address once it connects (the tunnel wins when both are
// set). The registrar and the self-check read it here; every new address is announced (they
// follow it) and goes to the status file, without credentials; the tunnel opens once the listener
// runs and closes at shutdown.
import { webhookPathPrefix, type TunnelConfig, type WebhookConfig } from '../../config.js';
import type { Logger } from '../../util/logger.js';
import { withoutCredentials } from '../../util/redact-url.js';
import { Signal } from '../../util/signal.js';
import { NgrokAdapter } from './ngrok-adapter.js';
import { loopbackFor, type SessionEvents, type TunnelAdapter } from './tunnel-adapter.js';
import type { UiMessage } from '../../util/ui-message.js';
import { TunnelKeeper, type TunnelState } from './tunnel-keeper.js';
import { tunnelMessage } from './tunnel-messages.js';

/** The address in use as the status file shows it (without credentials). */
export interface ReachRecord {
  via: 'config' | 'ngrok';
  url?: string;
  tunnel?: Pick<TunnelState, 'state' | 'message' | 'since' | 'nextTryAt'>;
}

export interface ReachDeps {
  webhook: WebhookConfig;
  log: Logger;
  publish(address: ReachRecord): void;
  /** The tunnel's adapter; the real ngrok one unless a test scripts its own. */
  adapter?: (tunnel: TunnelConfig, session: SessionEvents) => TunnelAdapter;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

const realAdapter = (tunnel: TunnelConfig, session: SessionEvents): TunnelAdapter =>
  new NgrokAdapter({ authtoken: tunnel.authtoken, domain: tunnel.domain, onStatus: session });

export class Reach {
  /** A tunnel adopted a new address (the first, or another after a reconnect). */
  readonly newAddress = new Signal<[url: string]>();
  /** The tunnel failed, or dropped and is reconnecting: callbacks cannot arrive until it connects again. */
  readonly wayInLost = new Signal();
  private keeper: TunnelKeeper | undefined;
  private readonly fixed: string | undefined;
  private tunnelState: TunnelState | undefined;

  constructor(private readonly deps: ReachDeps) {
    // Both set: the tunnel wins (the config check has warned).
    this.fixed = deps.webhook.tunnel === undefined ? deps.webhook.publicUrl : undefined;
    this.publish();
  }

  /** The address to register and check; undefined while a tunnel has not connected. */
  get publicUrl(): string | undefined {
    return this.fixed ?? this.keeper?.address;
  }

  /** Why no callback can arrive now (a tunnel that failed, or was not opened), in words; undefined otherwise. */
  get brokenWayIn(): UiMessage | undefined {
    return this.tunnelState?.state === 'failed' ? this.tunnelState.message : undefined;
  }

  /** The address in words for the log line of the listener. */
  describe(): string {
    if (this.deps.webhook.tunnel === undefined) return withoutCredentials(this.fixed ?? '');
    return this.publicUrl ?? 'the ngrok tunnel, once it connects';
  }

  /** The listener runs: open the tunnel to it (nothing to do without one). */
  listenerReady(port: number, https: boolean): void {
    const { webhook, log } = this.deps;
    const tunnel = webhook.tunnel;
    if (tunnel === undefined || this.keeper !== undefined) return;
    const session: SessionEvents = (state, origin) => {
      if (state === 'lost') this.keeper?.sessionLost();
      else this.keeper?.sessionBack(origin);
    };
    this.keeper = new TunnelKeeper({
      adapter: (this.deps.adapter ?? realAdapter)(tunnel, session),
      target: { host: loopbackFor(webhook.listenHost), port, https },
      prefix: webhookPathPrefix(webhook),
      domain: tunnel.domain,
      log,
      onAddress: (url) => {
        this.newAddress.emit(url);
      },
      onState: (state) => {
        const lost = (state.state === 'failed' || state.state === 'reconnecting') && this.tunnelState?.state !== state.state;
        this.tunnelState = state;
        if (lost) this.wayInLost.emit();
        this.publish();
      },
      now: this.deps.now ?? Date.now,
      setTimer: this.deps.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref()),
      clearTimer: this.deps.clearTimer ?? ((handle) => {
        clearTimeout(handle as NodeJS.Timeout);
      }),
    });
    void this.keeper.start();
  }

  /** The listener did not start: a tunnel would have nothing to forward to, and the status says so. */
  listenerFailed(): void {
    if (this.deps.webhook.tunnel === undefined) return;
    const now = (this.deps.now ?? Date.now)();
    this.tunnelState = { state: 'failed', message: tunnelMessage('tunnel.noListener'), since: now };
    this.publish();
  }

  /** Closes the tunnel (at shutdown). */
  async stop(): Promise<void> {
    await this.keeper?.stop();
  }

  private publish(): void {
    const url = this.publicUrl;
    const tunnel = this.tunnelState;
    this.deps.publish({
      via: this.deps.webhook.tunnel === undefined ? 'config' : 'ngrok',
      ...(url === undefined ? {} : { url: withoutCredentials(url) }),
      ...(tunnel === undefined ? {} : { tunnel: { state: tunnel.state, message: tunnel.message, since: tunnel.since, ...(tunnel.nextTryAt === undefined ? {} : { nextTryAt: tunnel.nextTryAt }) } }),
    });
  }
}
