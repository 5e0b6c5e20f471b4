// The real tunnel: the official ngrok SDK (`@ngrok/ngrok`, an optional dependency with a native
// build per platform), imported only when a tunnel is configured, so a plugin without one never
// loads it (it costs about 11 MiB of memory once loaded). Every SDK failure becomes a TunnelError
// whose words never hold the authtoken (ngrok's own messages can quote it).
import { TunnelError, type SessionEvents, type TunnelAdapter, type TunnelProblem, type TunnelTarget } from './tunnel-adapter.js';

/** The part of the SDK this plugin uses. */
export interface NgrokSdk {
  forward(config: Record<string, unknown>): Promise<NgrokListener>;
}
export interface NgrokListener {
  url(): string | null;
  close(): Promise<void>;
}

export interface NgrokOptions {
  authtoken: string;
  domain?: string | undefined;
  /** Loads the SDK (tests hand in their own). */
  load?: () => Promise<NgrokSdk>;
  /** The SDK reports the session lost ("closed") or back ("connected"). */
  onStatus?: SessionEvents;
  /** An open that has not answered by then counts as no way to ngrok. */
  openTimeoutMs?: number;
}

const OPEN_TIMEOUT_MS = 30_000;

// ngrok's error codes (https://ngrok.com/docs/errors/) by what the user has to fix.
const AUTHTOKEN_CODES = new Set(['ERR_NGROK_105', 'ERR_NGROK_106', 'ERR_NGROK_107', 'ERR_NGROK_300', 'ERR_NGROK_4018']);
const DOMAIN_CODES = new Set(['ERR_NGROK_320', 'ERR_NGROK_7117', 'ERR_NGROK_7118']);
const IN_USE_CODES = new Set(['ERR_NGROK_108', 'ERR_NGROK_334']);

const loadSdk = (): Promise<NgrokSdk> => import('@ngrok/ngrok');

/** A failure of the SDK in this plugin's terms, with the authtoken taken out of its words. */
export function ngrokProblem(error: unknown, authtoken: string): TunnelError {
  const raw = error instanceof Error ? error.message : String(error);
  const text = (authtoken.length > 0 ? raw.split(authtoken).join('[authtoken]') : raw).split('\n')[0]?.slice(0, 200) ?? '';
  const tagged = (error as { errorCode?: unknown } | null)?.errorCode;
  const code = /ERR_NGROK_\d+/.exec(raw)?.[0] ?? (typeof tagged === 'string' ? tagged : undefined);
  let problem: TunnelProblem = 'other';
  if (code !== undefined && AUTHTOKEN_CODES.has(code)) problem = 'authtoken';
  else if (code !== undefined && DOMAIN_CODES.has(code)) problem = 'domain';
  else if (code !== undefined && IN_USE_CODES.has(code)) problem = 'inUse';
  else if (/authtoken|authentication failed/i.test(raw)) problem = 'authtoken';
  else if (/(domain|hostname).*(reserved|not .*account)/i.test(raw)) problem = 'domain';
  else if (/already online|simultaneous/i.test(raw)) problem = 'inUse';
  else if (/failed to connect session|tcp connection|dns|timed? ?out|connection refused|network|unreachable/i.test(raw)) problem = 'network';
  return new TunnelError(problem, text === '' ? (code ?? 'unknown error') : text);
}

export class NgrokAdapter implements TunnelAdapter {
  readonly provider = 'ngrok';
  private listener: NgrokListener | undefined;
  private closed = false;

  constructor(private readonly options: NgrokOptions) {}

  async open(target: TunnelTarget): Promise<string> {
    this.closed = false;
    let sdk: NgrokSdk;
    try {
      sdk = await (this.options.load ?? loadSdk)();
    } catch (error) {
      throw new TunnelError('sdkMissing', error instanceof Error ? error.message.split('\n')[0] ?? error.name : String(error));
    }
    const { authtoken, domain, onStatus } = this.options;
    const config: Record<string, unknown> = {
      addr: `${target.https ? 'https://' : ''}${target.host}:${target.port}`,
      authtoken,
      forwards_to: 'homebridge-lock-access',
      // The listener's own certificate names the public host, not this machine's loopback address.
      ...(target.https ? { verify_upstream_tls: false } : {}),
      ...(domain === undefined || domain === '' ? {} : { domain }),
      onStatusChange: (status: string) => {
        if (status === 'closed') onStatus?.('lost', undefined);
        else if (status === 'connected') onStatus?.('back', this.listener?.url() ?? undefined);
      },
    };
    const opening = sdk.forward(config);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new TunnelError('network', `no answer from ngrok within ${Math.round((this.options.openTimeoutMs ?? OPEN_TIMEOUT_MS) / 1000)} seconds`));
      }, this.options.openTimeoutMs ?? OPEN_TIMEOUT_MS);
      timer.unref();
    });
    let listener: NgrokListener;
    try {
      listener = await Promise.race([opening, timeout]);
    } catch (error) {
      // A late success after the timeout must not leave a tunnel nobody closes.
      opening.then((late) => late.close(), () => undefined).catch(() => undefined);
      throw error instanceof TunnelError ? error : ngrokProblem(error, authtoken);
    } finally {
      clearTimeout(timer);
    }
    if (this.isClosed()) {
      await listener.close().catch(() => undefined);
      throw new TunnelError('other', 'closed while opening');
    }
    this.listener = listener;
    const url = listener.url();
    if (url === null || url === '') throw new TunnelError('other', 'ngrok gave no address');
    return url;
  }

  /** Read after an await: close() may have run meanwhile. */
  private isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close().catch(() => undefined);
  }
}
