// The embedded Fastify listener: the plugin's front door for service callbacks (design section 6).
// Order of checks: size limit -> signature on the raw bytes -> custom header -> JSON -> schema ->
// route and path id -> dedupe -> reply 200 -> sink. The sink runs after the reply has been written,
// so the service gets its answer in milliseconds and a failing sink cannot change or break it.
import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';

import Fastify from 'fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { WebhookConfig } from '../config.js';
import { listenerPrefix } from '../config.js';
import type { DeviceEvent } from '../devices/events.js';
import { CALLBACK_TOKEN_HEADER, MAX_CALLBACK_BYTES, SIGNATURE_HEADER } from '../settings.js';
import { DedupeNotReadyError, dedupeKey } from './dedupe.js';
import type { DedupeStore } from './dedupe.js';
import { bodyDeviceId, checkRoute, normalise } from './normalise.js';
import { classifyPayload, readEnvelope } from './payloads.js';
import type { CallbackRoute, Envelope } from './payloads.js';
import { parseJsonSafely } from './safe-json.js';
import { SIGNATURE_FAILURE_STATUS, verifySignature } from './signature.js';

export interface CallbackContext {
  route: CallbackRoute;
  pathId?: string;
  receivedAt: number;
  /** The signature's `t` in epoch milliseconds. */
  signedAt: number;
  dedupeKey: string;
  eventType?: string;
  event?: string;
}

export interface ReceiverLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

export interface ReceiverOptions {
  webhook: WebhookConfig;
  /** Refused at start-up if empty or whitespace-padded. */
  apiKey: string;
  /** The current stored webhook token (may change at run time). */
  callbackToken: () => string | undefined;
  instanceNonce: string;
  dedupe: DedupeStore;
  log: ReceiverLog;
  onEvents: (events: DeviceEvent[], context: CallbackContext) => void;
  now?: () => number;
  /** False while the event sink cannot take events yet: callbacks get 503 and are retried. */
  isReady?: () => boolean;
}

export interface ReceiverStats {
  accepted: number;
  duplicates: number;
  ignoredUnknown: number;
  /** Rejections by reason (signature failures, 'bad-token', 'schema-violation', ...). */
  rejected: Record<string, number>;
  /** Epoch ms of the last accepted callback per 'lock:ID', 'doorbell:ID' or 'user'. */
  lastCallbackAt: Record<string, number>;
  /** Times the event sink threw after a callback was acknowledged. */
  sinkErrors: number;
}

export interface Receiver {
  readonly port: number;
  readonly url: string;
  readonly stats: ReceiverStats;
  close(): Promise<void>;
}

export type ReceiverApp = FastifyInstance & { readonly receiverStats: ReceiverStats };

/** Socket and request limits: genuine callbacks are a few KiB and arrive in one go. */
const CONNECTION_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const MAX_LAST_CALLBACK_KEYS = 1_000;
const MAX_UNKNOWN_KINDS_LOGGED = 100;

const EMPTY = Buffer.alloc(0);

/** Header values as one string; duplicates (an array) are joined the way Node joins unknown headers. */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  // Compare equal-length buffers only; a length mismatch still costs one compare of b with itself.
  return a.length === b.length ? timingSafeEqual(a, b) : !timingSafeEqual(b, b);
}

/** Letters, digits and a few marks only, short: values from a request are safe to log. */
function printable(value: string | undefined): string {
  return (value ?? '-').replace(/[^\w.:/-]/g, '?').slice(0, 60);
}

function assertApiKey(apiKey: string): void {
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    throw new Error('The webhook listener cannot start: apiKey is empty. Copy the API key issued by Lock Access into the plugin settings.');
  }
  if (apiKey.trim() !== apiKey) {
    throw new Error('The webhook listener cannot start: apiKey has spaces or line breaks at its start or end. Paste it again without them.');
  }
}

function readTls(webhook: WebhookConfig): { cert: Buffer; key: Buffer } | undefined {
  if (webhook.tlsCertFile === undefined || webhook.tlsCertFile === '' || webhook.tlsKeyFile === undefined || webhook.tlsKeyFile === '') return undefined;
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new Error(`The webhook listener cannot start: the TLS ${what} file ${file} cannot be read (${code}). Check webhook.${what === 'certificate' ? 'tlsCertFile' : 'tlsKeyFile'}.`);
    }
  };
  return { cert: read(webhook.tlsCertFile, 'certificate'), key: read(webhook.tlsKeyFile, 'key') };
}

class Rejection extends Error {
  constructor(readonly status: 400 | 401 | 503, readonly reason: string, readonly detail?: string) {
    super(reason);
  }
}

