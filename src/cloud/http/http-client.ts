// The one way the plugin talks to `{baseUrl}`: API key and access token headers, JSON, a timeout,
// every response's rotated token handed to the token manager at once, and failures mapped to the
// typed errors of ./errors.ts so callers decide by class.
import { ACCESS_TOKEN_HEADER } from '../../settings.js';
import type { Logger } from '../../util/logger.js';
import type { ApiClient, HttpMethod, RequestOptions } from './api.js';
import {
  AuthorizationLostError,
  BRIDGE_STATUS,
  BridgeError,
  CloudError,
  RateLimitedError,
  RequestRejectedError,
  TransientError,
  UnexpectedResponseError,
} from './errors.js';
import { describeNetworkError } from './network-error.js';
import { nodeFetch } from './node-fetch.js';
import { parseRetryAfter } from './retry-after.js';
import { retryRefused, type RetryToken } from './refused-retry.js';
import { sendServiceRequest, serviceUrl, type ServiceEndpoint } from './service-request.js';

/** What the client needs from the token manager (tokens/token-manager.ts). */
export interface AccessTokenSource {
  getAccessToken(): Promise<string>;
  /** After a 401 with `rejectedToken`: a token worth one retry, or a typed error. */
  handleUnauthorized(rejectedToken: string): Promise<RetryToken>;
  /** A response's rotated `x-svc-access-token`. */
  /** `sentWith`: the token the request carried (an answer from before an unlink is ignored). */
  noteResponseToken(token: string, sentWith?: string): void;
}

export interface CloudHttpClientOptions {
  baseUrl: string;
  apiKey: string;
  tokens: AccessTokenSource;
  timeoutMs?: number;
  fetch?: typeof fetch;
  log?: Pick<Logger, 'debug'>;
  now?: () => number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

/** The part of a URL that is safe to log: method and path, never the query (it may carry ids only, but stay strict). */
function label(method: string, path: string): string {
  return `${method} ${path.split('?')[0] ?? path}`;
}

export class CloudHttpClient implements ApiClient {
  private readonly endpoint: ServiceEndpoint;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: CloudHttpClientOptions) {
    this.fetchFn = options.fetch ?? nodeFetch;
    this.endpoint = { baseUrl: options.baseUrl.replace(/\/+$/, ''), apiKey: options.apiKey, fetch: this.fetchFn };
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  async request<T = unknown>(method: HttpMethod, path: string, options: RequestOptions<T> = {}): Promise<T> {
    const url = serviceUrl(this.endpoint.baseUrl, path, options.query);
    const token = await this.options.tokens.getAccessToken();
    // After a 401: one refresh (shared with every other caller that got one), then one retry.
    const { answer: response } = await retryRefused(token, await this.send(method, url, path, token, options), {
      refused: (answer) => answer.status === 401,
      renew: (refused) => this.options.tokens.handleUnauthorized(refused),
      send: (retry) => this.send(method, url, path, retry, options),
      discard: (answer) => answer.body?.cancel().catch(() => undefined) ?? Promise.resolve(),
    });
    if (response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      throw new AuthorizationLostError(`The Lock Access service refused the renewed access token (${label(method, path)}).`, 401);
    }
    return this.read(response, method, path, options);
  }

  /** GET of an absolute URL without credentials (e.g. a doorbell's still image). */
  async fetchBinary(url: string, timeoutMs = this.timeoutMs): Promise<{ contentType: string | undefined; body: Buffer }> {
    let response: Response;
    try {
      response = await this.fetchFn(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new TransientError(`Could not download a file from the service (${describeNetworkError(error)}).`, undefined, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw this.statusError(response, 'GET', new URL(url).pathname);
    }
    try {
      return { contentType: response.headers.get('content-type') ?? undefined, body: Buffer.from(await response.arrayBuffer()) };
    } catch (error) {
      throw new TransientError(`The download broke off (${describeNetworkError(error)}).`, undefined, { cause: error });
    }
  }

  private async send(method: HttpMethod, url: string, path: string, token: string, options: RequestOptions<unknown>): Promise<Response> {
    const started = this.now();
    let response: Response;
    try {
      response = await sendServiceRequest(this.endpoint, { method, url, token, body: options.body, timeoutMs: options.timeoutMs ?? this.timeoutMs });
    } catch (error) {
      this.options.log?.debug(`Lock Access: ${label(method, path)} failed: ${describeNetworkError(error)}`);
      throw new TransientError(`Could not reach the Lock Access service for ${label(method, path)} (${describeNetworkError(error)}).`, undefined, { cause: error });
    }
    this.options.log?.debug(`Lock Access: ${label(method, path)} -> ${response.status} (${this.now() - started} ms)`);
    if (response.status !== 401) {
      const rotated = response.headers.get(ACCESS_TOKEN_HEADER);
      if (rotated !== null && rotated !== '') this.options.tokens.noteResponseToken(rotated, token);
    }
    return response;
  }

  private async read<T>(response: Response, method: HttpMethod, path: string, options: RequestOptions<T>): Promise<T> {
    if (!response.ok) {
      const detail = await this.errorDetail(response);
      throw this.statusError(response, method, path, detail);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new TransientError(`The answer to ${label(method, path)} broke off (${describeNetworkError(error)}).`, response.status, { cause: error });
    }
    let data: unknown = undefined;
    if (text.trim() !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        if (options.schema) throw new UnexpectedResponseError(`The answer to ${label(method, path)} was not JSON.`, response.status);
        data = text;
      }
    }
    if (!options.schema) return data as T;
    const parsed = options.schema.safeParse(data);
    if (!parsed.success) {
      const where = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      throw new UnexpectedResponseError(`The answer to ${label(method, path)} had an unexpected shape (${where}).`, response.status);
    }
    return parsed.data;
  }

  /** A short reason from an error body (`message` or `error`), only when it is plain words. */
  private async errorDetail(response: Response): Promise<string | undefined> {
    try {
      const body: unknown = JSON.parse(await response.text());
      if (typeof body !== 'object' || body === null) return undefined;
      const record = body as Record<string, unknown>;
      const value = typeof record.message === 'string' ? record.message : typeof record.error === 'string' ? record.error : undefined;
      // Long or token-like text could echo something secret: only short sentences are kept.
      if (value === undefined || value.length > 120 || /[A-Za-z0-9_-]{24,}/.test(value)) return undefined;
      return value;
    } catch {
      return undefined;
    }
  }

  private statusError(response: Response, method: string, path: string, detail?: string): CloudError {
    const status = response.status;
    const what = `${label(method, path)} answered ${status}${detail ? ` (${detail})` : ''}`;
    if (status === 401) return new AuthorizationLostError(`The Lock Access service refused the access token: ${what}.`, 401);
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.now());
      return new RateLimitedError(`The Lock Access service asked to slow down: ${what}.`, retryAfterMs);
    }
    const problem = BRIDGE_STATUS[status];
    if (problem !== undefined) return new BridgeError(problem, status);
    if (status >= 500) return new TransientError(`The Lock Access service had a problem: ${what}.`, status);
    return new RequestRejectedError(`The Lock Access service refused the request: ${what}.`, status);
  }
}
