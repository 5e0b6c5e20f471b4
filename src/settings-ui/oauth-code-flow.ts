// The OAuth 2.0 authorization-code flow of the settings page (RFC 6749 4.1), without I/O: step 1
// makes the sign-in address with a `state` of the account's id and a random nonce, step 2 checks
// what the user pasted back against it, so the code is exchanged for the account that started the
// sign-in. A state lives in this process only, for 15 minutes, and is used once whatever happens.
import { randomBytes } from 'node:crypto';

import { nonEmpty, type Account } from './account-input.js';
import { serverMessage } from './server-messages.js';
import { MAIN_ACCOUNT_ID } from '../config/fields.js';
import { UiError } from './ui-error.js';

/** How long a started authorization may take before its `state` is forgotten. */
export const AUTHORIZATION_TTL_MS = 15 * 60 * 1000;

/** What the redirect address carried; `base` is the address without its query. */
export interface RedirectAnswer {
  code?: string;
  state?: string;
  error?: string;
  errorDescription?: string;
  base?: string;
}

/** A code the service issued, the redirect address it must be redeemed with, and the account that asked. */
export interface AuthorizationGrant {
  code: string;
  redirectUri: string;
  accountId: string;
}

/** Reads the code (or the refusal) out of what the user pasted: the whole address, or just its query. */
export function parseRedirect(pasted: string): RedirectAnswer {
  const text = pasted.trim();
  let params: URLSearchParams;
  let base: string | undefined;
  try {
    const url = new URL(text);
    params = url.searchParams;
    base = `${url.origin}${url.pathname}`;
  } catch {
    params = new URLSearchParams(text.startsWith('?') ? text.slice(1) : text);
  }
  const pick = (name: string) => nonEmpty(params.get(name));
  const result: RedirectAnswer = {};
  const code = pick('code');
  const state = pick('state');
  const error = pick('error');
  const errorDescription = pick('error_description');
  if (code) result.code = code;
  if (state) result.state = state;
  if (error) result.error = error;
  if (errorDescription) result.errorDescription = errorDescription;
  if (base) result.base = base;
  return result;
}

function sameRedirectBase(a: string, b: string): boolean {
  try {
    const left = new URL(a);
    const right = new URL(b);
    return left.origin === right.origin && left.pathname.replace(/\/+$/, '') === right.pathname.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

export class AuthorizationCodeFlow {
  /** state -> redirect URI, account and start time. */
  private readonly pending = new Map<string, { redirectUri: string; accountId: string; startedAt: number }>();

  constructor(private readonly now: () => number) {}

  /** Step 1 (RFC 6749 4.1.1): the address the user opens. */
  start(account: Pick<Account, 'authUrl' | 'clientId' | 'id'>, redirectUriInput: unknown): { url: string } {
    const redirectUri = nonEmpty(redirectUriInput);
    if (!redirectUri || !/^https?:\/\/[^/]/i.test(redirectUri)) {
      throw new UiError(serverMessage('server.oauth.redirectMissing'));
    }
    this.forgetExpired();
    // The account id first (no dot in an id), then the nonce that makes the state unguessable.
    const accountId = account.id ?? MAIN_ACCOUNT_ID;
    const state = `${accountId}.${randomBytes(32).toString('base64url')}`;
    this.pending.set(state, { redirectUri, accountId, startedAt: this.now() });
    const url = new URL(`${account.authUrl}/authorization`);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', account.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('state', state);
    return { url: url.toString() };
  }

  /** Step 2 (RFC 6749 4.1.2): the address the service sent the browser to, checked against step 1. */
  redeem(pastedInput: unknown): AuthorizationGrant {
    const pasted = nonEmpty(pastedInput);
    if (!pasted) throw new UiError(serverMessage('server.oauth.pasteAddress'));
    const answer = parseRedirect(pasted);
    this.forgetExpired();
    const pending = answer.state === undefined ? undefined : this.pending.get(answer.state);
    if (!answer.state || !pending) {
      throw new UiError(serverMessage('server.oauth.stateMismatch'));
    }
    // One use only, whatever happens next.
    this.pending.delete(answer.state);
    if (answer.error) {
      if (answer.error === 'access_denied') throw new UiError(serverMessage('server.oauth.denied'));
      throw new UiError(answer.errorDescription
        ? serverMessage('server.oauth.errorDescribed', { error: answer.error, description: answer.errorDescription })
        : serverMessage('server.oauth.error', { error: answer.error }));
    }
    if (!answer.code) throw new UiError(serverMessage('server.oauth.noCode'));
    if (answer.base && !sameRedirectBase(answer.base, pending.redirectUri)) {
      throw new UiError(serverMessage('server.oauth.otherRedirect'));
    }
    return { code: answer.code, redirectUri: pending.redirectUri, accountId: pending.accountId };
  }

  /** The account a pasted address answers for, without spending its state (undefined: no sign-in started here). */
  accountOf(pastedInput: unknown): string | undefined {
    const pasted = nonEmpty(pastedInput);
    const state = pasted === undefined ? undefined : parseRedirect(pasted).state;
    this.forgetExpired();
    return state === undefined ? undefined : this.pending.get(state)?.accountId;
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [state, pending] of this.pending) {
      if (now - pending.startedAt > AUTHORIZATION_TTL_MS) this.pending.delete(state);
    }
  }
}
