// Typed failures of the cloud API, so callers decide by class, never by parsing text.
// Messages are written for Homebridge users and never contain secrets.

export abstract class CloudError extends Error {
  abstract readonly retryable: boolean;
  constructor(message: string, readonly status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 401: the access token is no longer accepted; after one refresh attempt the user must link again. */
export class AuthorizationLostError extends CloudError {
  readonly retryable = false;
}

/** A refresh grant was refused (400): the refresh token is used, expired or revoked. */
export class RefreshRejectedError extends CloudError {
  readonly retryable = false;
  constructor(message: string, readonly oauthError?: string, options?: { cause?: unknown }) {
    super(message, 400, options);
  }
}

/** 429: slow down; retryAfterMs comes from Retry-After when the service sent it. */
export class RateLimitedError extends CloudError {
  readonly retryable = true;
  constructor(message: string, readonly retryAfterMs: number | undefined) {
    super(message, 429);
  }
}

export type BridgeProblem = 'timeout' | 'noBridge' | 'offline' | 'busy';

const BRIDGE_WORDS: Record<BridgeProblem, string> = {
  timeout: 'the lock\'s Wi-Fi bridge did not answer in time (408)',
  noBridge: 'the lock has no Wi-Fi bridge, so it cannot be operated remotely (409)',
  offline: 'the lock\'s Wi-Fi bridge is offline (422)',
  busy: 'the lock\'s Wi-Fi bridge is busy with another command (423)',
};

export const BRIDGE_STATUS: Record<number, BridgeProblem> = { 408: 'timeout', 409: 'noBridge', 422: 'offline', 423: 'busy' };

/** 408/409/422/423 from remote operate: the bridge could not carry out the command. */
export class BridgeError extends CloudError {
  readonly retryable = false;
  constructor(readonly problem: BridgeProblem, status: number) {
    super(BRIDGE_WORDS[problem], status);
  }
}

/** 5xx, timeouts and network errors: worth retrying later. */
export class TransientError extends CloudError {
  readonly retryable = true;
}

/** Any other 4xx: our request was refused; retrying the same request will not help. */
export class RequestRejectedError extends CloudError {
  readonly retryable = false;
}

/** No usable token: the account is not linked or needs to be linked again. */
export class NotLinkedError extends CloudError {
  readonly retryable = false;
}

/** A 2xx answer whose body is not the JSON shape the caller expects. */
export class UnexpectedResponseError extends CloudError {
  readonly retryable = false;
}
