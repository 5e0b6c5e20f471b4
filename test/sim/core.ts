// The simulator's state and behaviour without HTTP: accounts, tokens, devices, registrations,
// delivery and faults. The routes (oauth-routes.ts, api-routes.ts, ...) are thin edges over it.
import { randomUUID } from 'node:crypto';
import { MAIN_ACCOUNT, SimAccounts, type AccountInput, type SimAccount } from './accounts.js';
import type { SimClock } from './clock.js';
import { DeliveryEngine, type DeliveryResult } from './delivery.js';
import { makeDoorbell, makeLock, type BridgeState, type DoorbellInput, type LockInput, type SimDoorbell, type SimLock } from './devices.js';
import { Faults } from './faults.js';
import { notificationTypeOf, type CallbackUser, type NotificationType } from './payloads.js';
import { RegistrationStore, type RegistrationKind } from './registrations.js';
import type { SignatureOptions, SignatureOverrides } from './signature.js';
import { TokenAuthority } from './tokens.js';

export type { SimAccount } from './accounts.js';

export interface SendTarget {
  lockId?: string;
  doorbellId?: string;
  /** Also (or only) deliver to the account user's user hook. */
  user?: boolean;
  /** Which user's hook; the main account's user by default. */
  userId?: string;
  /**
   * Leave out the registration's custom header. Defaults to true for `status` and
   * `keypad_pin_managed` callbacks (remote operate and PIN management), false otherwise.
   */
  noCustomHeader?: boolean;
  /** Overrides which notification type selects this payload (derived from EventType otherwise). */
  notificationType?: NotificationType;
  signature?: SignatureOverrides;
}

export interface SimStats {
  /** Successful refresh grants. */
  grants: number;
  /** Successful authorization-code grants. */
  codeGrants: number;
  /** Requests under {base_url}. */
  apiCalls: number;
  /** Requests per "METHOD /route-pattern" (API and token endpoint). */
  byRoute: Record<string, number>;
  /** The same per account (id): its grants and the API calls made with its access tokens. */
  accounts: Record<string, AccountStats>;
}

export interface AccountStats {
  grants: number;
  codeGrants: number;
  apiCalls: number;
  byRoute: Record<string, number>;
}

export interface CoreOptions {
  clock: SimClock;
  latencyMs: number;
  accessTokenLifetimeSeconds: number;
  accessTokenExtensionSeconds: number;
  signature: SignatureOptions;
  account: Partial<Pick<SimAccount, 'apiKey' | 'clientId' | 'clientSecret' | 'userId' | 'name'>>;
}

export type DeviceList = 'locks' | 'doorbells';
export type ListAnswer = 'object' | 'empty-array' | 'null' | 'no-content' | 'not-found';

export class SimCore {
  readonly clock: SimClock;
  readonly accounts: SimAccounts;
  /** The main account, the one a single-account simulator has. */
  readonly account: SimAccount;
  readonly accountUser: CallbackUser;
  readonly tokens: TokenAuthority;
  readonly store = new RegistrationStore();
  readonly locks = new Map<string, SimLock>();
  readonly doorbells = new Map<string, SimDoorbell>();
  readonly faults: Faults;
  readonly engine: DeliveryEngine;
  readonly counters = { apiCalls: 0, byRoute: {} as Record<string, number>, byAccount: new Map<string, { apiCalls: number; byRoute: Record<string, number> }>() };
  /**
   * How the device lists answer: as the service does for an account that has such devices (an
   * object keyed by id, the default), or as seen for an account without any: `[]`, `null`, 204 No
   * Content or 404.
   */
  readonly listAnswers: Partial<Record<DeviceList, ListAnswer>> = {};
  /** Set once the server listens. */
  url = '';

  constructor(options: CoreOptions) {
    this.clock = options.clock;
    this.tokens = new TokenAuthority({
      clock: options.clock,
      accessTokenLifetimeSeconds: options.accessTokenLifetimeSeconds,
      accessTokenExtensionSeconds: options.accessTokenExtensionSeconds,
    });
    this.accounts = new SimAccounts((clientId, clientSecret, userId) => {
      this.tokens.addClient(clientId, clientSecret);
      return this.tokens.issueRefreshToken(clientId, userId);
    });
    this.account = this.accounts.add({ id: MAIN_ACCOUNT, ...options.account });
    this.accountUser = this.accounts.userOf(MAIN_ACCOUNT);
    this.faults = new Faults(options.latencyMs);
    this.engine = new DeliveryEngine({ clock: options.clock, secret: () => this.account.apiKey, signature: options.signature, skewMs: () => this.faults.signatureSkewMs, forwarding: () => this.faults.forwarding });
  }

  get baseUrl(): string {
    return `${this.url}/api`;
  }

  get authUrl(): string {
    return `${this.url}/oauth`;
  }

  get stats(): SimStats {
    const accounts: Record<string, AccountStats> = {};
    for (const account of this.accounts.all()) {
      const grants = this.tokens.grantsByUser.get(account.userId);
      const calls = this.counters.byAccount.get(account.id);
      accounts[account.id] = { grants: grants?.grants ?? 0, codeGrants: grants?.codeGrants ?? 0, apiCalls: calls?.apiCalls ?? 0, byRoute: { ...calls?.byRoute } };
    }
    return { grants: this.tokens.refreshGrants, codeGrants: this.tokens.codeGrants, apiCalls: this.counters.apiCalls, byRoute: { ...this.counters.byRoute }, accounts };
  }

