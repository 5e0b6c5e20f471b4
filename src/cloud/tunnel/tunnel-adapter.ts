// The one shape of a tunnel provider: open a way from the internet to the listener, say at which
// public origin, close it. The lifecycle (tunnel-keeper.ts) knows only this, so every rule about
// adopting the address, retrying and closing is tested with a scripted adapter; ngrok-adapter.ts
// is the real one.

/** Where the listener answers on this machine. */
export interface TunnelTarget {
  host: string;
  port: number;
  /** The listener serves https itself (its own certificate). */
  https: boolean;
}

/** Where a tunnel reaches a listener bound to `host`: a wildcard address means this machine's loopback. */
export function loopbackFor(host: string): string {
  if (host === '' || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** An open tunnel's session dropped (`lost`) or came back (`back`, at its origin). */
export type SessionEvents = (state: 'lost' | 'back', origin: string | undefined) => void;

export interface TunnelAdapter {
  /** The provider's name as a user knows it ("ngrok"). */
  readonly provider: string;
  /** Opens the tunnel; resolves with its public origin (`https://host`). Rejects with a TunnelError. */
  open(target: TunnelTarget): Promise<string>;
  /** Closes the tunnel (a no-op when none is open). Never rejects. */
  close(): Promise<void>;
}

/**
 * Why a tunnel could not open, each with its own fix: no way to the provider, an authtoken it
 * refuses, a domain that is not the account's, the domain or the account's agent limit in use
 * elsewhere, no build of the SDK for this machine, or anything else.
 */
export type TunnelProblem = 'network' | 'authtoken' | 'domain' | 'inUse' | 'sdkMissing' | 'other';

export class TunnelError extends Error {
  constructor(
    readonly problem: TunnelProblem,
    /** The provider's words or error code, already free of secrets. */
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'TunnelError';
  }
}
