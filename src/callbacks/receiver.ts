// The embedded Fastify listener: the plugin's front door for service callbacks.
// It only adapts HTTP to accept() (accept.ts), which decides every answer: this file reads the raw
// body within the size limit, serves health, answers with the verdict, records what the verdict
// says, and hands accepted events to the sink after the reply has been written, so the service gets
// its answer in milliseconds and a failing sink cannot change or break it.

import Fastify from 'fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';

import { webhookPathPrefix, webhookPrefix } from '../config.js';
import type { DeviceEvent } from '../model/events.js';
import { CALLBACK_TOKEN_HEADER, MAX_CALLBACK_BYTES, SIGNATURE_HEADER } from '../settings.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { limitBodyTime } from './body-deadline.js';
import { accept, duplicate } from './accept.js';
import type { AcceptEnv, CallbackContext, Verdict } from './accept.js';
import { type AccountGate, LISTENER_LIMITS, type ReceiverOptions } from './listener-options.js';
import { printable } from './log-safe.js';
import { PathNet } from './path-net.js';
import type { CallbackRoute } from './callback-kinds.js';
import { ReceiverTally } from './receiver-tally.js';
import { sendVerdict } from './verdict-reply.js';
import { readTls, watchTls } from './tls-files.js';
import type { ReceiverStats } from './receiver-tally.js';

export type { CallbackContext } from './accept.js';
export type { ReceiverStats } from './receiver-tally.js';

export interface Receiver {
  readonly port: number;
  readonly url: string;
  readonly stats: ReceiverStats;
  close(): Promise<void>;
}

export type ReceiverApp = FastifyInstance & { readonly receiverStats: ReceiverStats };

/**
 * Paths longer than any device id: a longer one is unroutable (404). Lock ids are 32 characters;
 * every path parameter is bounded by this.
 */
const MAX_PATH_ID_CHARS = 128;

const EMPTY = Buffer.alloc(0);

function assertApiKey(apiKey: string): void {
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    throw new Error('The webhook listener cannot start: apiKey is empty. Copy the API key issued by Lock Access into the plugin settings.');
  }
  if (apiKey.trim() !== apiKey) {
    throw new Error('The webhook listener cannot start: apiKey has spaces or line breaks at its start or end. Paste it again without them.');
  }
}

/** Builds the Fastify app without listening (tests use app.inject, benchmarks reuse it). */
export function buildReceiverApp(options: ReceiverOptions): ReceiverApp {
  assertApiKey(options.apiKey);
  const now = options.now ?? Date.now;
  const prefix = webhookPrefix(options.webhook);
  const tally = new ReceiverTally(options.log, now);
  const app = createServer(options, tally);
  /** A listener failure must never turn into a failed answer or an unhandled error. */
  const notifyRejected = (): void => {
    try {
      options.onRejected?.(tally.stats);
    } catch (error) {
      options.log.debug(`Webhook: the rejection listener failed: ${errorText(error)}`);
    }
  };
  answerFailures(app, tally, options.log, notifyRejected);
  app.get(`${prefix}/health`, (_request, reply) => reply.code(200).send({ ok: true, instance: options.instanceNonce }));
  const handle = callbackHandler(options, tally, now, notifyRejected);
  // Webhook routes live in their own scope: any content type is read as raw bytes for the
  // signature check, with the callback size limit; the rest of the app keeps Fastify's defaults.
  void app.register((scope, _opts, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES }, (_request, body, parsed) => {
      parsed(null, body);
    });
    // An extra account's routes answer only while it is enabled: otherwise 404 before the body is read.
    const knownAccount = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      if (options.accounts?.((request.params as { account?: string }).account ?? '') === undefined) {
        reply.callNotFound();
        return;
      }
      done();
    };
    for (const method of ['POST', 'PUT'] as const) {
      scope.route({ method, url: `${prefix}/lock/:id`, handler: handle('lock') });
      scope.route({ method, url: `${prefix}/doorbell/:id`, handler: handle('doorbell') });
      scope.route({ method, url: `${prefix}/user`, handler: handle('user') });
      scope.route({ method, url: `${prefix}/a/:account/lock/:id`, onRequest: knownAccount, handler: handle('lock') });
      scope.route({ method, url: `${prefix}/a/:account/doorbell/:id`, onRequest: knownAccount, handler: handle('doorbell') });
      scope.route({ method, url: `${prefix}/a/:account/user`, onRequest: knownAccount, handler: handle('user') });
    }
    done();
  });
  return Object.assign(app, { receiverStats: tally.stats });
}

