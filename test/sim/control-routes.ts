// The simulator's own control surface under /_sim (no auth: it listens on 127.0.0.1 for demos and tests).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod/v3';
import type { SimCore } from './core.js';
import type { DeliveryResult } from './delivery.js';
import { EVENT_NAMES, FireError, type FireOptions } from './events.js';
import { DEFAULT_STEP_INTERVAL_MS, ScenarioRun, frontDoorDay, type ScenarioStep } from './scenario.js';
import { STATE_SCENARIOS } from './state-scenarios.js';

export interface ControlDeps {
  core: SimCore;
  fire: (name: string, options: FireOptions) => Promise<DeliveryResult[]>;
  state: () => unknown;
}

const faultsBody = z.object({
  latencyMs: z.number().int().min(0).optional(),
  signatureSkewMs: z.number().int().optional(),
  failNext: z.object({ n: z.number().int().min(1), status: z.number().int().min(500).max(599).optional(), route: z.string().optional() }).optional(),
  rateLimitNext: z.object({ n: z.number().int().min(1), retryAfterSeconds: z.number().int().min(0), route: z.string().optional() }).optional(),
  dropNext: z.object({ n: z.number().int().min(1), route: z.string().optional() }).optional(),
  rotateThenFail: z.enum(['drop', '500']).optional(),
  clear: z.boolean().optional(),
  /** false: callbacks stop reaching the plugin (a stopped tunnel); true: they flow again. */
  forwarding: z.boolean().optional(),
});

const accountBody = z.object({
  id: z.string(),
  name: z.string().optional(),
  shareKey: z.boolean().optional(),
  shareClient: z.boolean().optional(),
});

const shareBody = z.object({
  kind: z.enum(['lock', 'doorbell']),
  id: z.string(),
  account: z.string(),
  /** false: the account stops holding it. */
  hold: z.boolean().optional(),
});

const scenarioBody = z.object({
  intervalMs: z.number().int().min(0).optional(),
  mode: z.enum(['run', 'step']).optional(),
}).optional();

/** What a fire reply shows: no request headers (they carry the webhook token). */
function summary(results: DeliveryResult[]): unknown[] {
  return results.map(({ deliveryId, kind, scope, url, event, status, error, outcome, willRetry }) => ({ deliveryId, kind, scope, url, event, status, error, outcome, willRetry }));
}

export function registerControlRoutes(app: FastifyInstance, deps: ControlDeps): { closeScenarios(): void } {
  const { core } = deps;
  let running: ScenarioRun | undefined;
  // One step-by-step run per scenario name.
  const stepping = new Map<string, ScenarioRun>();
  const stepsOf = (name: string): ScenarioStep[] => {
    const lockId = core.locks.keys().next().value;
    if (name === 'front-door') {
      const doorbellId = core.doorbells.keys().next().value;
      if (lockId === undefined || doorbellId === undefined) throw new FireError('the scenario needs a lock and a doorbell');
      return frontDoorDay({ lockId, doorbellId, dvrId: core.newDvrId() });
    }
    const build = STATE_SCENARIOS[name];
    if (!build) throw new FireError(`unknown scenario "${name}"; known: front-door, ${Object.keys(STATE_SCENARIOS).join(', ')}`);
    if (lockId === undefined) throw new FireError('the scenario needs a lock');
    return build({ lockId }).steps;
  };
  const newRun = (name: string): ScenarioRun => new ScenarioRun(stepsOf(name), deps.fire, core.clock);

  app.post('/_sim/fire', async (request, reply) => {
    const body = (request.body ?? {}) as FireOptions & { event?: unknown };
    if (typeof body.event !== 'string') return reply.code(400).send({ message: `event is required; one of: ${EVENT_NAMES.join(', ')}` });
    try {
      const results = await deps.fire(body.event, body);
      return { event: body.event, deliveries: summary(results) };
    } catch (err) {
      if (err instanceof FireError) return reply.code(400).send({ message: err.message });
      throw err;
    }
  });

  app.get('/_sim/state', (_request, reply) => { void reply.send(deps.state()); });

  // Accounts with their credentials, as `npm run sim` prints them: this listens on 127.0.0.1 only.
  app.get('/_sim/accounts', (_request, reply) => { void reply.send({ accounts: core.accounts.all() }); });
  app.post('/_sim/accounts', async (request, reply) => {
    const parsed = accountBody.safeParse(request.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    try {
      return await reply.code(201).send(core.addAccount(parsed.data));
    } catch (err) {
      return reply.code(400).send({ message: err instanceof Error ? err.message : String(err) });
    }
  });
  app.post('/_sim/share', async (request, reply) => {
    const parsed = shareBody.safeParse(request.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    const { kind, id, account, hold } = parsed.data;
    try {
      if (hold === false) core.release(kind, id, account);
      else core.share(kind, id, account);
    } catch (err) {
      return reply.code(400).send({ message: err instanceof Error ? err.message : String(err) });
    }
    const device = kind === 'lock' ? core.locks.get(id) : core.doorbells.get(id);
    return { kind, id, accounts: device?.accounts ?? [] };
  });
  app.get('/_sim/events', (_request, reply) => { void reply.send({ events: EVENT_NAMES }); });

  app.post('/_sim/scenario/:name', async (request, reply) => {
    const { name } = request.params as { name: string };
    const parsed = scenarioBody.safeParse(request.body);
    if (!parsed.success) return reply.code(400).send({ message: parsed.error.issues.map((i) => i.message).join('; ') });
    const options = parsed.data ?? {};
    try {
      if (options.mode === 'step') {
        let run = stepping.get(name);
        if (!run || run.done) {
          run = newRun(name);
          stepping.set(name, run);
        }
        const report = await run.next();
        if (!report) return await reply.code(409).send({ message: 'scenario finished' });
        return { index: report.index, total: report.total, event: report.step.event, description: report.step.description, done: report.done, deliveries: summary(report.results) };
      }
      const run = newRun(name);
      running?.cancel();
      running = run;
      const intervalMs = options.intervalMs ?? DEFAULT_STEP_INTERVAL_MS;
      run.start(intervalMs).catch(() => undefined);
      return await reply.code(202).send({ intervalMs, steps: run.steps.map((s) => ({ event: s.event, description: s.description })) });
    } catch (err) {
      if (err instanceof FireError) return reply.code(400).send({ message: err.message });
      throw err;
    }
  });

  app.post('/_sim/faults', async (request, reply) => {
    const parsed = faultsBody.safeParse(request.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    const f = parsed.data;
    if (f.clear) core.faults.clear();
    if (f.latencyMs !== undefined) core.faults.latencyMs = f.latencyMs;
    if (f.signatureSkewMs !== undefined) core.faults.signatureSkewMs = f.signatureSkewMs;
    if (f.forwarding !== undefined) core.faults.forwarding = f.forwarding;
    if (f.failNext) core.faults.failNext(f.failNext.n, f.failNext.status, f.failNext.route);
    if (f.rateLimitNext) core.faults.rateLimitNext(f.rateLimitNext.n, f.rateLimitNext.retryAfterSeconds, f.rateLimitNext.route);
    if (f.dropNext) core.faults.dropNext(f.dropNext.n, f.dropNext.route);
    if (f.rotateThenFail) core.faults.rotateThenFail(f.rotateThenFail);
    return core.faults.pending();
  });

  return {
    closeScenarios(): void {
      running?.cancel();
      for (const run of stepping.values()) run.cancel();
    },
  };
}
