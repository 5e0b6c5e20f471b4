// user:password in webhook.publicUrl never reaches a log line or the status file.
import { describe, expect, it } from 'vitest';

import { redactUrlIn, withoutCredentials } from '../../src/util/redact-url.js';

describe('addresses in (webhook.publicUrl) addresses without credentials', () => {
  it('drops user and password, keeps the rest', () => {
    expect(withoutCredentials('https://hb:s3cret@home.example.net:8443/lock-access/health')).toBe('https://home.example.net:8443/lock-access/health');
    expect(withoutCredentials('https://home.example.net/lock-access')).toBe('https://home.example.net/lock-access');
  });

  it('an address that does not parse still loses what sits before an @', () => {
    expect(withoutCredentials('https://hb:s3cret@ bad host/x')).toBe('https:// bad host/x');
  });

  it('replaces the address inside a message', () => {
    const url = 'https://hb:s3cret@home.example.net/lock-access/health';
    expect(redactUrlIn(`Nothing answered at ${url} (ECONNREFUSED).`, url)).toBe('Nothing answered at https://home.example.net/lock-access/health (ECONNREFUSED).');
  });
});
