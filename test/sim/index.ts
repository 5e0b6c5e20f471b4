// The Lock Access service simulator: token endpoint, API, webhook registrations and signed
// callback delivery, in one local HTTP server. `startSimulator()` is what tests and the CLI use.
// It starts with one account (`main`, `sim.account`); `accounts` or `addAccount` add more, each a
// user of its own with its own key and client or the main account's.
import type { AddressInfo } from 'node:net';
import { MAIN_ACCOUNT, type AccountInput } from './accounts.js';
import { realClock, type SimClock } from './clock.js';
import { registerApiRoutes } from './api-routes.js';
import { registerControlRoutes } from './control-routes.js';
import { SimCore, type DeviceList, type ListAnswer, type SendTarget, type SimAccount, type SimStats } from './core.js';
import type { DeliveryRecord, DeliveryResult } from './delivery.js';
import type { BridgeState, DoorbellInput, LockInput, SimDoorbell, SimLock } from './devices.js';
import { fireEvent, EVENT_NAMES, type FireOptions } from './events.js';
import type { SimFaults } from './faults.js';
import { createHttpApp } from './http-app.js';
import { registerMediaRoutes } from './media-routes.js';
import { registerOAuthRoutes } from './oauth-routes.js';
import type { RegistrationKind } from './registrations.js';
import type { SignatureOptions } from './signature.js';
import { DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS, type RefreshTokenState } from './tokens.js';

export { MAIN_ACCOUNT, type AccountInput } from './accounts.js';
export { ManualClock, realClock, type SimClock } from './clock.js';
export { RETRY_DELAYS_MS, type DeliveryRecord, type DeliveryResult } from './delivery.js';
export { EVENT_NAMES, type FireOptions } from './events.js';
export { signPayload } from './signature.js';
export { DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS } from './tokens.js';

export interface SimulatorOptions {
  host?: string;
  port?: number;
  latencyMs?: number;
  /** expires_in of granted access tokens; four months by default. */
  accessTokenLifetimeSeconds?: number;
  /** How far each API reply's fresh token extends validity; min(1 day, lifetime / 100) by default. */
  accessTokenExtensionSeconds?: number;
  clock?: SimClock;
  signature?: SignatureOptions;
  locks?: LockInput[];
  doorbells?: DoorbellInput[];
  /** The main account's fixed credentials or user id (random otherwise). */
  account?: Partial<{ apiKey: string; clientId: string; clientSecret: string; userId: string; name: string }>;
  /** More accounts, made before the devices (whose `accounts` may name them). */
  accounts?: AccountInput[];
  /** Recordings made at test time: dvrID -> a folder with index.m3u8 and its segments (others get the bundled clip). */
  recordings?: Record<string, string>;
}

export interface SimRegistration {
  kind: RegistrationKind;
  scope: string;
  url: string;
  method: string;
  clientID: string;
  header: string;
  token: string;
  notificationTypes: string[];
  updatedAt: number;
  /** The user who made it. */
  owner: string;
  /** The id of that user's account. */
  account: string;
}

export interface SimRegistrationChange {
  op: 'register' | 'delete';
  kind: RegistrationKind;
  scope: string;
  account: string;
  url?: string;
}

export interface Simulator {
  baseUrl: string;
  authUrl: string;
  url: string;
  /** The main account. */
  account: SimAccount;
  /** Every account, the main one first. */
  accounts(): SimAccount[];
  addAccount(input: AccountInput): SimAccount;
  /** The account with this id; throws for an unknown one. */
  accountOf(id: string): SimAccount;
  /** The account gets the device too (a lock shared with it). */
  share(kind: 'lock' | 'doorbell', deviceId: string, accountId: string): void;
  /** The account stops holding the device, without any callback; a device nobody holds is gone. */
  release(kind: 'lock' | 'doorbell', deviceId: string, accountId: string): void;
  clock: SimClock;
  /** A new refresh token of the account (the main one by default). */
  issueRefreshToken(accountId?: string): string;
  revokeRefreshToken(token: string): void;
  refreshTokenState(token: string): RefreshTokenState;
  revokeAccessTokens(): void;
  /** The account's user takes the integration's access away: every refresh and access token of that account so far is revoked (the next grant gets invalid_grant); other accounts keep theirs. */
  revokeAccount(accountId: string): void;
  /** A valid access token for the account (the main one by default), as a grant would give, without spending a refresh token. */
  mintAccessToken(lifetimeSeconds?: number, accountId?: string): string;
  addLock(lock: LockInput): void;
  removeLock(id: string): void;
  addDoorbell(doorbell: DoorbellInput): void;
  removeDoorbell(id: string): void;
  setBridge(lockId: string, state: BridgeState): void;
  /** How a device list answers from now on (an account without doorbells: `[]`, `null`, 204 or 404). */
  answerList(list: DeviceList, answer: ListAnswer): void;
  lock(id: string): SimLock | undefined;
  doorbell(id: string): SimDoorbell | undefined;
  readonly stats: SimStats;
  registrations(): SimRegistration[];
  /** Every registration made or deleted (by the API; not loseRegistrations), oldest first, with the id of the account that made the call. */
  registrationChanges(): SimRegistrationChange[];
  /** The service loses every webhook registration, or one account's (callbacks then go nowhere until they are sent again); returns how many it had. */
  loseRegistrations(accountId?: string): number;
  faults: SimFaults;
  /** Requests that reached a still image's path (query included), e.g. `/media/flaky/D1/a.jpg?fail=2`. */
  imageRequests(path: string): number;
  send(payload: object, target: SendTarget): Promise<DeliveryResult[]>;
  deliveries: DeliveryRecord[];
  fire(name: string, options?: FireOptions): Promise<DeliveryResult[]>;
  eventNames: readonly string[];
  /** Resolves when no delivery attempt is in flight (retries waiting on the clock do not count). */
  idle(): Promise<void>;
  /** Deliveries waiting on the clock for their next retry. */
  pendingRetries(): number;
  state(): unknown;
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? realClock;
  const lifetime = options.accessTokenLifetimeSeconds ?? DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS;
  const core = new SimCore({
    clock,
    latencyMs: options.latencyMs ?? 0,
    accessTokenLifetimeSeconds: lifetime,
    accessTokenExtensionSeconds: options.accessTokenExtensionSeconds ?? Math.max(1, Math.min(86_400, Math.floor(lifetime / 100))),
    signature: options.signature ?? {},
    account: options.account ?? {},
  });
  for (const account of options.accounts ?? []) core.addAccount(account);
  for (const lock of options.locks ?? []) core.addLock(lock);
  for (const doorbell of options.doorbells ?? []) core.addDoorbell(doorbell);