/**
 * No route declares a JSON schema (payloads are checked with zod), so Fastify's default schema
 * compilers (Ajv and fast-json-stringify, a hundred modules) are never loaded into Homebridge. A
 * schema added to a route later fails loudly at start-up instead of going unchecked.
 */
const NO_SCHEMAS = (() => () => {
  throw new Error('the webhook listener compiles no JSON schemas');
}) as unknown;
const SCHEMA_CONTROLLER = { compilersFactory: { buildValidator: NO_SCHEMAS, buildSerializer: NO_SCHEMAS } } as FastifyServerOptions['schemaController'];

/** The Fastify server with the listener's limits: sizes, timeouts and connections. */
function createServer(options: ReceiverOptions, tally: ReceiverTally): FastifyInstance {
  const tls = readTls(options.webhook);
  const limits = options.limits ?? LISTENER_LIMITS;
  // Node checks the header and request timeouts every `connectionsCheckingInterval` (30 s by
  // default); checked every second, slow headers are cut off within a second or two.
  const serverOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkEveryMs,
  };
  const app = Fastify({
    logger: false,
    // The listener is reached through a proxy or tunnel; nothing here depends on the client
    // address, so forwarded headers are never trusted.
    trustProxy: false,
    bodyLimit: MAX_CALLBACK_BYTES,
    routerOptions: { maxParamLength: MAX_PATH_ID_CHARS },
    // A backstop for a socket that sends nothing at all, longer than the keep-alive timeout.
    connectionTimeout: limits.keepAliveTimeoutMs + 5_000,
    requestTimeout: serverOptions.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    return503OnClosing: true,
    schemaController: SCHEMA_CONTROLLER,
    // A path too long or malformed for the router is unroutable like any unknown path: 404, never
    // 414 or another framework default.
    frameworkErrors: (_error, request, reply: FastifyReply) => {
      tally.unknownPath(request.url);
      void reply.code(404).send({ error: 'not found' });
    },
    ...(tls === undefined ? { http: serverOptions } : { https: { ...tls, ...serverOptions } }),
  }) as unknown as FastifyInstance;
  app.server.headersTimeout = limits.headersTimeoutMs;
  // Node's requestTimeout (the sum) stays as a backstop; the body's own time is held here.
  limitBodyTime(app.server, limits.bodyTimeoutMs);
  app.server.maxConnections = limits.maxConnections;
  return app;
}

/** One answer for every failure and unknown path: a status and a short word, never a stack or a secret. */
function answerFailures(app: FastifyInstance, tally: ReceiverTally, log: Logger, notifyRejected: () => void): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      tally.countRejection('too-large');
      return reply.code(400).send({ error: 'body too large' });
    }
    if (status >= 400 && status < 500) {
      tally.countRejection('bad-request');
      return reply.code(status === 404 || status === 401 ? status : 400).send({ error: 'bad request' });
    }
    // Anything else is a failure of ours: 503 so the sender retries.
    tally.countRejection('internal-error');
    log.error(`Webhook listener: ${request.method} ${printable(request.url)} failed: ${error.message}`);
    return reply.code(503).send({ error: 'temporarily unavailable' });
  });
  app.setNotFoundHandler((request, reply) => {
    // Written down for the settings page's test event: a callback at another path means a proxy
    // or tunnel that strips or changes the path.
    tally.unknownPath(request.url);
    notifyRejected();
    return reply.code(404).send({ error: 'not found' });
  });
  // Outside the webhook scope no body is ever read, so an unknown path is a 404 whatever it carries.
  app.removeAllContentTypeParsers();
}

