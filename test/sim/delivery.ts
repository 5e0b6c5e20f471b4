// The delivery engine: one signed HTTP call per event and registration, the spec's retry schedule
// for failed replies, no redirect following, and a log of every attempt. Time comes from the clock.
import { randomUUID } from 'node:crypto';
import type { SimClock } from './clock.js';
import { signPayload, type SignatureOptions, type SignatureOverrides } from './signature.js';

/** The spec's retry schedule: delay before retry #1 ... #10. */
export const RETRY_DELAYS_MS: readonly number[] = [
  30_000, 60_000, 2 * 60_000, 4 * 60_000, 8 * 60_000, 16 * 60_000, 32 * 60_000, 60 * 60_000, 8 * 60 * 60_000, 24 * 60 * 60_000,
];

/** Replies that are final failures: not retried. */
export const NOT_RETRIED = new Set([400, 401, 403]);

export interface DeliveryTarget {
  kind: 'lock' | 'doorbell' | 'user';
  scope: string;
  url: string;
  method: string;
  /** The registration's custom header, unless this callback kind carries none. */
  customHeader?: { name: string; value: string } | undefined;
  /** The key that signs it: the API key the registration was made with (the engine's secret otherwise). */
  secret?: string;
}

export type AttemptOutcome = 'delivered' | 'rejected' | 'failed';

export interface DeliveryRecord {
  deliveryId: string;
  attempt: number;
  kind: DeliveryTarget['kind'];
  scope: string;
  url: string;
  method: string;
  /** `EventType/Event` of the payload, e.g. `operation/unlock`. */
  event: string;
  eventId?: string | undefined;
  /** Clock time of the attempt (epoch ms). */
  at: number;
  status?: number | undefined;
  error?: string | undefined;
  outcome: AttemptOutcome;
  /** Delay before the next attempt when one is scheduled. */
  nextRetryInMs?: number | undefined;
  requestHeaders: Record<string, string>;
  body: string;
}

export type FinalOutcome = 'delivered' | 'rejected' | 'exhausted' | 'cancelled';

export interface DeliveryResult {
  deliveryId: string;
  kind: DeliveryTarget['kind'];
  scope: string;
  url: string;
  event: string;
  /** The first attempt's result. */
  attempt: 1;
  status?: number | undefined;
  error?: string | undefined;
  outcome: AttemptOutcome;
  willRetry: boolean;
  /** Resolves when the delivery is final (delivered, rejected, retries exhausted or cancelled by close). */
  done: Promise<FinalOutcome>;
}

export interface DeliveryEngineOptions {
  clock: SimClock;
  secret: () => string;
  signature: SignatureOptions;
  /** Whether callbacks reach their address at all, read at each attempt (SimFaults.forwarding). */
  forwarding?: () => boolean;
  /** Skew of every signature's `t` (ms), read at each attempt (SimFaults.signatureSkewMs). */
  skewMs?: () => number;
  timeoutMs?: number;
}

function eventName(body: string): { event: string; eventId?: string } {
  try {
    const parsed = JSON.parse(body) as { EventType?: unknown; Event?: unknown; EventID?: unknown };
    const type = typeof parsed.EventType === 'string' ? parsed.EventType : '?';
    const event = typeof parsed.Event === 'string' ? `${type}/${parsed.Event}` : type;
    return typeof parsed.EventID === 'string' ? { event, eventId: parsed.EventID } : { event };
  } catch {
    return { event: '?' };
  }
}

/** A delivery's signature options with the time of its first attempt. */
type SignedOnce = SignatureOverrides & { signedAt: number };

