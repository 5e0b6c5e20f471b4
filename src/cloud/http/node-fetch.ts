// fetch for the plugin's own calls, on node:http and node:https. Node's built-in fetch brings
// undici's WebAssembly HTTP parser into the Homebridge process: about 12 MiB of memory for a few
// calls a day (measured by `npm run bench`). node:http parses in C at no extra cost. This covers
// what the plugin uses: method, headers, a string or bytes body, AbortSignal, redirects (follow or
// error), and it answers with a standard Response. Network failures reject with
// TypeError('fetch failed', { cause }) as fetch does, so callers read the same error codes.
import http from 'node:http';
import https from 'node:https';

/**
 * Connections are kept for reuse (a registration burst makes a hundred calls); idle ones do not
 * hold the process open. Nothing is retried here: callers decide, as with fetch.
 */
const AGENTS: Record<string, http.Agent> = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};
const MAX_REDIRECTS = 5;
/** No answer the plugin expects is near this; a bigger one is refused rather than held in memory. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

/** Why a signal aborted, as fetch reports it (a TimeoutError for AbortSignal.timeout). */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

function toUrl(input: Parameters<typeof fetch>[0]): URL {
  if (input instanceof URL) return input;
  if (typeof input === 'string') return new URL(input);
  throw new TypeError('nodeFetch takes a URL or a string');
}

function requestHeaders(init: RequestInit): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function requestBody(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('nodeFetch takes a string, URLSearchParams or bytes as the body');
}

function responseHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

/** The request a redirect leads to: 303, and 301/302 after a POST, become a GET without a body (as fetch does). */
function redirected(init: RequestInit, status: number): RequestInit {
  const method = (init.method ?? 'GET').toUpperCase();
  if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
    const headers = new Headers(init.headers);
    headers.delete('content-type');
    headers.delete('content-length');
    return { ...init, method: 'GET', body: null, headers };
  }
  return init;
}

/** `fresh`: on a new connection, never a kept one (see grantFetch). */
function send(url: URL, init: RequestInit, redirects: number, fresh: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (transport === undefined) {
      reject(fetchFailed(coded(`unsupported protocol ${url.protocol}`, 'ERR_INVALID_URL')));
      return;
    }
    const body = requestBody(init.body);
    const headers = requestHeaders(init);
    if (body !== undefined) headers['content-length'] = String(body.length);
    let settled = false;
    const finish = (action: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      action();
    };
    const method = (init.method ?? 'GET').toUpperCase();
    const agent = fresh ? false : AGENTS[url.protocol];
    const req = transport.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(coded(`the answer is over ${String(MAX_RESPONSE_BYTES)} bytes`, 'ERR_RESPONSE_TOO_LARGE'));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error) => {
        finish(() => {
          reject(signal?.aborted === true ? abortReason(signal) : fetchFailed(error));
        });
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (REDIRECT_STATUS.has(status) && location !== undefined && init.redirect !== 'manual') {
          finish(() => {
            if (init.redirect === 'error') reject(fetchFailed(coded(`redirected to another address (${String(status)})`, 'ERR_REDIRECT')));
            else if (redirects >= MAX_REDIRECTS) reject(fetchFailed(coded('too many redirects', 'ERR_TOO_MANY_REDIRECTS')));
            else resolve(send(new URL(location, url), redirected(init, status), redirects + 1, fresh));
          });
          return;
        }
        finish(() => {
          try {
            const payload = NULL_BODY_STATUS.has(status) ? null : Buffer.concat(chunks);
            resolve(new Response(payload, { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res.headers) }));
          } catch (error) {
            reject(fetchFailed(error));
          }
        });
      });
    });
    const onAbort = () => {
      if (signal) req.destroy(abortReason(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // Never sent again here: the server may have acted on it (a refresh grant must not repeat).
      finish(() => {
        reject(signal?.aborted === true ? abortReason(signal) : fetchFailed(error));
      });
    });
    req.end(body);
  });
}

/**
 * A fetch for the plugin's calls to the service, without undici (see the top of this file), on kept
 * connections: a registration burst of a hundred POSTs opens a few sockets, not a hundred (each a
 * TLS handshake, and a socket's worth of memory while the registrations run). Those calls may be
 * sent again: registration and the API's other calls are idempotent, and their callers retry.
 */
export const nodeFetch: typeof fetch = (input, init) => send(toUrl(input), init ?? {}, 0, false);

/**
 * The same for the token grant, each call on a new connection: on a kept one the server may have
 * just closed, the grant could fail without having been read, and a grant is never sent twice (a
 * refresh token may be spent by it).
 */
export const grantFetch: typeof fetch = (input, init) => send(toUrl(input), init ?? {}, 0, true);
