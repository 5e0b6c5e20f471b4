// A failed token-endpoint outcome as a typed error (refresh 400 is "re-authorization
// needed"; the rest is "try again later" or a setting to fix).
import { describe, expect, it } from 'vitest';

import { RateLimitedError, RefreshRejectedError, RequestRejectedError, TransientError } from '../../../src/cloud/http/errors.js';
import { grantError } from '../../../src/cloud/tokens/grant-error.js';

describe('what each failed grant means to the caller', () => {
  const what = 'The token renewal failed';

  it('400 is a refused grant, with the OAuth error code when the service sent one', () => {
    const error = grantError({ kind: 'rejected', status: 400, oauthError: 'invalid_grant' }, what);
    expect(error).toBeInstanceOf(RefreshRejectedError);
    expect(error.message).toBe('The token renewal failed: the service refused it (invalid_grant).');
    expect(error).toMatchObject({ oauthError: 'invalid_grant' });
    expect(grantError({ kind: 'rejected', status: 400 }, what).message).toBe('The token renewal failed: the service refused it.');
  });

  it('a client error names the setting to fix and says the refresh token was not used', () => {
    const error = grantError({ kind: 'clientRejected', status: 400, oauthError: 'invalid_client', setting: 'clientSecret' }, what);
    expect(error).toBeInstanceOf(RequestRejectedError);
    expect(error.status).toBe(400);
    expect(error.message).toContain('Fix clientSecret in the plugin settings');
    expect(error.message).toContain('(invalid_client)');
    expect(error.message).toContain('refresh token was not used');
    expect(grantError({ kind: 'clientRejected', status: 400, oauthError: 'unauthorized_client', setting: 'clientId' }, what).message).toContain('Fix clientId');
    expect(grantError({ kind: 'clientRejected', status: 403, setting: 'clientId and clientSecret' }, what).message).toContain('check clientId and clientSecret');
  });

  it('429 keeps the Retry-After; 503 and no answer are transient', () => {
    const limited = grantError({ kind: 'rateLimited', retryAfterMs: 30_000 }, what);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited).toMatchObject({ retryAfterMs: 30_000 });
    expect(grantError({ kind: 'unavailable' }, what)).toBeInstanceOf(TransientError);
    expect(grantError({ kind: 'notSent', detail: 'network error ECONNREFUSED' }, what).message).toBe('The token renewal failed: network error ECONNREFUSED.');
    expect(grantError({ kind: 'lost', detail: 'no answer in time' }, what)).toBeInstanceOf(TransientError);
  });

  it('a 400 with another OAuth error is transient and says the refresh token is kept', () => {
    const error = grantError({ kind: 'otherError', status: 400, oauthError: 'temporarily_unavailable' }, what);
    expect(error).toBeInstanceOf(TransientError);
    expect(error.message).toContain('temporarily_unavailable (400)');
    expect(error.message).toContain('it is kept');
    expect(grantError({ kind: 'otherError', status: 400 }, what).message).toContain('an error (400)');
  });
});