export class DeliveryEngine {
  readonly records: DeliveryRecord[] = [];
  private readonly timers = new Map<unknown, () => void>();
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly options: DeliveryEngineOptions) {}

  /** Starts a delivery; resolves after its first attempt. */
  async deliver(body: string, target: DeliveryTarget, signature: SignatureOverrides = {}): Promise<DeliveryResult> {
    const deliveryId = randomUUID();
    const { event } = eventName(body);
    let finish: (outcome: FinalOutcome) => void = () => undefined;
    const done = new Promise<FinalOutcome>((resolve) => { finish = resolve; });
    // Signed once: every retry of this delivery carries the `t` of its first attempt, which is how
    // the receiver tells a retry from a new operation whose body happens to be identical.
    const signedAt = this.options.clock.now();
    const first = await this.attempt(deliveryId, 1, body, target, { ...signature, signedAt }, finish);
    return {
      deliveryId, kind: target.kind, scope: target.scope, url: target.url, event, attempt: 1,
      status: first.status, error: first.error, outcome: first.outcome, willRetry: first.nextRetryInMs !== undefined, done,
    };
  }

  private async attempt(
    deliveryId: string, attempt: number, body: string, target: DeliveryTarget, signature: SignedOnce, finish: (o: FinalOutcome) => void,
  ): Promise<DeliveryRecord> {
    const run = this.runAttempt(deliveryId, attempt, body, target, signature);
    this.inflight.add(run);
    let record: DeliveryRecord;
    try {
      record = await run;
    } finally {
      this.inflight.delete(run);
    }
    if (record.outcome === 'delivered' || record.outcome === 'rejected') {
      finish(record.outcome);
    } else if (this.closed) {
      finish('cancelled');
    } else if (record.nextRetryInMs === undefined) {
      finish('exhausted');
    } else {
      const handle = this.options.clock.setTimeout(() => {
        this.timers.delete(handle);
        if (this.closed) return;
        void this.attempt(deliveryId, attempt + 1, body, target, signature, finish);
      }, record.nextRetryInMs);
      this.timers.set(handle, () => { finish('cancelled'); });
    }
    return record;
  }

  private async runAttempt(deliveryId: string, attempt: number, body: string, target: DeliveryTarget, overrides: SignedOnce): Promise<DeliveryRecord> {
    const at = this.options.clock.now();
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'lock-access-simulator/webhooks' };
    if (!overrides.omit) {
      headers['x-svc-signature'] = overrides.header ?? signPayload(body, overrides.secret ?? target.secret ?? this.options.secret(), overrides.signedAt + (this.options.skewMs?.() ?? 0) + (overrides.skewMs ?? 0), {
        encoding: overrides.encoding ?? this.options.signature.encoding,
        timestampUnit: overrides.timestampUnit ?? this.options.signature.timestampUnit,
      });
    }
    if (target.customHeader) headers[target.customHeader.name.toLowerCase()] = target.customHeader.value;
    const { event, eventId } = eventName(body);
    const base = { deliveryId, attempt, kind: target.kind, scope: target.scope, url: target.url, method: target.method, event, eventId, at, requestHeaders: headers, body };
    let status: number | undefined;
    let error: string | undefined;
    try {
      if (this.options.forwarding?.() === false) throw new Error('connect ECONNREFUSED: the public address does not answer (forwarding stopped)');
      const response = await fetch(target.url, {
        method: target.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      status = response.status;
      await response.arrayBuffer().catch(() => undefined);
    } catch (err) {
      error = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
    }
    let outcome: AttemptOutcome;
    if (status !== undefined && status >= 200 && status <= 299) outcome = 'delivered';
    else if (status !== undefined && NOT_RETRIED.has(status)) outcome = 'rejected';
    else outcome = 'failed';
    const nextRetryInMs = outcome === 'failed' && !this.closed ? RETRY_DELAYS_MS[attempt - 1] : undefined;
    const record: DeliveryRecord = { ...base, status, error, outcome, nextRetryInMs };
    this.records.push(record);
    return record;
  }

  /** Resolves when no attempt is in flight (retries waiting on the clock do not count). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Retries waiting on the clock. */
  pendingRetries(): number {
    return this.timers.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [handle, cancel] of this.timers) {
      this.options.clock.clearTimeout(handle);
      cancel();
    }
    this.timers.clear();
    await this.idle();
  }
}
