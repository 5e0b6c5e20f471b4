// The random token the service sends back in the x-lock-access-token header of every callback.
// Generated once (32 random bytes, base64url), kept in webhook-secret.json (mode 0600) with a
// generation number, so the registrar can tell when registrations carry an old token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { z } from 'zod/v3';

import type { Storage } from '../../storage.js';

export const WEBHOOK_SECRET_FILE = 'webhook-secret.json';

/** Once every registration carries the new token, the previous one is still accepted this long (callbacks queued by the service). */
export const PREVIOUS_TOKEN_GRACE_MS = 10 * 60 * 1000;

const tokenText = z.string().regex(/^[A-Za-z0-9_-]{43}$/);

const secretFileSchema = z.object({
  token: tokenText,
  generation: z.number().int().min(1),
  createdAt: z.string(),
  previousToken: tokenText.optional(),
  previousValidUntil: z.number().optional(),
});

type SecretFile = z.infer<typeof secretFileSchema>;

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A short, one-way fingerprint of a token: lets the ledger notice a changed token without storing it. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class WebhookSecret {
  private constructor(
    private readonly storage: Storage,
    private state: SecretFile,
    private readonly now: () => number,
  ) {}

  /**
   * Reads the stored token, or creates and stores one. A file that cannot be read as a token is
   * replaced by a new token with a higher generation, so every registration is sent again.
   */
  static async load(storage: Storage, options: { now?: () => number } = {}): Promise<WebhookSecret> {
    const now = options.now ?? Date.now;
    let stored: SecretFile | undefined;
    let damaged = false;
    try {
      stored = await storage.read(WEBHOOK_SECRET_FILE, secretFileSchema);
    } catch {
      damaged = true;
    }
    if (stored) return new WebhookSecret(storage, stored, now);
    const fresh: SecretFile = {
      token: newToken(),
      // A damaged file may have had any generation: start far enough away that no ledger entry matches.
      generation: damaged ? Math.floor(now() / 1000) : 1,
      createdAt: new Date(now()).toISOString(),
    };
    await storage.write(WEBHOOK_SECRET_FILE, fresh);
    return new WebhookSecret(storage, fresh, now);
  }

  /** The token registered with the service; the callback receiver compares the header with it. */
  get token(): string {
    return this.state.token;
  }

  get generation(): number {
    return this.state.generation;
  }

  /** One-way fingerprint of the current token (for the ledger and status, never the token). */
  get fingerprint(): string {
    return tokenFingerprint(this.state.token);
  }

  /**
   * Constant-time check of a callback's header value: the current token, or after a rotation the
   * previous one until every registration was re-sent (plus a grace period).
   */
  accepts(headerValue: string | undefined): boolean {
    if (headerValue === undefined) return false;
    if (sameText(headerValue, this.state.token)) return true;
    const { previousToken, previousValidUntil } = this.state;
    if (previousToken === undefined) return false;
    if (previousValidUntil !== undefined && this.now() > previousValidUntil) return false;
    return sameText(headerValue, previousToken);
  }

  /** True while a previous token is still accepted (registrations with it may remain at the service). */
  get hasPrevious(): boolean {
    return this.state.previousToken !== undefined && this.state.previousValidUntil === undefined;
  }

  /**
   * Called by the registrar once every registration carries the current token: the previous token is
   * accepted for a short grace period more, then never again.
   */
  async retirePrevious(): Promise<void> {
    if (!this.hasPrevious) return;
    const next: SecretFile = { ...this.state, previousValidUntil: this.now() + PREVIOUS_TOKEN_GRACE_MS };
    await this.storage.write(WEBHOOK_SECRET_FILE, next);
    this.state = next;
  }

  /**
   * Replaces the token (new generation). The new token is stored before it is used; the caller then
   * runs a reconcile, which re-sends every registration because the generation changed.
   */
  async rotate(): Promise<void> {
    const next: SecretFile = {
      token: newToken(),
      generation: this.state.generation + 1,
      createdAt: new Date(this.now()).toISOString(),
      // Accepted with no end until the registrar has re-sent every registration (retirePrevious).
      previousToken: this.state.token,
    };
    await this.storage.write(WEBHOOK_SECRET_FILE, next);
    this.state = next;
  }
}
