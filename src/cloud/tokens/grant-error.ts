// A failed token-endpoint outcome as the typed error callers decide by, in words for the user.
import { CloudError, RateLimitedError, RefreshRejectedError, RequestRejectedError, TransientError } from '../http/errors.js';
import type { GrantOutcome } from './oauth.js';
import { settingsAdvice } from './token-messages.js';

/** `what` names the attempt, e.g. "The token renewal failed". */
export function grantError(outcome: Exclude<GrantOutcome, { kind: 'tokens' }>, what: string): CloudError {
  switch (outcome.kind) {
    case 'rejected':
      return new RefreshRejectedError(`${what}: the service refused it${outcome.oauthError ? ` (${outcome.oauthError})` : ''}.`, outcome.oauthError);
    case 'clientRejected':
      return new RequestRejectedError(`${what}: ${settingsAdvice(outcome.setting, outcome.oauthError ?? String(outcome.status))}`, outcome.status);
    case 'otherError':
      return new TransientError(`${what}: the service answered ${outcome.oauthError ?? 'an error'} (${outcome.status}), which says nothing about the refresh token; it is kept for the next attempt.`);
    case 'rateLimited':
      return new RateLimitedError(`${what}: the service asked to slow down.`, outcome.retryAfterMs);
    case 'unavailable':
      return new TransientError(`${what}: the service is unavailable for now (503); the refresh token is kept for the next attempt.`);
    case 'notSent':
    case 'lost':
      return new TransientError(`${what}: ${outcome.detail}.`);
  }
}