/** The handler of one webhook route: accept, remember, answer, then hand the events on. */
function callbackHandler(options: ReceiverOptions, tally: ReceiverTally, now: () => number, notifyRejected: () => void) {
  const env: AcceptEnv = {
    apiKey: options.apiKey,
    toleranceSeconds: options.webhook.toleranceSeconds,
    storedToken: options.callbackToken,
    sinkReady: options.isReady ?? (() => true),
    dedupe: options.dedupe,
  };
  // An extra account's callbacks are verified with its own key and header secret, never another's.
  const accountEnvs = new WeakMap<AccountGate, AcceptEnv>();
  const envOf = (account: string | undefined): AcceptEnv | undefined => {
    if (account === undefined) return env;
    const gate = options.accounts?.(account);
    if (gate === undefined) return undefined;
    let known = accountEnvs.get(gate);
    if (known === undefined) {
      known = { ...env, apiKey: gate.apiKey, storedToken: gate.callbackToken };
      accountEnvs.set(gate, known);
    }
    return known;
  };
  // Only with extra accounts: one event delivered on two accounts' paths counts once.
  const net = options.accounts === undefined ? undefined : new PathNet();
  /** Claims an accepted one-shot event's key: the store's check-and-set has the last word, the verdict says what then. */
  const record = (verdict: Verdict): Verdict => {
    // State reports carry no claim: they are never remembered.
    const claim = verdict.kind === 'accepted' ? verdict.record.claim : undefined;
    return claim === undefined || options.dedupe.checkAndSet(claim.key) ? verdict : claim.taken;
  };
  /** A listener failure must never turn into a failed answer. */
  const notifyVerified = (key: string, account: string | undefined): void => {
    try {
      options.onVerified?.(key, tally.stats, account);
    } catch (error) {
      options.log.debug(`Webhook: the verified-callback listener failed: ${errorText(error)}`);
    }
  };
  const deliver = (route: CallbackRoute, events: DeviceEvent[], context: CallbackContext) => {
    const failed = (error: unknown) => {
      tally.sinkFailed(route, error);
    };
    try {
      // The sink is typed as returning void, but an async one must not leave a rejection unhandled.
      const sink: (events: DeviceEvent[], context: CallbackContext) => unknown = options.onEvents;
      const result = sink(events, context);
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  };
  // Accepted callbacks wait here for the next turn of the event loop, in arrival order: one turn
  // delivers every callback answered in this one.
  let waiting: { route: CallbackRoute; events: DeviceEvent[]; context: CallbackContext }[] = [];
  const deliverWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    for (const callback of batch) deliver(callback.route, callback.events, callback.context);
  };
  // A plain (not async) handler that sends and returns nothing, so Fastify never sends twice.
  return (route: CallbackRoute) => (request: FastifyRequest, reply: FastifyReply): void => {
    const receivedAt = now();
    const params = request.params as { id?: string; account?: string };
    const pathId = route === 'user' ? undefined : params.id;
    const accountEnv = envOf(params.account);
    // `/lock/` matches the route with an empty id; it names no device, so it is not a route of ours.
    // An account disabled or unlinked since the request arrived is no route of ours either.
    if (pathId === '' || accountEnv === undefined) {
      reply.callNotFound();
      return;
    }
    const body = Buffer.isBuffer(request.body) ? request.body : EMPTY;
    const checked = accept({ route, pathId, body, signature: request.headers[SIGNATURE_HEADER], token: request.headers[CALLBACK_TOKEN_HEADER], receivedAt }, accountEnv);
    const elsewhere = net !== undefined && pathId !== undefined && checked.kind !== 'rejected' && net.arrived(`${route}/${pathId}`, body, params.account ?? '', receivedAt);
    const verdict = checked.kind === 'accepted' && elsewhere ? duplicate(checked.record.lastCallback) : record(checked);
    tally.note(route, verdict, pathId);
    sendVerdict(reply, verdict);
    if (verdict.kind === 'rejected') {
      notifyRejected();
      return;
    }
    notifyVerified(verdict.record.lastCallback.key, params.account);
    if (verdict.kind !== 'accepted') return;
    // The reply has been handed to the socket; HomeKit updates come after it.
    if (waiting.length === 0) setImmediate(deliverWaiting);
    if (params.account !== undefined) verdict.context.account = params.account;
    waiting.push({ route, events: verdict.events, context: verdict.context });
  };
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
          : errorText(error, 'unknown error');
    throw new Error(`The webhook listener cannot start on ${listenHost}:${listenPort}: ${why}.`, { cause: error });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : listenPort;
  const scheme = options.webhook.tlsCertFile !== undefined && options.webhook.tlsKeyFile !== undefined && options.webhook.tlsCertFile !== '' && options.webhook.tlsKeyFile !== '' ? 'https' : 'http';
  const url = `${scheme}://${formatHost(listenHost)}:${port}${webhookPathPrefix(options.webhook)}`;
  const stopWatching = scheme === 'https' ? watchTls(app.server, options.webhook, options.log, options.tlsWatchIntervalMs) : () => undefined;
  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    stats: app.receiverStats,
    close() {
      closing ??= (async () => {
        stopWatching();
        await app.close();
        await options.dedupe.flush();
      })();
      return closing;
    },
  };
}
