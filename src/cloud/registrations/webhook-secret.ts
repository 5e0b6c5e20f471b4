// The random token the service sends back in the x-lock-access-token header of every callback.
// Generated once (32 random bytes, base64url), kept in webhook-secret.json (mode 0600) with a
// generation number, so the registrar can tell when registrations carry an old token. Only a
// damaged file is replaced; one that cannot be read for a while is read again, never written over;
// a new token that cannot be saved yet is saved again later, and used only once it is.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { z } from 'zod/v3';

import type { Storage } from '../../storage.js';
import { errorText } from '../../util/error-text.js';
import { KeptFileRetry, readKept } from '../../util/kept-file.js';
import type { Logger } from '../../util/logger.js';

export const WEBHOOK_SECRET_FILE = 'webhook-secret.json';

const tokenText = z.string().regex(/^[A-Za-z0-9_-]{43}$/);

const secretFileSchema = z.object({
  token: tokenText,
  generation: z.number().int().min(1),
  createdAt: z.string(),
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

export interface WebhookSecretOptions {
  now?: () => number;
  /** Where a replaced or unreadable file is reported (never the token). */
  log?: Logger;
}

export class WebhookSecret {
  /** Undefined while the file cannot be read or a new token is not saved yet: callbacks are then answered 503 and nothing is registered. */
  private state: SecretFile | undefined;
  /** A new token made but not saved yet: the one saved on the next try, so a retry never makes another. */
  private unsaved: SecretFile | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly retries: KeptFileRetry;

  private constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
    private readonly options: WebhookSecretOptions,
  ) {
    this.retries = new KeptFileRetry();
  }

  /**
   * Reads the stored token, or creates and stores one when there is none. Only a file that was read
   * and holds no valid token is replaced (a new token with a higher generation, so every
   * registration is sent again); a file that could not be read (permissions, I/O, too many open
   * files) may hold the token the registrations carry, so it is kept and read again until it can
   * be: meanwhile there is no token (see `token`). A new token that cannot be saved never fails
   * the start: it is saved again later, and there is no token until it is.
   */
  static async load(storage: Storage, options: WebhookSecretOptions = {}): Promise<WebhookSecret> {
    const secret = new WebhookSecret(storage, options.now ?? Date.now, options);
    await secret.readOrCreate();
    return secret;
  }

  /** Called when the token becomes known late or is replaced: registrations must be sent again at once. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops reading an unreadable file again (and saving a new token). */
  stop(): void {
    this.retries.stop();
  }

  /** One read (and the write of a new token when there is none); true when the token is known afterwards. */
  private async readOrCreate(): Promise<boolean> {
    const outcome = await readKept(() => this.storage.read(WEBHOOK_SECRET_FILE, secretFileSchema));
    const log = this.options.log;
    if (outcome.kind === 'unreadable') {
      if (this.retries.failures === 0) {
        log?.warn(`The webhook token file ${WEBHOOK_SECRET_FILE} could not be read (${outcome.reason}); it is kept: callbacks are answered "try again later" (503, the service retries them) and webhooks are not registered until it can be read. It is tried again; if this lasts, check the permissions of the plugin's storage folder.`);
      }
      this.retries.failed(() => void this.retry());
      return false;
    }
    if (outcome.kind === 'found') {
      this.state = outcome.value;
      this.unsaved = undefined;
      if (this.retries.failures > 0) log?.info(`The webhook token file ${WEBHOOK_SECRET_FILE} can be read again; webhooks are registered now.`);
      this.retries.succeeded();
      return true;
    }
    const fresh: SecretFile = this.unsaved ?? {
      token: newToken(),
      // A damaged file may have had any generation: start far enough away that no ledger entry matches.
      generation: outcome.kind === 'damaged' ? Math.floor(this.now() / 1000) : 1,
      createdAt: new Date(this.now()).toISOString(),
    };
    try {
      await this.storage.write(WEBHOOK_SECRET_FILE, fresh);
    } catch (error) {
      // Never used before it is saved: a token the service holds must survive a restart.
      if (this.unsaved === undefined) {
        log?.warn(`A new webhook token could not be saved in ${WEBHOOK_SECRET_FILE} (${errorText(error)}); the plugin runs on (HomeKit from its cache, commands work), callbacks are answered "try again later" and webhooks are registered once it is saved. It is tried again; if this lasts, check the disk and the permissions of the plugin's storage folder.`);
      }
      this.unsaved = fresh;
      this.retries.failed(() => void this.retry());
      return false;
    }
    if (this.unsaved !== undefined) log?.info(`The new webhook token is saved now; webhooks are registered.`);
    this.unsaved = undefined;
    this.state = fresh;
    this.retries.succeeded();
    if (outcome.kind === 'damaged') {
      log?.warn(`The webhook token file ${WEBHOOK_SECRET_FILE} was damaged (${outcome.reason}), so a new webhook token was made: every webhook registration is sent again with it now. Callbacks the service sent with the old token before that are refused.`);
    }
    return true;
  }

  private async retry(): Promise<void> {
    if (!(await this.readOrCreate())) return;
    for (const listener of this.listeners) listener();
  }

  /**
   * The token registered with the service; the callback receiver compares the header with it.
   * Undefined while the file cannot be read (the receiver then answers 503, so nothing is lost).
   */
  get token(): string | undefined {
    return this.state?.token;
  }

  /** The token to register; throws while the file cannot be read (nothing is registered then). */
  get registeredToken(): string {
    return this.known.token;
  }

  /** The file's content; throws while it cannot be read or a new token is not saved yet. */
  private get known(): SecretFile {
    if (this.unsaved !== undefined) throw new Error(`the new webhook token is not saved yet in ${WEBHOOK_SECRET_FILE}`);
    if (this.state === undefined) throw new Error(`the webhook token file ${WEBHOOK_SECRET_FILE} cannot be read yet`);
    return this.state;
  }

  get generation(): number {
    return this.known.generation;
  }

  /** One-way fingerprint of the current token (for the ledger and status, never the token). */
  get fingerprint(): string {
    return tokenFingerprint(this.known.token);
  }

  /** Constant-time check of a callback's header value against the token. */
  accepts(headerValue: string | undefined): boolean {
    if (headerValue === undefined || this.state === undefined) return false;
    return sameText(headerValue, this.state.token);
  }
}
