// Config field problems as message codes: the settings page words each in its language from the
// code and params (field names, numbers, values: never English words), the log keeps the English
// sentence, and what to fix travels with the code.
import { describe, expect, it } from 'vitest';

import { checkConfig } from '../../src/config.js';
import { configProblems } from '../../src/settings-ui/config-check.js';
import { fillTemplate, type MessageParams, type UiMessage } from '../../src/util/ui-message.js';
import { readCatalog } from '../settings-ui/catalogs.js';
import { COMPLETE_BLOCK } from './complete-block.js';

const complete = COMPLETE_BLOCK;

const en = readCatalog('en');

/** A message as the English page words it from en.json (nested messages in turn). */
function englishPage(message: UiMessage): string {
  const params: MessageParams = {};
  for (const [name, value] of Object.entries(message.params)) params[name] = typeof value === 'object' ? englishPage(value) : value;
  const template = en[message.code];
  if (template === undefined) throw new Error(`${message.code} is not in en.json`);
  return fillTemplate(template as string, params);
}

/** Codes and params only, nested messages too. */
function coded(message: UiMessage): unknown {
  return { code: message.code, params: Object.fromEntries(Object.entries(message.params).map(([name, value]) => [name, typeof value === 'object' ? coded(value) : value])) };
}

const only = (block: unknown) => {
  const problems = configProblems(block);
  expect(problems).toHaveLength(1);
  const [problem] = problems;
  if (problem === undefined) throw new Error('no problem');
  return problem;
};

describe('config field problems reach the settings page as codes with params', () => {
  const cases: [string, unknown, (string | number)[], unknown][] = [
    ['an escaped slash in the public path', { ...complete, webhook: { publicUrl: 'https://home.example.net/a%2Fb' } }, ['webhook', 'publicUrl'],
      { code: 'config.publicUrl.encodedChars', params: { chars: '%2F' } }],
    ['a query in the public address', { ...complete, webhook: { publicUrl: 'https://home.example.net/la?key=1' } }, ['webhook', 'publicUrl'],
      { code: 'config.publicUrl.query', params: {} }],
    ['a port out of range', { ...complete, webhook: { ...complete.webhook, listenPort: 0 } }, ['webhook', 'listenPort'],
      { code: 'config.field.range', params: { field: 'webhook.listenPort', min: '1', max: '65535' } }],
    ['an extra account\'s empty secret: what to fix is a message of its own', { ...complete, accounts: [{ id: 'cabin', clientSecret: '' }] }, ['accounts', 0, 'clientSecret'],
      { code: 'config.field.empty', params: { field: 'clientSecret', fix: { code: 'config.fix.accountClientSecret', params: {} } } }],
    ['an address that is not one', { ...complete, authUrl: 'auth.example.com' }, ['authUrl'],
      { code: 'config.field.address.notHttp', params: { field: 'authUrl', example: 'https://auth.example.com' } }],
    ['a lock\'s alert out of range', { ...complete, locks: [{ id: 'L1', leftOpenSeconds: 5 }] }, ['locks', 0, 'leftOpenSeconds'],
      { code: 'config.field.offOrRange', params: { field: 'leftOpenSeconds', min: 10, max: 86400 } }],
    ['a doorbell without an id', { ...complete, doorbells: [{ name: 'Gate' }] }, ['doorbells', 0, 'id'],
      { code: 'config.doorbell.idMissing', params: {} }],
    ['video minutes that are not whole', { ...complete, video: { replayMinutes: 1.5 } }, ['video', 'replayMinutes'],
      { code: 'config.field.wholeMinutes', params: { field: 'video.replayMinutes' } }],
    ['a tunnel domain that is not one', { ...complete, webhook: { tunnel: { authtoken: 'tok', domain: 'not a domain' } } }, ['webhook', 'tunnel', 'domain'],
      { code: 'config.tunnel.domain', params: {} }],
    ['an account id that breaks the pattern', { ...complete, accounts: [{ id: 'Cabin' }] }, ['accounts', 0, 'id'],
      { code: 'config.account.idPattern', params: {} }],
    ['an account id an earlier entry uses', { ...complete, accounts: [{ id: 'cabin', name: 'Cabin' }, { id: 'cabin' }] }, ['accounts', 1, 'id'],
      { code: 'config.account.idTaken', params: { id: 'cabin', position: 1, entry: 'id "cabin", Cabin' } }],
    ['zod\'s own words (a string where a switch belongs) get a code of their kind', { ...complete, matter: 'yes' }, ['matter'],
      { code: 'config.field.switch', params: { field: 'matter' } }],
    ['zod\'s own words (an empty listener host)', { ...complete, webhook: { ...complete.webhook, listenHost: '' } }, ['webhook', 'listenHost'],
      { code: 'config.field.notEmpty', params: { field: 'listenHost' } }],
  ];

  it.each(cases)('%s', (_name, block, path, expected) => {
    const problem = only(block);
    expect(problem.path).toEqual(path);
    expect(coded(problem.message)).toEqual(expected);
    // The English page and the log say the same words.
    expect(englishPage(problem.message)).toBe(problem.message.text);
  });

  it('the log keeps the English sentence, with what to fix', () => {
    const check = checkConfig({ ...complete, apiKey: ' key-1' });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual(['apiKey has spaces or line breaks at its start or end: paste it again without them']);
    expect(only({ ...complete, apiKey: 12 }).message.text).toBe('apiKey is missing: copy the API key issued to you by Lock Access into the plugin settings');
  });

  it('params hold no English words: only field names, numbers and config values', () => {
    const blocks = cases.map(([, block]) => block);
    const words = /\b(the|must|is|a|an|of|or|and|to)\b/;
    for (const block of blocks) {
      const walk = (message: UiMessage): void => {
        for (const value of Object.values(message.params)) {
          if (typeof value === 'object') walk(value);
          else expect(String(value)).not.toMatch(words);
        }
      };
      for (const problem of configProblems(block)) walk(problem.message);
    }
  });
});
