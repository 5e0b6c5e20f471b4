// {base_url}: authenticated API. Every call checks x-svc-api-key (403) and x-svc-access-token (401),
// and that both belong to one integration (403); the token's user is the account that calls, and
// sees only the devices it holds. Every successful reply carries a fresh x-svc-access-token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SimAccount } from './accounts.js';
import type { DeviceList, SimCore } from './core.js';
import type { AccessClaims } from './jwt.js';
import { lockOperation, lockStatus } from './payloads.js';
import { parseRegistration, type RegistrationKind } from './registrations.js';

const BRIDGE_REFUSALS = {
  offline: { status: 422, message: 'the lock\'s bridge is offline' },
  busy: { status: 423, message: 'the lock\'s bridge is busy' },
  timeout: { status: 408, message: 'the lock\'s bridge did not answer in time' },
  none: { status: 409, message: 'the lock has no bridge' },
} as const;

export function registerApiRoutes(app: FastifyInstance, core: SimCore): void {
  const claimsOf = new WeakMap<FastifyRequest, AccessClaims>();
  const accountOf = new WeakMap<FastifyRequest, SimAccount>();
  const owner = (request: FastifyRequest): string => claimsOf.get(request)?.sub ?? core.account.userId;
  const caller = (request: FastifyRequest): SimAccount => accountOf.get(request) ?? core.account;

  void app.register((api, _opts, done) => {
    api.addHook('onRequest', async (request, reply) => {
      const apiKey = request.headers['x-svc-api-key'];
      if (!core.accounts.isKnownKey(apiKey)) {
        return reply.code(403).send({ message: 'Forbidden: missing or unknown x-svc-api-key' });
      }
      const header = request.headers['x-svc-access-token'];
      const claims = core.tokens.verifyAccessToken(typeof header === 'string' ? header : undefined);
      if (!claims) return reply.code(401).send({ message: 'Unauthorized: the access token is not valid' });
      if (!core.accounts.sameIntegration(apiKey, claims.client_id)) {
        return reply.code(403).send({ message: 'Forbidden: the access token was issued to another integration\'s client' });
      }
      const account = core.accountOfUser(claims.sub);
      if (!account) return reply.code(401).send({ message: 'Unauthorized: the access token is not valid' });
      claimsOf.set(request, claims);
      accountOf.set(request, account);
      core.countCall(account.id, `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0] ?? ''}`);
    });
    api.addHook('onSend', async (request, reply, payload) => {
      const claims = claimsOf.get(request);
      if (claims && reply.statusCode >= 200 && reply.statusCode <= 299) {
        void reply.header('x-svc-access-token', core.tokens.extendAccessToken(claims));
      }
      return payload;
    });

    api.get('/users/me', (request, reply) => {
      const u = core.accounts.userOf(caller(request).id);
      void reply.send({ UserID: u.UserID, FirstName: u.FirstName, LastName: u.LastName, Email: u.Email, PhoneNo: u.PhoneNo });
    });

    /** A list as the account has it, or one of the answers seen for an account without such devices. */
    const answerList = (list: DeviceList, reply: import('fastify').FastifyReply, listed: () => unknown) => {
      const answer = core.listAnswers[list] ?? 'object';
      if (answer === 'not-found') return void reply.code(404).send({ message: `no ${list}` });
      if (answer === 'no-content') return void reply.code(204).send();
      if (answer === 'null') return void reply.type('application/json').send('null');
      return void reply.send(answer === 'empty-array' ? [] : listed());
    };

    api.get('/users/locks/mine', (request, reply) => {
      const mine = [...core.locks.values()].filter((l) => l.accounts.includes(caller(request).id));
      answerList('locks', reply, () => Object.fromEntries(mine.map((l) => [
        l.id, { LockName: l.name, UserType: 'superuser', macAddress: l.macAddress, HouseName: l.houseName },
      ])));
    });

    api.get('/users/doorbells/mine', (request, reply) => {
      const mine = [...core.doorbells.values()].filter((d) => d.accounts.includes(caller(request).id));
      answerList('doorbells', reply, () => Object.fromEntries(mine.map((d) => [
        d.id, { name: d.name, serialNumber: d.serialNumber, status: d.status },
      ])));
    });

    /** A device the calling account does not hold is unknown to it. */
    const scopeExists = (request: FastifyRequest, kind: RegistrationKind, scope: string): boolean =>
      kind === 'user' || core.holds(caller(request).id, kind, scope);

    const register = (kind: RegistrationKind, scopeOf: (request: FastifyRequest) => string) =>
      async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
        const scope = scopeOf(request);
        if (!scopeExists(request, kind, scope)) return reply.code(404).send({ message: `unknown ${kind} ${scope}` });
        const parsed = parseRegistration(kind, request.body);
        if (!parsed.ok) return reply.code(400).send({ message: parsed.message });
        core.store.upsert(kind, scope, owner(request), caller(request).apiKey, parsed.value, core.clock.now());
        return reply.send({ message: 'success' });
      };

    const unregister = (kind: RegistrationKind, scopeOf: (request: FastifyRequest) => string) =>
      async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
        const scope = scopeOf(request);
        const { clientID } = request.params as { clientID: string };
        const existing = core.store.get(kind, scope, owner(request));
        if (existing && existing.clientID !== clientID) return reply.code(404).send({ message: `no ${kind} webhook for client ${clientID}` });
        if (!existing && !scopeExists(request, kind, scope)) return reply.code(404).send({ message: `unknown ${kind} ${scope}` });
        // Idempotent: deleting what is not registered answers success too.
        core.store.remove(kind, scope, owner(request), clientID);
        return reply.send({ message: 'success' });
      };

    const param = (name: string) => (request: FastifyRequest): string => (request.params as Record<string, string>)[name] ?? '';

    api.post('/webhook/user', register('user', owner));
    api.delete('/webhook/user/:clientID', unregister('user', owner));
    api.post('/webhook/doorbell/:doorbellID', register('doorbell', param('doorbellID')));
    api.delete('/webhook/doorbell/:doorbellID/:clientID', unregister('doorbell', param('doorbellID')));
    api.post('/webhook/:lockID', register('lock', param('lockID')));
    api.delete('/webhook/:lockID/:clientID', unregister('lock', param('lockID')));

    api.put('/remoteoperate/:lockID/:operation', async (request, reply) => {
      const { lockID, operation } = request.params as { lockID: string; operation: string };
      if (operation !== 'lock' && operation !== 'unlock' && operation !== 'status') return reply.code(404).send({ message: 'Not Found' });
      const lock = core.locks.get(lockID);
      if (!lock || !core.holds(caller(request).id, 'lock', lockID)) return reply.code(404).send({ message: `unknown lock ${lockID}` });
      const user = core.accounts.userOf(caller(request).id);
      if (lock.bridge !== 'online') {
        const refusal = BRIDGE_REFUSALS[lock.bridge];
        return reply.code(refusal.status).send({ message: refusal.message });
      }
      const now = core.clock.now();
      if (operation === 'status') {
        await reply.send({ status: lock.lockState, doorState: lock.doorState });
        void core.send(lockStatus({ lockId: lock.id, state: lock.lockState === 'locked' ? 'lock' : 'unlock', user, at: now, sentAt: now }), { lockId: lock.id, noCustomHeader: true });
        return reply;
      }
      lock.lockState = operation === 'lock' ? 'locked' : 'unlocked';
      await reply.send({ status: lock.lockState, doorState: lock.doorState });
      // A remote-operate callback: no custom header.
      void core.send(lockOperation({ lockId: lock.id, event: operation, device: 'lock', user, at: now, sentAt: now }), { lockId: lock.id, noCustomHeader: true });
      return reply;
    });

    api.get('/doorbells/:doorbellID/videoevent', async (request, reply) => {
      const { doorbellID } = request.params as { doorbellID: string };
      const { dvrID } = request.query as { dvrID?: string };
      if (!core.holds(caller(request).id, 'doorbell', doorbellID)) return reply.code(404).send({ message: `unknown doorbell ${doorbellID}` });
      if (!dvrID || !/^[A-Za-z0-9_-]{1,128}$/.test(dvrID)) return reply.code(400).send({ message: 'dvrID is required' });
      // Lookup faults by name: lookup-404, lookup-401, lookup-500 answer that status; lookup-hang never answers.
      const fault = /^lookup-(404|401|500|hang)\b/.exec(dvrID)?.[1];
      if (fault === 'hang') return new Promise<never>(() => undefined);
      if (fault !== undefined) return reply.code(Number(fault)).send({ message: `simulated ${fault} for the video event lookup` });
      // A signed link, as the real service may give: the query string is a credential.
      return reply.send({ url: `${core.url}/hls/${encodeURIComponent(dvrID)}/index.m3u8?signature=SIM-SECRET-SIGNATURE` });
    });

    done();
  }, { prefix: '/api' });
}