  const fire = (name: string, fireOptions: FireOptions = {}): Promise<DeliveryResult[]> => fireEvent(core, name, fireOptions);
  const registrations = (): SimRegistration[] => core.store.all().map((r) => ({
    kind: r.kind, scope: r.scope, url: r.url, method: r.method, clientID: r.clientID, header: r.header, token: r.token,
    notificationTypes: [...r.notificationTypes], updatedAt: r.updatedAt, owner: r.owner, account: core.accountOfUser(r.owner)?.id ?? '',
  }));
  // The state view hides secrets (webhook tokens); the CLI prints the account separately.
  const state = (): unknown => ({
    baseUrl: core.baseUrl, authUrl: core.authUrl,
    accounts: core.accounts.all().map(({ id, name, userId, clientId }) => ({ id, name, userId, clientId })),
    locks: [...core.locks.values()].map((l) => ({ ...l })),
    doorbells: [...core.doorbells.values()].map((d) => ({ ...d })),
    registrations: registrations().map(({ token: _token, ...rest }) => rest),
    stats: core.stats,
    faults: core.faults.pending(),
    pendingRetries: core.engine.pendingRetries(),
    deliveries: core.engine.records.slice(-50).map(({ requestHeaders: _h, body: _b, ...rest }) => rest),
    events: EVENT_NAMES,
  });

  const app = createHttpApp(core);
  registerOAuthRoutes(app, core);
  registerApiRoutes(app, core);
  const media = registerMediaRoutes(app, options.recordings);
  const control = registerControlRoutes(app, { core, fire, state });
  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  core.url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    baseUrl: core.baseUrl,
    authUrl: core.authUrl,
    url: core.url,
    account: core.account,
    accounts: () => core.accounts.all(),
    addAccount: (input) => core.addAccount(input),
    accountOf: (id) => core.accounts.require(id),
    share: (kind, deviceId, accountId) => { core.share(kind, deviceId, accountId); },
    release: (kind, deviceId, accountId) => { core.release(kind, deviceId, accountId); },
    clock,
    issueRefreshToken: (accountId = MAIN_ACCOUNT) => {
      const account = core.accounts.require(accountId);
      return core.tokens.issueRefreshToken(account.clientId, account.userId);
    },
    revokeRefreshToken: (token) => { core.tokens.revokeRefreshToken(token); },
    refreshTokenState: (token) => core.tokens.refreshTokenState(token),
    revokeAccessTokens: () => { core.tokens.revokeAccessTokens(); },
    revokeAccount: (accountId) => { core.tokens.revokeUser(core.accounts.require(accountId).userId); },
    mintAccessToken: (seconds, accountId = MAIN_ACCOUNT) => {
      const account = core.accounts.require(accountId);
      return core.tokens.mintAccessToken(account.clientId, account.userId, seconds);
    },
    addLock: (lock) => { core.addLock(lock); },
    removeLock: (id) => { core.removeLock(id); },
    addDoorbell: (doorbell) => { core.addDoorbell(doorbell); },
    removeDoorbell: (id) => { core.removeDoorbell(id); },
    setBridge: (lockId, bridge) => { core.setBridge(lockId, bridge); },
    answerList: (list, answer) => { core.listAnswers[list] = answer; },
    lock: (id) => core.locks.get(id),
    doorbell: (id) => core.doorbells.get(id),
    get stats() { return core.stats; },
    registrations,
    registrationChanges: () => core.store.changes.map(({ owner, ...change }) => ({ ...change, account: core.accountOfUser(owner)?.id ?? '' })),
    loseRegistrations: (accountId) => core.store.clear(accountId === undefined ? undefined : core.accounts.require(accountId).userId),
    faults: core.faults,
    imageRequests: (path) => media.count(path),
    send: (payload, target) => core.send(payload, target),
    deliveries: core.engine.records,
    fire,
    eventNames: EVENT_NAMES,
    idle: () => core.engine.idle(),
    pendingRetries: () => core.engine.pendingRetries(),
    state,
    close: () => {
      closing ??= (async () => {
        control.closeScenarios();
        await core.engine.close();
        await app.close();
      })();
      return closing;
    },
  };
}
