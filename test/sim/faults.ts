// Fault injection for the API and the token endpoint: latency, 5xx, 429 with Retry-After,
// dropped connections, and a token endpoint that commits a rotation and then fails the reply; and
// for callbacks, a signature clock that is off (a wrong system clock on either side).

export type FaultEntry =
  | { kind: 'fail'; remaining: number; status: number; route?: string | undefined }
  | { kind: 'rateLimit'; remaining: number; retryAfterSeconds: number; route?: string | undefined }
  | { kind: 'drop'; remaining: number; route?: string | undefined };

export type RotateFailMode = 'drop' | '500';

export interface SimFaults {
  latencyMs: number;
  /**
   * Added to the clock for every callback signature's `t` (negative = in the past), as when this
   * machine's clock or the service's is off. Per-delivery `signature.skewMs` adds to it.
   */
  signatureSkewMs: number;
  /**
   * False: callbacks no longer reach their address, as when the user's tunnel or proxy stopped.
   * Each attempt fails without a connection and is retried on the service's schedule.
   */
  forwarding: boolean;
  failNext(n: number, status?: number, route?: string): void;
  rateLimitNext(n: number, retryAfterSeconds: number, route?: string): void;
  dropNext(n: number, route?: string): void;
  rotateThenFail(mode: RotateFailMode): void;
  /**
   * The next `n` refresh grants are answered 400 with `body` (JSON, or text when a string) before
   * the refresh token is looked at: an OAuth error that says nothing about the token.
   */
  refuseGrantNext(n: number, body: unknown): void;
  clear(): void;
}

export class Faults implements SimFaults {
  latencyMs: number;
  signatureSkewMs = 0;
  forwarding = true;
  private entries: FaultEntry[] = [];
  private rotateFail: RotateFailMode[] = [];
  private grantRefusals: unknown[] = [];

  constructor(latencyMs = 0) {
    this.latencyMs = latencyMs;
  }

  failNext(n: number, status = 503, route?: string): void {
    if (status < 500 || status > 599) throw new RangeError('failNext takes a 5xx status');
    this.entries.push({ kind: 'fail', remaining: n, status, route });
  }

  rateLimitNext(n: number, retryAfterSeconds: number, route?: string): void {
    this.entries.push({ kind: 'rateLimit', remaining: n, retryAfterSeconds, route });
  }

  dropNext(n: number, route?: string): void {
    this.entries.push({ kind: 'drop', remaining: n, route });
  }

  /** The next successful refresh grant stores the rotation, then fails its reply. */
  rotateThenFail(mode: RotateFailMode): void {
    this.rotateFail.push(mode);
  }

  refuseGrantNext(n: number, body: unknown): void {
    for (let i = 0; i < n; i += 1) this.grantRefusals.push(body);
  }

  clear(): void {
    this.entries = [];
    this.rotateFail = [];
    this.grantRefusals = [];
    this.latencyMs = 0;
    this.signatureSkewMs = 0;
    this.forwarding = true;
  }

  /** Consumes and returns the first pending fault whose route matches one of the request's names. */
  take(names: readonly string[]): FaultEntry | undefined {
    const entry = this.entries.find((e) => e.remaining > 0 && (e.route === undefined || matchesRoute(e.route, names)));
    if (!entry) return undefined;
    entry.remaining -= 1;
    this.entries = this.entries.filter((e) => e.remaining > 0);
    return entry;
  }

  takeRotateFail(): RotateFailMode | undefined {
    return this.rotateFail.shift();
  }

  /** The body of the next scripted refresh-grant refusal (`{ body }` so an undefined body still counts). */
  takeGrantRefusal(): { body: unknown } | undefined {
    return this.grantRefusals.length > 0 ? { body: this.grantRefusals.shift() } : undefined;
  }

  pending(): { entries: FaultEntry[]; rotateThenFail: RotateFailMode[]; latencyMs: number; signatureSkewMs: number; forwarding: boolean } {
    return { entries: this.entries.map((e) => ({ ...e })), rotateThenFail: [...this.rotateFail], latencyMs: this.latencyMs, signatureSkewMs: this.signatureSkewMs, forwarding: this.forwarding };
  }
}

/**
 * A route selector matches the request's "METHOD /pattern", "/pattern", "METHOD /path" or "/path",
 * with or without the `/api` or `/oauth` prefix (so `/users/me`, `GET /api/users/me`,
 * `POST /webhook/:lockID` and `/oauth/access_token` all work).
 */
export function matchesRoute(route: string, names: readonly string[]): boolean {
  const wanted = route.trim();
  return names.some((name) => name === wanted || stripPrefix(name) === wanted);
}

function stripPrefix(name: string): string {
  return name.replace(/^((?:[A-Z]+ )?)\/(?:api|oauth)(?=\/)/, '$1');
}

export function routeNames(method: string, pattern: string | undefined, path: string): string[] {
  const names = [`${method} ${path}`, path];
  if (pattern) names.unshift(`${method} ${pattern}`, pattern);
  return names;
}
