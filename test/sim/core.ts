// The simulator's state and behaviour without HTTP: account, tokens, devices, registrations,
// delivery and faults. The routes (oauth-routes.ts, api-routes.ts, ...) are thin edges over it.
import { randomBytes, randomUUID } from 'node:crypto';
import type { SimClock } from './clock.js';
import { DeliveryEngine, type DeliveryResult } from './delivery.js';
import { makeDoorbell, makeLock, type BridgeState, type DoorbellInput, type LockInput, type SimDoorbell, type SimLock } from './devices.js';
import { Faults } from './faults.js';
import { notificationTypeOf, person, type CallbackUser, type NotificationType } from './payloads.js';
import { RegistrationStore, type RegistrationKind } from './registrations.js';
import type { SignatureOptions, SignatureOverrides } from './signature.js';
import { TokenAuthority } from './tokens.js';

export interface SimAccount {
  apiKey: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  userId: string;
}

export interface SendTarget {
  lockId?: string;
  doorbellId?: string;
  /** Also (or only) deliver to the account user's user hook. */
  user?: boolean;
  /** Which user's hook; the account user by default. */
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
}

export interface CoreOptions {
  clock: SimClock;
  latencyMs: number;
  accessTokenLifetimeSeconds: number;
  accessTokenExtensionSeconds: number;
  signature: SignatureOptions;
  account: Partial<Omit<SimAccount, 'refreshToken'>>;
}

export type DeviceList = 'locks' | 'doorbells';
export type ListAnswer = 'object' | 'empty-array' | 'null' | 'no-content' | 'not-found';

export class SimCore {
  readonly clock: SimClock;
  readonly account: SimAccount;
  readonly accountUser: CallbackUser;
  readonly tokens: TokenAuthority;
  readonly store = new RegistrationStore();
  readonly locks = new Map<string, SimLock>();
  readonly doorbells = new Map<string, SimDoorbell>();
  readonly faults: Faults;
  readonly engine: DeliveryEngine;
  readonly counters = { apiCalls: 0, byRoute: {} as Record<string, number> };
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
    const userId = options.account.userId ?? 'user-0001';
    const clientId = options.account.clientId ?? `client-${randomBytes(4).toString('hex')}`;
    const clientSecret = options.account.clientSecret ?? randomBytes(24).toString('base64url');
    this.tokens = new TokenAuthority({
      clock: options.clock, clientId, clientSecret, userId,
      accessTokenLifetimeSeconds: options.accessTokenLifetimeSeconds,
      accessTokenExtensionSeconds: options.accessTokenExtensionSeconds,
    });
    this.account = {
      apiKey: options.account.apiKey ?? `key_${randomBytes(16).toString('hex')}`,
      clientId, clientSecret, userId,
      refreshToken: this.tokens.issueRefreshToken(),
    };
    this.accountUser = person({ UserID: userId, FirstName: 'Alex', LastName: 'Example', Email: 'alex@example.com', PhoneNo: '+15555550100' });
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
    return { grants: this.tokens.refreshGrants, codeGrants: this.tokens.codeGrants, apiCalls: this.counters.apiCalls, byRoute: { ...this.counters.byRoute } };
  }

  addLock(input: LockInput): SimLock {
    const lock = makeLock(input);
    this.locks.set(lock.id, lock);
    return lock;
  }

  removeLock(id: string): void {
    this.locks.delete(id);
  }

  addDoorbell(input: DoorbellInput): SimDoorbell {
    const doorbell = makeDoorbell(input);
    this.doorbells.set(doorbell.id, doorbell);
    return doorbell;
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

  /** One delivery per matching registration; resolves after the first attempt of each. */
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
        deliveries.push(this.engine.deliver(body, {
          kind, scope, url: registration.url, method: registration.method,
          customHeader: noCustomHeader ? undefined : { name: registration.header, value: registration.token },
        }, target.signature));
      }
    }
    return Promise.all(deliveries);
  }

  newDvrId(): string {
    return randomUUID();
  }
}
