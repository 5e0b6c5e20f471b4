// The Fastify app: body parsers, latency and fault injection, request counting, error mapping.
// Routes live in oauth-routes.ts, api-routes.ts, media-routes.ts and control-routes.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { SimCore } from './core.js';
import { routeNames } from './faults.js';

function isServiceRoute(url: string): boolean {
  return url.startsWith('/api/') || url === '/api' || url.startsWith('/oauth/');
}

/** Destroys the socket without a reply (a dropped connection). */
export function dropConnection(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  request.raw.socket.destroy();
  return reply;
}

export function createHttpApp(core: SimCore): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 1024 * 1024 });

  app.removeContentTypeParser('application/json');
  // Tolerates an empty JSON body (some clients send the content type on DELETE).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text) as unknown);
    } catch {
      done(Object.assign(new Error('body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    done(null, Object.fromEntries(new URLSearchParams(text)));
  });

  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    if (!isServiceRoute(path)) return;
    const pattern = request.routeOptions.url;
    const key = `${request.method} ${pattern ?? path}`;
    core.counters.byRoute[key] = (core.counters.byRoute[key] ?? 0) + 1;
    if (path.startsWith('/api')) core.counters.apiCalls += 1;
    if (core.faults.latencyMs > 0) await sleep(core.faults.latencyMs);
    const fault = core.faults.take(routeNames(request.method, pattern, path));
    if (!fault) return;
    if (fault.kind === 'drop') return dropConnection(request, reply);
    if (fault.kind === 'rateLimit') {
      return reply.code(429).header('retry-after', String(fault.retryAfterSeconds)).send({ message: 'Too Many Requests' });
    }
    return reply.code(fault.status).send({ message: 'Service Unavailable (simulated fault)' });
  });

  app.setErrorHandler((error: { statusCode?: number; message?: string }, _request, reply) => {
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
    void reply.code(status).send({ message: status >= 500 ? 'Internal Server Error' : (error.message ?? 'Bad Request') });
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ message: 'Not Found' });
  });
  return app;
}