/** Builds the Fastify app without listening (tests use app.inject, benchmarks reuse it). */
export function buildReceiverApp(options: ReceiverOptions): ReceiverApp {
  assertApiKey(options.apiKey);
  const now = options.now ?? Date.now;
  const { log } = options;
  const prefix = listenerPrefix(options.webhook.publicUrl);
  const tls = readTls(options.webhook);
  const stats: ReceiverStats = { accepted: 0, duplicates: 0, ignoredUnknown: 0, rejected: {}, lastCallbackAt: {}, sinkErrors: 0 };
  const unknownKindsLogged = new Set<string>();

  const app = Fastify({
    logger: false,
    // The listener is reached through a proxy or tunnel; nothing here depends on the client
    // address, so forwarded headers are never trusted.
    trustProxy: false,
    bodyLimit: MAX_CALLBACK_BYTES,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
    ...(tls === undefined ? {} : { https: tls }),
  }) as unknown as FastifyInstance;

  const countRejection = (reason: string) => {
    stats.rejected[reason] = (stats.rejected[reason] ?? 0) + 1;
  };

  // Counted rather than Object.keys(...).length on every callback.
  let lastCallbackKeys = 0;
  const markLastCallback = (key: string, at: number) => {
    if (!Object.hasOwn(stats.lastCallbackAt, key)) {
      if (lastCallbackKeys >= MAX_LAST_CALLBACK_KEYS) return;
      lastCallbackKeys += 1;
    }
    stats.lastCallbackAt[key] = at;
  };

  // One error handler for everything: a status and a short word, never a stack or a secret.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      countRejection('too-large');
      return reply.code(400).send({ error: 'body too large' });
    }
    if (status >= 400 && status < 500) {
      countRejection('bad-request');
      return reply.code(status === 404 || status === 401 ? status : 400).send({ error: 'bad request' });
    }
    // Anything else is a failure of ours: 503 so the sender retries.
    countRejection('internal-error');
    log.error(`Webhook listener: ${request.method} ${printable(request.url)} failed: ${error.message}`);
    return reply.code(503).send({ error: 'temporarily unavailable' });
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not found' }));
  // Outside the webhook scope no body is ever read, so an unknown path is a 404 whatever it carries.
  app.removeAllContentTypeParsers();

  app.get(`${prefix}/health`, (_request, reply) => reply.code(200).send({ ok: true, instance: options.instanceNonce }));

  // A plain (not async) handler that sends and returns nothing, so Fastify never sends twice.
  const handle = (route: CallbackRoute) => (request: FastifyRequest, reply: FastifyReply): void => {
    const receivedAt = now();
    const pathId = route === 'user' ? undefined : (request.params as { id?: string }).id;
    // `/lock/` matches the route with an empty id; it names no device, so it is not a route of ours.
    if (pathId === '') {
      reply.callNotFound();
      return;
    }
    const raw = Buffer.isBuffer(request.body) ? request.body : EMPTY;
    let accepted: Checked;
    try {
      accepted = check(route, pathId, raw, request, receivedAt);
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      countRejection(error.reason);
      log.debug(`Webhook: ${route} callback refused with ${error.status} (${error.reason}${error.detail === undefined ? '' : `: ${error.detail}`}).`);
      void reply.code(error.status).send({ error: error.reason });
      return;
    }
    if (accepted.kind === 'unknown') {
      stats.ignoredUnknown++;
      void reply.code(200).send({ ok: true, ignored: true });
      return;
    }
    if (accepted.kind === 'duplicate') {
      stats.duplicates++;
      log.debug(`Webhook: duplicate ${route} callback ignored.`);
      void reply.code(200).send({ ok: true, duplicate: true });
      return;
    }
    stats.accepted++;
    void reply.code(200).send({ ok: true });
    // The reply has been handed to the socket; HomeKit updates come after it.
    setImmediate(() => {
      const failed = (error: unknown) => {
        stats.sinkErrors++;
        log.error(`Webhook: handling an accepted ${route} callback failed: ${error instanceof Error ? error.message : 'unknown error'}`);
      };
      try {
        // The sink is typed as returning void, but an async one must not leave a rejection unhandled.
        const sink: (events: DeviceEvent[], context: CallbackContext) => unknown = options.onEvents;
        const result = sink(accepted.events, accepted.context);
        if (result instanceof Promise) result.catch(failed);
      } catch (error) {
        failed(error);
      }
    });
  };

  type Checked =
    | { kind: 'unknown' }
    | { kind: 'duplicate' }
    | { kind: 'new'; events: DeviceEvent[]; context: CallbackContext };

  const check = (route: CallbackRoute, pathId: string | undefined, raw: Buffer, request: FastifyRequest, receivedAt: number): Checked => {
    const signature = verifySignature({
      header: request.headers[SIGNATURE_HEADER],
      body: raw,
      apiKey: options.apiKey,
      toleranceSeconds: options.webhook.toleranceSeconds,
      now: receivedAt,
    });
    if (!signature.ok) throw new Rejection(SIGNATURE_FAILURE_STATUS[signature.reason], signature.reason);

    const tokenHeader = headerText(request.headers[CALLBACK_TOKEN_HEADER]);
    if (tokenHeader !== undefined) {
      const stored = options.callbackToken();
      if (stored === undefined || stored === '') throw new Rejection(503, 'token-not-ready');
      if (!sameSecret(tokenHeader, stored)) throw new Rejection(401, 'bad-token');
    }

    const json = parseJsonSafely(raw);
    if (!json.ok) throw new Rejection(400, json.reason);
    const envelope = readEnvelope(json.value);
    if (envelope === undefined) throw new Rejection(400, 'not-an-object');
    if (tokenHeader === undefined && !exemptFromToken(envelope)) throw new Rejection(401, 'missing-token');

    const classified = classifyPayload(json.value);
    if (!classified.ok) throw new Rejection(400, classified.reason, classified.detail);
    const callback = classified.payload;
    const lastKey = route === 'user' ? 'user' : `${route}:${pathId ?? ''}`;
    if (callback === undefined) {
      const kindName = `${printable(envelope.eventType)}/${printable(envelope.event)}`;
      if (!unknownKindsLogged.has(kindName) && unknownKindsLogged.size < MAX_UNKNOWN_KINDS_LOGGED) {
        unknownKindsLogged.add(kindName);
        log.info(`Webhook: a callback of a kind this plugin does not know (${kindName}) was accepted and ignored.`);
      }
      markLastCallback(lastKey, receivedAt);
      return { kind: 'unknown' };
    }
    const routeCheck = checkRoute(callback, route, pathId);
    if (!routeCheck.ok) throw new Rejection(400, routeCheck.reason, routeCheck.detail);

    if (options.isReady !== undefined && !options.isReady()) throw new Rejection(503, 'not-ready');
    const eventId = (json.value as { EventID?: unknown }).EventID;
    const key = dedupeKey(route, typeof eventId === 'string' ? eventId : undefined, raw);
    let fresh: boolean;
    try {
      fresh = options.dedupe.checkAndSet(key);
    } catch (error) {
      if (error instanceof DedupeNotReadyError) throw new Rejection(503, 'dedupe-not-ready');
      throw error;
    }
    markLastCallback(lastKey, receivedAt);
    if (!fresh) return { kind: 'duplicate' };

    const context: CallbackContext = { route, receivedAt, signedAt: signature.timestampMs, dedupeKey: key };
    const deviceId = bodyDeviceId(callback);
    if (pathId !== undefined) context.pathId = pathId;
    else if (deviceId !== undefined && route !== 'user') context.pathId = deviceId;
    if (envelope.eventType !== undefined) context.eventType = envelope.eventType;
    if (envelope.event !== undefined) context.event = envelope.event;
    return { kind: 'new', events: normalise(callback, route), context };
  };

  // Webhook routes live in their own scope: any content type is read as raw bytes for the
  // signature check, with the callback size limit; the rest of the app keeps Fastify's defaults.
  void app.register((scope, _opts, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES }, (_request, body, parsed) => {
      parsed(null, body);
    });
    for (const method of ['POST', 'PUT'] as const) {
      scope.route({ method, url: `${prefix}/lock/:id`, handler: handle('lock') });
      scope.route({ method, url: `${prefix}/doorbell/:id`, handler: handle('doorbell') });
      scope.route({ method, url: `${prefix}/user`, handler: handle('user') });
    }
    done();
  });

  return Object.assign(app, { receiverStats: stats });
}

