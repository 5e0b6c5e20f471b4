// The spec's webhook registration requests ("Register a lock webhook" ... "Delete registrations"):
// the path of each register and delete call per scope, and the registration body.
import { CALLBACK_TOKEN_HEADER } from '../../settings.js';
import type { HookKind } from './registration-ledger.js';
import type { DesiredRegistration } from './registration-plan.js';

export function registerPath(kind: HookKind, id: string): string {
  if (kind === 'user') return '/webhook/user';
  const device = encodeURIComponent(id);
  return kind === 'lock' ? `/webhook/${device}` : `/webhook/doorbell/${device}`;
}

export function deletePath(kind: HookKind, id: string, clientId: string): string {
  const client = encodeURIComponent(clientId);
  if (kind === 'user') return `/webhook/user/${client}`;
  const device = encodeURIComponent(id);
  return kind === 'lock' ? `/webhook/${device}/${client}` : `/webhook/doorbell/${device}/${client}`;
}

/** The registration body of the spec: all six fields, POST callbacks, our header and token. */
export function registrationBody(desired: DesiredRegistration, token: string) {
  return {
    url: desired.url,
    method: 'POST' as const,
    clientID: desired.clientId,
    header: CALLBACK_TOKEN_HEADER,
    token,
    notificationTypes: [...desired.types],
  };
}

/** The service confirms a registration with `{"message": "success"}`. */
export function isSuccessAnswer(answer: unknown): boolean {
  return typeof answer === 'object' && answer !== null && (answer as Record<string, unknown>).message === 'success';
}

/** A scope in words for log lines. */
export function describeScope(kind: HookKind, id: string): string {
  return kind === 'user' ? 'the account (user webhook)' : `${kind} ${id}`;
}
