// The simulated accounts: each a user of the service, linked through an integration (API key and
// OAuth client). Accounts linked through one integration share its key and client, as the spec
// issues both to the integrator; an account of another integration has its own.
import { randomBytes } from 'node:crypto';
import { person, type CallbackUser } from './payloads.js';

/** The account the simulator starts with; its id names it in options, events and the control routes. */
export const MAIN_ACCOUNT = 'main';

export interface SimAccount {
  id: string;
  name: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  /** The refresh token issued when the account was made (single use: a grant spends it). */
  refreshToken: string;
  userId: string;
}

export interface AccountInput {
  id: string;
  /** Shown on the consent page; default the id. */
  name?: string;
  userId?: string;
  apiKey?: string;
  clientId?: string;
  clientSecret?: string;
  /** Use the main account's API key (one integration), unless apiKey is given. */
  shareKey?: boolean;
  /** Use the main account's OAuth client, unless clientId is given. */
  shareClient?: boolean;
  /** The user as callbacks name them (FirstName, LastName, Email, PhoneNo). */
  user?: Partial<Omit<CallbackUser, 'UserID'>>;
}

interface Entry {
  account: SimAccount;
  user: CallbackUser;
}

const ID_PATTERN = /^[a-z0-9-]{1,32}$/;

/** Distinct people for accounts made without a `user`, so a callback shows whose it is. */
const PEOPLE: Array<Omit<CallbackUser, 'UserID' | 'imageInfo'>> = [
  { FirstName: 'Casey', LastName: 'Cabin', Email: 'casey@example.com', PhoneNo: '+15555550102' },
  { FirstName: 'Robin', LastName: 'Parent', Email: 'robin@example.com', PhoneNo: '+15555550103' },
  { FirstName: 'Sam', LastName: 'Partner', Email: 'sam@example.com', PhoneNo: '+15555550104' },
];

export class SimAccounts {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly issueRefreshToken: (clientId: string, clientSecret: string, userId: string) => string) {}

  /** Makes an account; the first one made is the main account. */
  add(input: AccountInput): SimAccount {
    if (!ID_PATTERN.test(input.id)) throw new Error(`account id "${input.id}" must match ${String(ID_PATTERN)}`);
    if (this.entries.has(input.id)) throw new Error(`account "${input.id}" exists already`);
    const main = this.entries.get(MAIN_ACCOUNT)?.account;
    const userId = input.userId ?? (this.entries.size === 0 ? 'user-0001' : `user-${input.id}-${randomBytes(3).toString('hex')}`);
    if (this.byUserId(userId)) throw new Error(`user ${userId} belongs to another account`);
    const sharedClient = input.clientId === undefined && input.shareClient === true && main ? main : undefined;
    const clientId = input.clientId ?? sharedClient?.clientId ?? `client-${randomBytes(4).toString('hex')}`;
    const known = this.all().find((a) => a.clientId === clientId);
    const clientSecret = input.clientSecret ?? known?.clientSecret ?? randomBytes(24).toString('base64url');
    if (known && known.clientSecret !== clientSecret) throw new Error(`client ${clientId} exists with another secret`);
    const apiKey = input.apiKey ?? (input.shareKey === true && main ? main.apiKey : `key_${randomBytes(16).toString('hex')}`);
    const account: SimAccount = {
      id: input.id, name: input.name ?? input.id, apiKey, clientId, clientSecret, userId,
      refreshToken: this.issueRefreshToken(clientId, clientSecret, userId),
    };
    const fallback = this.entries.size === 0 ? {} : PEOPLE[(this.entries.size - 1) % PEOPLE.length];
    this.entries.set(account.id, { account, user: person({ UserID: userId, ...fallback, ...input.user }) });
    return account;
  }

  all(): SimAccount[] {
    return [...this.entries.values()].map((e) => e.account);
  }

  get(id: string): SimAccount | undefined {
    return this.entries.get(id)?.account;
  }

  require(id: string): SimAccount {
    const account = this.get(id);
    if (!account) throw new Error(`unknown account "${id}"; known: ${[...this.entries.keys()].join(', ')}`);
    return account;
  }

  byUserId(userId: string): SimAccount | undefined {
    return this.all().find((a) => a.userId === userId);
  }

  /** The user as callbacks name them. */
  userOf(id: string): CallbackUser {
    const entry = this.entries.get(id);
    if (!entry) throw new Error(`unknown account "${id}"`);
    return entry.user;
  }

  isKnownKey(apiKey: unknown): boolean {
    return this.all().some((a) => a.apiKey === apiKey);
  }

  /** Whether the key and the client belong to one integration (some account was linked with both). */
  sameIntegration(apiKey: unknown, clientId: string): boolean {
    return this.all().some((a) => a.apiKey === apiKey && a.clientId === clientId);
  }

  /** The accounts whose OAuth client is this one, in the order they were made. */
  ofClient(clientId: string | undefined): SimAccount[] {
    return this.all().filter((a) => a.clientId === clientId);
  }
}
