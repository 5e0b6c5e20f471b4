// The settings page's check before a save (/config/check): the plugin's own config rules, one
// problem per field with where it sits, while fields not filled in yet are no reason to refuse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkConfig } from '../../src/config.js';
import { configProblems, type FieldProblem } from '../../src/settings-ui/config-check.js';
import { COMPLETE_BLOCK } from '../config/complete-block.js';

/** The problems as the log shows them: path and English sentence. */
const inWords = (problems: FieldProblem[]) => problems.map(({ path, message }) => ({ path, message: message.text }));

const complete = { ...COMPLETE_BLOCK, doorbells: [{ id: 'BELL-1', motionTimeoutSeconds: 30 }] };

describe('the settings page saves only what the plugin accepts', () => {
  it('a complete, valid block has no problems', () => {
    expect(configProblems(complete)).toEqual([]);
  });

  it('a block being filled in (no account fields yet) has no problems: the plugin names those when it starts', () => {
    expect(configProblems({ platform: 'LockAccess', name: 'Lock Access' })).toEqual([]);
    expect(configProblems({ platform: 'LockAccess', clientId: 'client-1', webhook: { listenPort: 8600 } })).toEqual([]);
  });

  it('motionTimeoutSeconds outside 1 to 3600 is refused at its doorbell, in words', () => {
    expect(inWords(configProblems({ ...complete, doorbells: [{ id: 'BELL-1', motionTimeoutSeconds: 0 }] }))).toEqual([
      { path: ['doorbells', 0, 'motionTimeoutSeconds'], message: 'motionTimeoutSeconds must be at least 1' },
    ]);
    expect(inWords(configProblems({ ...complete, doorbells: [{ id: 'BELL-1' }, { id: 'BELL-2', motionTimeoutSeconds: 3601 }] }))).toEqual([
      { path: ['doorbells', 1, 'motionTimeoutSeconds'], message: 'motionTimeoutSeconds must be at most 3600' },
    ]);
  });

  it('an empty lock id and a listener port out of range are refused where they sit', () => {
    const empty = [{ path: ['locks', 0, 'id'], message: 'the lock id is empty: copy it from the Lock Access app or use Find my devices in the plugin settings' }];
    expect(inWords(configProblems({ ...complete, locks: [{ id: '' }] }))).toEqual(empty);
    expect(inWords(configProblems({ ...complete, locks: [{ id: '  ' }] }))).toEqual(empty);
    expect(inWords(configProblems({ ...complete, webhook: { ...complete.webhook, listenPort: 70000 } }))).toEqual([
      { path: ['webhook', 'listenPort'], message: 'webhook.listenPort must be 1 to 65535' },
    ]);
  });

  it('a filled-in value that is wrong is refused even for a required field, and the message never holds the value', () => {
    const problems = configProblems({ ...complete, apiKey: ' key-with-space', baseUrl: 'not an address' });
    expect(problems.map((p) => p.path)).toEqual([['apiKey'], ['baseUrl']]);
    expect(problems[0]?.message.text).toMatch(/apiKey has spaces/);
    expect(JSON.stringify(problems)).not.toContain('key-with-space');
    expect(problems[1]?.message.text).toMatch(/baseUrl must be a full http\(s\) address/);
  });

  it('a wrong type without its own words still names the field', () => {
    const [problem] = configProblems({ ...complete, discoverDevices: 'yes' });
    expect(problem?.path).toEqual(['discoverDevices']);
    expect(problem?.message).toEqual({ code: 'config.field.switch', params: { field: 'discoverDevices' }, text: 'discoverDevices must be true or false (a switch, without quotes)' });
  });

  it('an extra account\'s id is checked as the plugin checks it: the pattern, "main" reserved, and unique', () => {
    const accounts = (...ids: string[]) => ({ ...complete, accounts: ids.map((id) => ({ id, name: id })) });
    expect(configProblems(accounts('cabin', 'parents'))).toEqual([]);
    const one = (block: unknown) => {
      const problems = configProblems(block);
      expect(problems).toHaveLength(1);
      return { path: problems[0]?.path, message: problems[0]?.message.text ?? '' };
    };
    expect(one(accounts('Cabin'))).toMatchObject({ path: ['accounts', 0, 'id'], message: /^id must be 1 to 32 lowercase letters/ });
    expect(one(accounts('main'))).toMatchObject({ path: ['accounts', 0, 'id'], message: /reserved/ });
    expect(one(accounts('cabin', 'cabin'))).toMatchObject({ path: ['accounts', 1, 'id'], message: /^id "cabin" is already used by account 1 of accounts/ });
    // While the block is being filled in, too.
    expect(one({ platform: 'LockAccess', accounts: [{ id: 'cabin' }, { id: 'cabin' }] })).toMatchObject({ path: ['accounts', 1, 'id'], message: /already used/ });
  });

  it('for complete blocks it agrees with the plugin\'s own checkConfig: no problems exactly when the plugin takes every entry', () => {
    fc.assert(fc.property(
      fc.integer({ min: -10, max: 4000 }), fc.integer({ min: -5, max: 70_000 }), fc.string({ maxLength: 3 }),
      (motion, port, lockId) => {
        const block = { ...complete, webhook: { ...complete.webhook, listenPort: port }, locks: [{ id: lockId }], doorbells: [{ id: 'BELL-1', motionTimeoutSeconds: motion }] };
        const check = checkConfig(block);
        expect(configProblems(block).length === 0).toBe(check.ok && check.disabled.length === 0);
      },
    ));
  });
});
