// Does the public URL reach this very listener? GET {publicUrl}/health must answer 200 with JSON whose
// `instance` is the nonce this process's receiver was started with. Each way it can go wrong gets
// one plain sentence saying what to fix. Never throws.
import { callbackUrls } from '../config.js';
import { messageCatalog, type UiMessage } from '../util/ui-message.js';
import { nodeFetch } from './http/node-fetch.js';

export type SelfCheckProblem = 'invalid-url' | 'unreachable' | 'timeout' | 'tls' | 'redirect' | 'http-status' | 'not-json' | 'other-instance';

export type SelfCheckResult =
  | { ok: true; url: string; checkedAt: string; message: UiMessage }
  | { ok: false; url: string; checkedAt: string; problem: SelfCheckProblem; status?: number; message: UiMessage };

export interface SelfCheckOptions {
  publicUrl: string;
  /** The nonce the callback receiver answers in `instance` on its health route. */
  instanceNonce: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  now?: () => number;
}

export const SELF_CHECK_TIMEOUT_MS = 10_000;

const FIX_FORWARDING = "Check that webhook.publicUrl is right and that your reverse proxy or tunnel is running and forwards to this plugin's listener.";

export const SELF_CHECK_MESSAGES = {
  'selfCheck.ok': '{url} reaches this plugin\'s listener.',
  'selfCheck.invalidUrl': 'webhook.publicUrl is not a valid http(s) address: enter the full internet address of your reverse proxy or tunnel, such as https://home.example.net/lock-access.',
  'selfCheck.unreachable': `Nothing answered at {url} ({errorCode}). ${FIX_FORWARDING}`,
  'selfCheck.noAnswer': `Nothing answered at {url}. ${FIX_FORWARDING}`,
  'selfCheck.timeout': `Nothing answered at {url} within {seconds} seconds. ${FIX_FORWARDING}`,
  'selfCheck.tls': 'The secure connection to {url} failed ({errorCode}). The service only calls an https address with a valid, publicly trusted certificate for its host name.',
  'selfCheck.redirect': '{url} answered with a redirect (HTTP {status}). The service does not follow redirects: set webhook.publicUrl to the address that answers directly.',
  'selfCheck.redirectTo': '{url} answered with a redirect (HTTP {status} to {location}). The service does not follow redirects: set webhook.publicUrl to the address that answers directly.',
  'selfCheck.httpStatus': '{url} answered HTTP {status} instead of 200. Something answers at this address, but not this plugin\'s listener: check the path and the forwarding target of your reverse proxy or tunnel.',
  'selfCheck.notJson': '{url} answered with a page that does not come from this plugin (a proxy or another web server answers there). Point your reverse proxy or tunnel at this plugin\'s listener.',
  'selfCheck.otherInstance': '{url} is answered by another listener, not this Homebridge\'s (another process, or a proxy that still points at an old target). Point your reverse proxy or tunnel at this Homebridge and stop any other copy of the plugin.',
} as const;

const say = messageCatalog(SELF_CHECK_MESSAGES);

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The sentences of each outcome (also quoted in the README). */
export const selfCheckMessages = {
  ok: (url: string) => say('selfCheck.ok', { url }),
  invalidUrl: () => say('selfCheck.invalidUrl'),
  unreachable: (url: string, errorCode: string | undefined) => (errorCode === undefined ? say('selfCheck.noAnswer', { url }) : say('selfCheck.unreachable', { url, errorCode })),
  timeout: (url: string, seconds: number) => say('selfCheck.timeout', { url, seconds }),
  tls: (url: string, errorCode: string) => say('selfCheck.tls', { url, errorCode }),
  redirect: (url: string, status: number, location: string | undefined) => (location ? say('selfCheck.redirectTo', { url, status, location }) : say('selfCheck.redirect', { url, status })),
  httpStatus: (url: string, status: number) => say('selfCheck.httpStatus', { url, status }),
  notJson: (url: string) => say('selfCheck.notJson', { url }),
  otherInstance: (url: string) => say('selfCheck.otherInstance', { url }),
};

/** The health URL without user name or password (they must not appear in logs or the UI). */
function displayUrl(publicUrl: string): string | undefined {
  try {
    const url = new URL(callbackUrls(publicUrl).health());
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

/** Error codes along the `cause` chain (fetch wraps the socket error). */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, name } = current as { code?: unknown; name?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (name === 'TimeoutError' || name === 'AbortError') codes.push(name);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

function isTlsCode(code: string): boolean {
  return TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.includes('CERT');
}

export async function checkPublicUrl(options: SelfCheckOptions): Promise<SelfCheckResult> {
  const now = options.now ?? Date.now;
  const checkedAt = new Date(now()).toISOString();
  const url = displayUrl(options.publicUrl);
  if (url === undefined) return { ok: false, url: options.publicUrl, checkedAt, problem: 'invalid-url', message: selfCheckMessages.invalidUrl() };
  const fail = (problem: SelfCheckProblem, message: UiMessage, status?: number): SelfCheckResult => ({ ok: false, url, checkedAt, problem, message, ...(status === undefined ? {} : { status }) });
  const timeoutMs = options.timeoutMs ?? SELF_CHECK_TIMEOUT_MS;
  const doFetch = options.fetch ?? nodeFetch;
  try {
    const response = await doFetch(callbackUrls(options.publicUrl).health(), {
      method: 'GET',
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text().catch(() => '');
    if (response.status >= 300 && response.status < 400) {
      return fail('redirect', selfCheckMessages.redirect(url, response.status, response.headers.get('location') ?? undefined), response.status);
    }
    if (response.status !== 200) return fail('http-status', selfCheckMessages.httpStatus(url, response.status), response.status);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail('not-json', selfCheckMessages.notJson(url), 200);
    }
    const instance = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).instance : undefined;
    if (instance !== options.instanceNonce) return fail('other-instance', selfCheckMessages.otherInstance(url), 200);
    return { ok: true, url, checkedAt, message: selfCheckMessages.ok(url) };
  } catch (error) {
    const codes = errorCodes(error);
    if (codes.some((code) => code === 'TimeoutError' || code === 'AbortError' || TIMEOUT_CODES.has(code))) {
      return fail('timeout', selfCheckMessages.timeout(url, Math.round(timeoutMs / 100) / 10));
    }
    const tls = codes.find(isTlsCode);
    if (tls) return fail('tls', selfCheckMessages.tls(url, tls));
    return fail('unreachable', selfCheckMessages.unreachable(url, codes[0]));
  }
}
