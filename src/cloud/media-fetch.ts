// How the video room fetches a recording's playlist, segments and keys: with the plugin's own
// node:https (Node's certificate store, NODE_EXTRA_CA_CERTS included; a certificate that does not
// verify fetches nothing), under the fetch rule of util/fetch-trust.ts for the address and every
// redirect (never from https down to http; plain http only beside a plain-http service address).
// Errors say what went wrong in words, never the address (it may be a signed link).
import { nodeFetch } from './http/node-fetch.js';
import { errorText } from '../util/error-text.js';
import { httpAllowedBy, refusedAddress } from '../util/fetch-trust.js';

const MAX_REDIRECTS = 3;
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
/** Node's words for a certificate that does not verify. */
const CERTIFICATE_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME|HOSTNAME/;

/** Why the request failed, in words: a certificate problem says so (the fix is NODE_EXTRA_CA_CERTS or the server's certificate). */
function networkWords(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'it was no longer wanted';
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : errorText(error);
  if (CERTIFICATE_CODE.test(code)) return `its server's certificate is not trusted (${code})`;
  return `its server could not be reached (${code})`;
}

/** The media access for a service address: plain http is accepted only when that address is plain http. */
export function mediaAccess(baseUrl: string): { fetch: (address: URL, signal: AbortSignal) => Promise<{ body: Buffer; url: URL }>; httpAllowed: boolean } {
  const httpAllowed = httpAllowedBy(baseUrl);
  return { fetch: (address, signal) => fetchMedia(address, httpAllowed, signal), httpAllowed };
}

async function fetchMedia(address: URL, httpAllowed: boolean, signal: AbortSignal): Promise<{ body: Buffer; url: URL }> {
  const first = refusedAddress(address, httpAllowed);
  if (first !== undefined) throw new Error(`the recording is not fetched: ${first}`);
  let url = address;
  for (let hops = 0; ; hops++) {
    const response = await nodeFetch(url, { signal, redirect: 'manual' }).catch((error: unknown) => {
      throw new Error(`the recording could not be fetched: ${networkWords(error, signal)}`);
    });
    if (REDIRECT_STATUS.has(response.status)) {
      const location = response.headers.get('location');
      let next: URL;
      try {
        next = new URL(location ?? '', url);
      } catch {
        throw new Error(`the recording's server answered ${response.status} without a valid location`);
      }
      const refused = refusedAddress(next, httpAllowed, url);
      if (refused !== undefined) throw new Error(`the recording's server redirected to an address that is not fetched: ${refused}`);
      if (hops >= MAX_REDIRECTS) throw new Error("the recording's server redirected too often");
      url = next;
      continue;
    }
    if (!response.ok) throw new Error(`the recording's server answered ${response.status}`);
    return { body: Buffer.from(await response.arrayBuffer()), url };
  }
}
