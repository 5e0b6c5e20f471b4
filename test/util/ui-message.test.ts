import { describe, expect, it } from 'vitest';

import { fillTemplate, LEGACY_MESSAGE_CODE, legacyMessage, messageCatalog, uiMessage, uiMessageSchema } from '../../src/util/ui-message.js';

describe('a message for the page: {code, params, text}', () => {
  const make = messageCatalog({
    'link.linked': 'Linked to your Lock Access account.',
    'registration.failed': 'The {kind} {id} could not be registered (HTTP {status}).',
    'devices.count': { one: '{count} device', other: '{count} devices' },
  });

  it('carries the code, the params and the English sentence with the params filled in', () => {
    expect(make('link.linked')).toEqual({ code: 'link.linked', params: {}, text: 'Linked to your Lock Access account.' });
    expect(make('registration.failed', { kind: 'lock', id: 'L1', status: 503 })).toEqual({
      code: 'registration.failed',
      params: { kind: 'lock', id: 'L1', status: 503 },
      text: 'The lock L1 could not be registered (HTTP 503).',
    });
  });

  it('chooses the English plural form by the count param', () => {
    expect(make('devices.count', { count: 1 }).text).toBe('1 device');
    expect(make('devices.count', { count: 0 }).text).toBe('0 devices');
    expect(make('devices.count', { count: 2 }).text).toBe('2 devices');
  });

  it('leaves a placeholder without a param as it is, so a missing param shows', () => {
    expect(fillTemplate('At {time} from {who}', { time: '10:00' })).toBe('At 10:00 from {who}');
  });

  it('validates: a dotted code, params of numbers and strings only', () => {
    const schema = uiMessageSchema();
    expect(schema.safeParse(uiMessage('status.x', { n: 1, s: 'a' }, 'T')).success).toBe(true);
    expect(schema.safeParse({ code: 'nodots', params: {}, text: 'T' }).success).toBe(false);
    expect(schema.safeParse({ code: 'a.b', params: { p: true }, text: 'T' }).success).toBe(false);
    expect(schema.safeParse({ code: 'a.b', params: {}, text: 1 }).success).toBe(false);
  });

  it('an older sentence becomes a message of the legacy code, which shows its text', () => {
    expect(legacyMessage('Linked.')).toEqual({ code: LEGACY_MESSAGE_CODE, params: {}, text: 'Linked.' });
    expect(uiMessageSchema().safeParse(legacyMessage('x')).success).toBe(true);
  });
});