  /** Counts an API call made with an account's access token. */
  countCall(accountId: string, route: string): void {
    const calls = this.counters.byAccount.get(accountId) ?? { apiCalls: 0, byRoute: {} };
    calls.apiCalls += 1;
    calls.byRoute[route] = (calls.byRoute[route] ?? 0) + 1;
    this.counters.byAccount.set(accountId, calls);
  }

  addAccount(input: AccountInput): SimAccount {
    return this.accounts.add(input);
  }

  /** The account that made the registration or the call (its user), if it is one of ours. */
  accountOfUser(userId: string): SimAccount | undefined {
    return this.accounts.byUserId(userId);
  }

  /** Whether the account holds the device (a user hook's scope is the account's own user). */
  holds(accountId: string, kind: RegistrationKind, scope: string): boolean {
    if (kind === 'user') return this.accounts.get(accountId)?.userId === scope;
    const device = kind === 'lock' ? this.locks.get(scope) : this.doorbells.get(scope);
    return device?.accounts.includes(accountId) ?? false;
  }

  private checkHolders(accounts: string[]): void {
    for (const id of accounts) this.accounts.require(id);
  }

  addLock(input: LockInput): SimLock {
    const lock = makeLock(input);
    this.checkHolders(lock.accounts);
    this.locks.set(lock.id, lock);
    return lock;
  }

  removeLock(id: string): void {
    this.locks.delete(id);
  }

  addDoorbell(input: DoorbellInput): SimDoorbell {
    const doorbell = makeDoorbell(input);
    this.checkHolders(doorbell.accounts);
    this.doorbells.set(doorbell.id, doorbell);
    return doorbell;
  }

  /** The account gets the device too (a lock shared with it, a doorbell added to its home). */
  share(kind: 'lock' | 'doorbell', deviceId: string, accountId: string): void {
    this.accounts.require(accountId);
    const device = kind === 'lock' ? this.requireLock(deviceId) : this.requireDoorbell(deviceId);
    if (!device.accounts.includes(accountId)) device.accounts.push(accountId);
  }

  /** The account stops holding the device; a device nobody holds is gone. */
  release(kind: 'lock' | 'doorbell', deviceId: string, accountId: string): void {
    const device = kind === 'lock' ? this.locks.get(deviceId) : this.doorbells.get(deviceId);
    if (!device) return;
    device.accounts = device.accounts.filter((a) => a !== accountId);
    if (device.accounts.length > 0) return;
    if (kind === 'lock') this.removeLock(deviceId);
    else this.removeDoorbell(deviceId);
  }

  removeDoorbell(id: string): void {
    this.doorbells.delete(id);
  }

  setBridge(lockId: string, state: BridgeState): void {
    this.requireLock(lockId).bridge = state;
  }

  requireLock(lockId: string): SimLock {
    const lock = this.locks.get(lockId);
    if (!lock) throw new Error(`unknown lock ${lockId}`);
    return lock;
  }

  requireDoorbell(doorbellId: string): SimDoorbell {
    const doorbell = this.doorbells.get(doorbellId);
    if (!doorbell) throw new Error(`unknown doorbell ${doorbellId}`);
    return doorbell;
  }

  /**
   * One delivery per matching registration, signed with the key it was made with; resolves after
   * the first attempt of each. A registration whose account no longer holds the device gets nothing.
   */
  async send(payload: object, target: SendTarget): Promise<DeliveryResult[]> {
    const body = JSON.stringify(payload);
    const scopes: Array<{ kind: RegistrationKind; scope: string }> = [];
    if (target.lockId !== undefined) scopes.push({ kind: 'lock', scope: target.lockId });
    if (target.doorbellId !== undefined) scopes.push({ kind: 'doorbell', scope: target.doorbellId });
    if (target.user) scopes.push({ kind: 'user', scope: target.userId ?? this.account.userId });
    const p = payload as { EventType?: unknown; Event?: unknown };
    const noCustomHeader = target.noCustomHeader ?? (p.EventType === 'status' || p.Event === 'keypad_pin_managed');
    const deliveries: Array<Promise<DeliveryResult>> = [];
    for (const { kind, scope } of scopes) {
      const type = target.notificationType ?? notificationTypeOf(payload, kind);
      for (const registration of this.store.forScope(kind, scope)) {
        if (type !== undefined && !registration.notificationTypes.includes(type)) continue;
        if (!this.stillHeld(registration.owner, kind, scope)) continue;
        deliveries.push(this.engine.deliver(body, {
          kind, scope, url: registration.url, method: registration.method, secret: registration.apiKey,
          customHeader: noCustomHeader ? undefined : { name: registration.header, value: registration.token },
        }, target.signature));
      }
    }
    return Promise.all(deliveries);
  }

  /** A device that still exists is delivered for only to the accounts that hold it. */
  private stillHeld(owner: string, kind: RegistrationKind, scope: string): boolean {
    if (kind === 'user') return true;
    const exists = kind === 'lock' ? this.locks.has(scope) : this.doorbells.has(scope);
    const account = this.accountOfUser(owner);
    return !exists || account === undefined || this.holds(account.id, kind, scope);
  }

  newDvrId(): string {
    return randomUUID();
  }
}
