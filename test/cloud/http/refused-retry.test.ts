// The rule after a 401, for every call made with an access token: a newer token already in use is
// tried first and its refusal earns a renewal; a renewed token refused is final; at most two tries.
import { describe, expect, it } from 'vitest';

import { retryRefused, type RetryToken } from '../../../src/cloud/http/refused-retry.js';

/** Answers `refused` for the tokens in `refusing`; renews from `renewals` in turn; records what was sent and renewed. */
function service(refusing: string[], renewals: RetryToken[]) {
  const sent: string[] = [];
  const renewedAfter: string[] = [];
  return {
    sent,
    renewedAfter,
    steps: {
      refused: (answer: string) => answer === 'refused',
      renew: (token: string) => {
        renewedAfter.push(token);
        const next = renewals.shift();
        return next ? Promise.resolve(next) : Promise.reject(new Error('no renewal left'));
      },
      send: (token: string) => {
        sent.push(token);
        return Promise.resolve(refusing.includes(token) ? 'refused' : `ok with ${token}`);
      },
    },
  };
}

describe('after a 401', () => {
  it('an answer that was not refused is kept: nothing is renewed or sent again', async () => {
    const s = service([], []);
    expect(await retryRefused('A', 'ok with A', s.steps)).toEqual({ answer: 'ok with A', token: 'A' });
    expect(s.renewedAfter).toEqual([]);
  });

  it('a renewed token: one retry', async () => {
    const s = service(['A'], [{ token: 'B', renewed: true }]);
    expect(await retryRefused('A', 'refused', s.steps)).toEqual({ answer: 'ok with B', token: 'B' });
    expect(s.renewedAfter).toEqual(['A']);
  });

  it('a renewed token refused too: final, no second renewal', async () => {
    const s = service(['A', 'B'], [{ token: 'B', renewed: true }, { token: 'C', renewed: true }]);
    expect(await retryRefused('A', 'refused', s.steps)).toEqual({ answer: 'refused', token: 'B' });
    expect(s.renewedAfter).toEqual(['A']);
  });

  it('a newer token already in use, refused too: its refusal gets the renewal, and the renewed token is tried', async () => {
    const s = service(['A', 'B'], [{ token: 'B', renewed: false }, { token: 'C', renewed: true }]);
    expect(await retryRefused('A', 'refused', s.steps)).toEqual({ answer: 'ok with C', token: 'C' });
    expect(s.renewedAfter).toEqual(['A', 'B']);
    expect(s.sent).toEqual(['B', 'C']);
  });

  it('at most two tries, even when newer tokens keep coming', async () => {
    const s = service(['A', 'B', 'C'], [{ token: 'B', renewed: false }, { token: 'C', renewed: false }, { token: 'D', renewed: true }]);
    expect(await retryRefused('A', 'refused', s.steps)).toEqual({ answer: 'refused', token: 'C' });
    expect(s.sent).toEqual(['B', 'C']);
  });

  it('a renewal that fails: its error reaches the caller', async () => {
    const s = service(['A'], []);
    await expect(retryRefused('A', 'refused', s.steps)).rejects.toThrow('no renewal left');
  });
});
