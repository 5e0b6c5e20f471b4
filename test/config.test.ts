import { describe, expect, it } from 'vitest';

import { callbackUrls, checkConfig, listenerPrefix, peopleOf } from '../src/config.js';

const complete = {
  platform: 'LockAccess',
  apiKey: 'key',
  clientId: 'client',
  clientSecret: 'secret',
  baseUrl: 'https://api.example.com',
  authUrl: 'https://auth.example.com',
  webhook: { publicUrl: 'https://home.example.net/lock-access' },
};

describe('config (design section 3)', () => {
  it('with only {"platform": "LockAccess"} names every missing field', () => {
    const check = checkConfig({ platform: 'LockAccess' });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.missing).toEqual(['apiKey', 'clientId', 'clientSecret', 'baseUrl', 'authUrl', 'webhook.publicUrl']);
  });

  it('applies the defaults of the design', () => {
    const check = checkConfig(complete);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.webhook).toMatchObject({ listenHost: '0.0.0.0', listenPort: 8582, toleranceSeconds: 300 });
    expect(check.config).toMatchObject({ name: 'Lock Access', locks: [], doorbells: [], userWebhook: true, discoverDevices: true, refreshStateOnStart: true });
    expect(check.warnings).toEqual([]);
  });

  it('names the field and says what to fix for a wrong value', () => {
    const check = checkConfig({ ...complete, webhook: { publicUrl: 'home.example.net', listenPort: 70000 } });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.join('\n')).toMatch(/webhook\.publicUrl must be a full http\(s\) address/);
    expect(check.problems.join('\n')).toMatch(/webhook\.listenPort must be 1 to 65535/);
  });

  it('refuses an API key padded with spaces without echoing it', () => {
    const check = checkConfig({ ...complete, apiKey: ' hunter2-key ' });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    const text = check.problems.join('\n');
    expect(text).toMatch(/apiKey has spaces/);
    expect(text).not.toContain('hunter2');
  });

  it('accepts an http publicUrl with a warning (local testing only)', () => {
    const check = checkConfig({ ...complete, webhook: { publicUrl: 'http://127.0.0.1:8582/x' } });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.warnings.join()).toMatch(/local testing/);
  });

  it('a lock entry without id is named', () => {
    const check = checkConfig({ ...complete, locks: [{ name: 'x' }] });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.join()).toMatch(/locks\[0\]\.id/);
  });

  it('derives the listener prefix and the registered callback URLs from publicUrl', () => {
    expect(listenerPrefix('https://h.example/lock-access/')).toBe('/lock-access');
    expect(listenerPrefix('https://h.example')).toBe('');
    const urls = callbackUrls('https://h.example/lock-access/');
    expect(urls.lock('L 1')).toBe('https://h.example/lock-access/lock/L%201');
    expect(urls.doorbell('D1')).toBe('https://h.example/lock-access/doorbell/D1');
    expect(urls.user()).toBe('https://h.example/lock-access/user');
  });
});

describe('config: who and how (design 7b)', () => {
  it('people and doorSensorOnly are optional; a person without a name is shown by their userId', () => {
    const check = checkConfig({ ...complete, locks: [{ id: 'L1', doorSensorOnly: true }], people: [{ userId: 'u-1', name: 'Jamie' }, { userId: 'u-2' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks[0]?.doorSensorOnly).toBe(true);
    expect(peopleOf(check.config)).toEqual([{ userId: 'u-1', name: 'Jamie' }, { userId: 'u-2', name: 'u-2' }]);
    const plain = checkConfig(complete);
    expect(plain.ok && plain.config.people).toEqual([]);
  });

  it('the same userId twice: the first wins, with a warning (the config still works)', () => {
    const check = checkConfig({ ...complete, people: [{ userId: 'u-1', name: 'Jamie' }, { userId: 'u-1', name: 'Jay' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(peopleOf(check.config)).toEqual([{ userId: 'u-1', name: 'Jamie' }]);
    expect(check.warnings.join()).toMatch(/same userId more than once/);
  });

  it('a person without userId is named', () => {
    const check = checkConfig({ ...complete, people: [{ name: 'Jamie' }] });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.join()).toMatch(/people\[0\]\.userId/);
  });
});
