// Webhook registrations: validation of the six fields and the spec's cardinality (one per user
// per device, or per user for the user hook; a repeat call replaces the earlier one).
import { z } from 'zod/v3';

export type RegistrationKind = 'lock' | 'doorbell' | 'user';

export const ALLOWED_TYPES: Record<RegistrationKind, readonly string[]> = {
  lock: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'],
  doorbell: ['motiondetected', 'videoavailable', 'buttonpush'],
  user: ['lockmembership', 'lifecycle'],
};

function isAbsoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function bodySchema(kind: RegistrationKind) {
  const allowed = ALLOWED_TYPES[kind];
  return z.object({
    url: z.string({ message: 'url is required' }).refine(isAbsoluteHttpUrl, { message: 'url must be an absolute http(s) URL' }),
    method: z.string({ message: 'method is required' }).refine((m) => m === 'POST' || m === 'PUT', { message: 'method must be POST or PUT' }),
    clientID: z.string({ message: 'clientID is required' }).min(1, { message: 'clientID is required' }),
    header: z.string({ message: 'header is required' }).regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: 'header must be a valid header name' }),
    token: z.string({ message: 'token is required' }).min(1, { message: 'token is required' }),
    notificationTypes: z.array(z.string(), { message: 'notificationTypes is required' })
      .min(1, { message: 'notificationTypes must not be empty' })
      .refine((types) => types.every((t) => allowed.includes(t)), { message: `notificationTypes must be drawn from: ${allowed.join(', ')}` }),
  });
}

export type RegistrationBody = z.infer<ReturnType<typeof bodySchema>>;

export function parseRegistration(kind: RegistrationKind, body: unknown): { ok: true; value: RegistrationBody } | { ok: false; message: string } {
  const result = bodySchema(kind).safeParse(body ?? {});
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, message: result.error.issues.map((i) => i.message).join('; ') };
}

export interface Registration extends RegistrationBody {
  kind: RegistrationKind;
  /** Lock id, doorbell id, or the user id for user hooks. */
  scope: string;
  /** The user (from the access token) who owns it. */
  owner: string;
  /** The API key it was made with: its callbacks are signed with that key. */
  apiKey: string;
  updatedAt: number;
}

/** One change to the registrations, in the order the service made them. */
export interface RegistrationChange {
  op: 'register' | 'delete';
  kind: RegistrationKind;
  scope: string;
  owner: string;
  url?: string;
}

export class RegistrationStore {
  private readonly byKey = new Map<string, Registration>();
  /** Every registration made and deleted, oldest first (a handover's order is read from it). */
  readonly changes: RegistrationChange[] = [];

  private static key(kind: RegistrationKind, scope: string, owner: string): string {
    return `${kind}\u0000${scope}\u0000${owner}`;
  }

  /** Last call wins: one registration per kind, scope and owner. */
  upsert(kind: RegistrationKind, scope: string, owner: string, apiKey: string, body: RegistrationBody, at: number): Registration {
    const registration: Registration = { ...body, notificationTypes: [...body.notificationTypes], kind, scope, owner, apiKey, updatedAt: at };
    this.byKey.set(RegistrationStore.key(kind, scope, owner), registration);
    this.changes.push({ op: 'register', kind, scope, owner, url: body.url });
    return registration;
  }

  get(kind: RegistrationKind, scope: string, owner: string): Registration | undefined {
    return this.byKey.get(RegistrationStore.key(kind, scope, owner));
  }

  /** Removes the owner's registration when its clientID matches; returns whether one was removed. */
  remove(kind: RegistrationKind, scope: string, owner: string, clientID: string): boolean {
    const key = RegistrationStore.key(kind, scope, owner);
    const existing = this.byKey.get(key);
    if (existing?.clientID !== clientID) return false;
    this.changes.push({ op: 'delete', kind, scope, owner });
    return this.byKey.delete(key);
  }

  forScope(kind: RegistrationKind, scope: string): Registration[] {
    return [...this.byKey.values()].filter((r) => r.kind === kind && r.scope === scope);
  }

  all(): Registration[] {
    return [...this.byKey.values()];
  }

  /** Forgets every registration (of one owner when given), as a service that lost them would; returns how many there were. */
  clear(owner?: string): number {
    let count = 0;
    for (const [key, registration] of this.byKey) {
      if (owner !== undefined && registration.owner !== owner) continue;
      this.byKey.delete(key);
      count += 1;
    }
    return count;
  }
}