/** Kinds the service sends without the custom header (PIN management and remote operate, design section 6). */
export function exemptFromToken(envelope: Envelope): boolean {
  return envelope.eventType === 'status' || envelope.eventType === 'operation' || envelope.event === 'keypad_pin_managed';
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Builds the app and listens on webhook.listenHost:listenPort. Throws a readable Error when it cannot. */
export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const app = buildReceiverApp(options);
  const { listenHost, listenPort } = options.webhook;
  try {
    await app.listen({ host: listenHost, port: listenPort });
  } catch (error) {
    await app.close().catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE'
      ? `port ${listenPort} is already in use: choose another webhook.listenPort`
      : code === 'EACCES'
        ? `port ${listenPort} needs more privileges: choose a port above 1023`
        : code === 'EADDRNOTAVAIL'
          ? `address ${listenHost} is not on this machine: use 0.0.0.0 or one of its addresses`
          : (error instanceof Error ? error.message : 'unknown error');
    throw new Error(`The webhook listener cannot start on ${listenHost}:${listenPort}: ${why}.`, { cause: error });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : listenPort;
  const scheme = options.webhook.tlsCertFile !== undefined && options.webhook.tlsKeyFile !== undefined && options.webhook.tlsCertFile !== '' && options.webhook.tlsKeyFile !== '' ? 'https' : 'http';
  const url = `${scheme}://${formatHost(listenHost)}:${port}${listenerPrefix(options.webhook.publicUrl)}`;
  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    stats: app.receiverStats,
    close() {
      closing ??= (async () => {
        await app.close();
        await options.dedupe.flush();
      })();
      return closing;
    },
  };
}
