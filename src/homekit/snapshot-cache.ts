// The doorbell's camera picture: the latest motion still, fetched once and cached; concurrent
// requests share one fetch; a transient failure is tried again a few times with back-off, fitted
// inside the motion window; the bundled placeholder when there is no still (yet) or the fetch failed.
// The download itself is handed in (cloud/image-fetch.ts), so this layer does no networking.
import { readFile } from 'node:fs/promises';

import { errorText } from '../util/error-text.js';
import { fileAbove } from '../util/file-above.js';
import { listedDelay } from '../util/backoff.js';

/** How long after a motion event its still is fetched (see setSource). */
export const PREFETCH_DELAY_MS = 200;

/**
 * Back-off between attempts at one still: about 13 s in all, inside the default 30 s of motion.
 * A shorter motion window scales it down (see setSource).
 */
export const STILL_RETRY_DELAYS_MS: readonly number[] = [1_000, 3_000, 9_000];

/**
 * Downloads a still. A rejection whose `transient` is false says trying again cannot help (a bad
 * address, a 404); any other failure is tried again.
 */
export type FetchImage = (url: string) => Promise<Buffer>;

let placeholderImage: Promise<Buffer> | undefined;

/** The bundled neutral picture (src/assets, copied to dist/assets by the build). */
export function placeholder(): Promise<Buffer> {
  placeholderImage ??= Promise.resolve().then(() => readFile(fileAbove(import.meta.url, 'assets/placeholder.jpg')));
  return placeholderImage;
}

interface Still {
  url: string;
  /** Tried when `url` cannot be fetched (the callback's plain Url behind its SecureURL). */
  fallbackUrl?: string;
  image?: Buffer;
  failed?: boolean;
  /** Failed attempts so far; a retry is waiting while `retrying`. */
  attempts?: number;
  /** When its motion ends (epoch ms): no retry starts later. Unset for a still restored at start-up. */
  retryDeadline?: number;
  /** The back-off multiplied by this, so the whole schedule fits the motion window. */
  retryScale?: number;
  retrying?: boolean;
  inflight?: Promise<Buffer>;
}

export class SnapshotCache {
  private still: Still | undefined;

  constructor(
    private readonly fetch: FetchImage,
    private readonly onFetchError: (message: string) => void,
    private readonly fallback: () => Promise<Buffer> = placeholder,
    private readonly retryDelaysMs: readonly number[] = STILL_RETRY_DELAYS_MS,
  ) {}

  /** The URL of the current still, if any. */
  get url(): string | undefined {
    return this.still?.url;
  }

  /**
   * A new motion still: replaces the old one and is fetched soon, so a ring right after has its
   * picture ready. Not at once: the motion notification goes out first, and the download (a
   * connection, then the picture) does not compete with it. A snapshot asked for meanwhile starts
   * the fetch itself.
   *
   * `motionWindowMs` (how long the doorbell's motion lasts): a retry after motion has ended would
   * come too late to matter, so the back-off is scaled down to fit the window, and a retry that
   * would still start after the window (slow attempts) is not made.
   */
  setSource(url: string, fallbackUrl?: string, motionWindowMs?: number): void {
    if (this.still?.url === url) return;
    const still: Still = fallbackUrl === undefined ? { url } : { url, fallbackUrl };
    if (motionWindowMs !== undefined) {
      const total = this.retryDelaysMs.reduce((sum, delay) => sum + delay, 0);
      // After the prefetch, and ending a moment before motion does (attempts take time too).
      const room = Math.max(0, motionWindowMs - 2 * PREFETCH_DELAY_MS);
      still.retryDeadline = Date.now() + motionWindowMs;
      still.retryScale = total > room ? room / total : 1;
    }
    this.still = still;
    const timer = setTimeout(() => {
      if (this.still === still) void this.get();
    }, PREFETCH_DELAY_MS);
    timer.unref();
  }

  /** A still remembered from the last run: fetched only when a picture is asked for. */
  restore(url: string, fallbackUrl?: string): void {
    if (this.still?.url === url) return;
    this.still = fallbackUrl === undefined ? { url } : { url, fallbackUrl };
  }

  /** The picture to show now. Never rejects. */
  async get(): Promise<Buffer> {
    const still = this.still;
    if (!still || still.failed === true || still.retrying === true) return this.fallback();
    if (still.image) return still.image;
    still.inflight ??= this.load(still);
    return still.inflight;
  }

  private async load(still: Still): Promise<Buffer> {
    try {
      const image = await this.fetch(still.url).catch((error: unknown) => {
        if (still.fallbackUrl === undefined) throw error;
        return this.fetch(still.fallbackUrl);
      });
      still.image = image;
      return image;
    } catch (error) {
      const attempts = (still.attempts ?? 0) + 1;
      still.attempts = attempts;
      const delay = this.retryDelay(still, attempts);
      if (delay !== undefined && !isPermanent(error)) {
        still.retrying = true;
        const timer = setTimeout(() => {
          still.retrying = false;
          if (this.still === still) void this.get();
        }, delay);
        timer.unref();
      } else {
        // Given up on this still until the next motion: said once.
        still.failed = true;
        this.onFetchError(errorText(error));
      }
      return await this.fallback();
    } finally {
      still.inflight = undefined;
    }
  }

  /** The wait before retry number `attempts`, or undefined when none is left inside the motion window. */
  private retryDelay(still: Still, attempts: number): number | undefined {
    const base = listedDelay(this.retryDelaysMs, attempts);
    if (base === undefined) return undefined;
    if (still.retryDeadline === undefined) return base;
    const delay = Math.round(base * (still.retryScale ?? 1));
    return Date.now() + delay < still.retryDeadline ? delay : undefined;
  }
}

/** A failure that says trying again cannot help (see FetchImage). */
function isPermanent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { transient?: unknown }).transient === false;
}
