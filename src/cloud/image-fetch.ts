// The doorbell's still-image download, built on the cloud layer's node:http fetch and handed to the
// HomeKit view as a plain function (homekit/ does no networking of its own). The URL comes from
// a signed callback, but is still only trusted so far: http(s) under the plugin's fetch rule
// (util/fetch-trust.ts: Node's certificate check, plain http only beside a plain-http service
// address), one deadline for the whole download, a size cap, and redirects followed by hand and
// only on the same scheme, host and port: a redirect must not turn a still into a request into
// the home network.
import { nodeFetch } from './http/node-fetch.js';
import { errorText } from '../util/error-text.js';
import { refusedAddress } from '../util/fetch-trust.js';

/** Images bigger than this are refused: a still is tens of KiB, and HomeKit chokes on huge snapshots. */
export const MAX_SNAPSHOT_BYTES = 5 * 1024 * 1024;
export const SNAPSHOT_FETCH_TIMEOUT_MS = 5000;
const MAX_IMAGE_REDIRECTS = 3;
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

/** A failed download; `transient` says whether trying again may help (the snapshot cache tries a transient one again). */
export class ImageFetchError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'ImageFetchError';
  }
}

function httpUrl(text: string, httpAllowed: boolean, base?: URL): URL {
  let url: URL;
  try {
    url = base === undefined ? new URL(text) : new URL(text, base);
  } catch {
    throw new ImageFetchError('the image address is not a valid URL', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ImageFetchError(`the image address is not http(s) (${url.protocol})`, false);
  const refused = refusedAddress(url, httpAllowed);
  if (refused !== undefined) throw new ImageFetchError(`the image address is refused: ${refused}`, false);
  return url;
}

/** A network failure in words without the address (it may carry credentials). */
function networkFailure(error: unknown, signal: AbortSignal, timeoutMs: number): ImageFetchError {
  if (signal.aborted) return new ImageFetchError(`the image server did not answer within ${timeoutMs / 1000} s`, true);
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : errorText(error);
  return new ImageFetchError(`the image server could not be reached (${code})`, true);
}

/**
 * A still fetcher with one deadline for the whole download (redirects included); it rejects with an
 * ImageFetchError that says whether trying again may help. `httpAllowed`: the service address is
 * plain http (a local simulator), so plain http stills are fetched too.
 */
export function imageFetcher(httpAllowed: boolean, timeoutMs = SNAPSHOT_FETCH_TIMEOUT_MS): (address: string) => Promise<Buffer> {
  return (address) => fetchStill(address, httpAllowed, timeoutMs);
}

async function fetchStill(address: string, httpAllowed: boolean, timeoutMs: number): Promise<Buffer> {
  const signal = AbortSignal.timeout(timeoutMs);
  let url = httpUrl(address, httpAllowed);
  for (let hops = 0; ; hops++) {
    const response = await nodeFetch(url, { signal, redirect: 'manual' }).catch((error: unknown) => {
      throw networkFailure(error, signal, timeoutMs);
    });
    if (REDIRECT_STATUS.has(response.status)) {
      const location = response.headers.get('location');
      if (location === null) throw new ImageFetchError(`the image server answered ${response.status} without a location`, false);
      const next = httpUrl(location, httpAllowed, url);
      if (next.protocol !== url.protocol) throw new ImageFetchError(`the image server redirected from ${url.protocol} to ${next.protocol}`, false);
      if (next.host !== url.host) throw new ImageFetchError('the image server redirected to another host', false);
      if (hops >= MAX_IMAGE_REDIRECTS) throw new ImageFetchError('the image server redirected too often', false);
      url = next;
      continue;
    }
    if (!response.ok) {
      const transient = response.status >= 500 || response.status === 408 || response.status === 429;
      throw new ImageFetchError(`the image server answered ${response.status}`, transient);
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > MAX_SNAPSHOT_BYTES) throw new ImageFetchError('the image is too large', false);
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length === 0) throw new ImageFetchError('the image is empty', true);
    if (body.length > MAX_SNAPSHOT_BYTES) throw new ImageFetchError('the image is too large', false);
    return body;
  }
}
