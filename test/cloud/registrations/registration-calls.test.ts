// How the registrar sends each call ("Bounded concurrency; 429 and 5xx retried with
// back-off and jitter honouring Retry-After"), and how one refusal ends a run.
import { describe, expect, it } from 'vitest';

import type { ApiClient, HttpMethod } from '../../../src/cloud/http/api.js';
import { AuthorizationLostError, RateLimitedError, RequestRejectedError, TransientError } from '../../../src/cloud/http/errors.js';
import { describeRegistrationError, newRun, RegistrationCalls, Stopped } from '../../../src/cloud/registrations/registration-calls.js';
import { DEFAULT_RETRY } from '../../../src/cloud/http/retry.js';
import { captureLog } from '../../fixtures/token-harness.js';

/** A service that answers each call with the next of `answers` (an error is thrown), recording the calls. */
function scriptedClient(answers: unknown[]): { client: ApiClient; sent: { method: HttpMethod; path: string }[] } {
  const sent: { method: HttpMethod; path: string }[] = [];
  return {
    sent,
    client: {
      request: (method, path) => {
        sent.push({ method, path });
        const answer = answers.shift();
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as never);
      },
    },
  };
}

function calls(client: ApiClient, options: { stopped?: () => boolean; now?: () => number } = {}) {
  const log = captureLog();
  const sleeps: number[] = [];
  const instance = new RegistrationCalls({
    client,
    log,
    concurrency: 2,
    retry: DEFAULT_RETRY,
    now: options.now ?? (() => 1_000),
    sleep: async (ms) => {
      sleeps.push(ms);
      await Promise.resolve();
    },
    random: () => 0.5,
    isStopped: options.stopped ?? (() => false),
  });
  return { calls: instance, log, sleeps };
}

describe('each registration call is retried, and one refusal of the account ends the run', () => {
  it('5xx and network failures are retried with back-off until they pass', async () => {
    const { client, sent } = scriptedClient([new TransientError('503', 503), new TransientError('reset'), { message: 'success' }]);
    const { calls: c, sleeps } = calls(client);
    await c.call(newRun(), () => client.request('POST', '/webhook/L1'));
    expect(sent).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('a lost authorization aborts the run: later calls of the same run fail at once without being sent', async () => {
    const lost = new AuthorizationLostError('refused', 401);
    const { client, sent } = scriptedClient([lost, { message: 'success' }]);
    const { calls: c } = calls(client);
    const run = newRun();
    await expect(c.call(run, () => client.request('POST', '/webhook/L1'))).rejects.toBe(lost);
    expect(run.abort).toBe(lost);
    await expect(c.call(run, () => client.request('POST', '/webhook/L2'))).rejects.toBe(lost);
    expect(sent).toHaveLength(1);
  });

  it('a Retry-After too long to wait for ends the call and sets when the run may come back', async () => {
    const { client } = scriptedClient([new RateLimitedError('slow down', 10 * 60_000)]);
    const { calls: c } = calls(client, { now: () => 5_000 });
    const run = newRun();
    await expect(c.call(run, () => client.request('POST', '/webhook/L1'))).rejects.toBeInstanceOf(RateLimitedError);
    expect(run.notBefore).toBe(5_000 + 10 * 60_000);
  });

  it('after stop() nothing more is sent', async () => {
    const { client, sent } = scriptedClient([{ message: 'success' }]);
    const { calls: c } = calls(client, { stopped: () => true });
    await expect(c.call(newRun(), () => client.request('POST', '/webhook/L1'))).rejects.toBeInstanceOf(Stopped);
    expect(sent).toEqual([]);
  });
});

describe('spec "Delete registrations": deleting one registration', () => {
  it('DELETE /webhook/{lockID}/{clientID}; 404 counts as deleted', async () => {
    const { client, sent } = scriptedClient([new RequestRejectedError('not found', 404)]);
    const { calls: c, log } = calls(client);
    await c.deleteOne(newRun(), 'lock', 'L 1', 'client-1');
    expect(sent).toEqual([{ method: 'DELETE', path: '/webhook/L%201/client-1' }]);
    expect(log.text('warn')).toEqual([]);
  });

  it('another refusal will not change on retry: the scope is dropped with a warning, not failed forever', async () => {
    const { client, sent } = scriptedClient([new RequestRejectedError('forbidden', 403)]);
    const { calls: c, log } = calls(client);
    await c.deleteOne(newRun(), 'doorbell', 'D1', 'client-1');
    expect(sent).toHaveLength(1);
    expect(log.text('warn')).toEqual(['The service refused to delete the webhook of doorbell D1 (forbidden (HTTP 403)); it is no longer tracked.']);
  });

  it('a failure worth trying again later is thrown to the caller after the retries', async () => {
    const failures = Array.from({ length: DEFAULT_RETRY.maxAttempts }, () => new TransientError('down', 503));
    const { client, sent } = scriptedClient(failures);
    const { calls: c } = calls(client);
    await expect(c.deleteOne(newRun(), 'user', '', 'client-1')).rejects.toBeInstanceOf(TransientError);
    expect(sent.map((call) => call.path)).toEqual(Array.from({ length: DEFAULT_RETRY.maxAttempts }, () => '/webhook/user/client-1'));
  });

  it('failures are described with their HTTP status, other errors by their message', () => {
    expect(describeRegistrationError(new TransientError('The service had a problem', 502))).toBe('The service had a problem (HTTP 502)');
    expect(describeRegistrationError(new TransientError('no answer'))).toBe('no answer');
    expect(describeRegistrationError(new TypeError('boom'))).toBe('boom');
    expect(describeRegistrationError('text')).toBe('text');
  });
});
