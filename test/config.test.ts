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

describe('config', () => {
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

  it('the delivery check: every 360 minutes with its sensor by default; 0 turns it off; otherwise a whole number of minutes, 1 to a week', () => {
    const check = checkConfig(complete);
    expect(check.ok && check.config.webhook).toMatchObject({ deliveryCheckMinutes: 360, deliverySensor: true });
    for (const minutes of [0, 1, 10080]) {
      const ok = checkConfig({ ...complete, webhook: { ...complete.webhook, deliveryCheckMinutes: minutes, deliverySensor: false } });
      expect(ok.ok && ok.config.webhook).toMatchObject({ deliveryCheckMinutes: minutes, deliverySensor: false });
    }
    for (const [minutes, message] of [[-1, /webhook\.deliveryCheckMinutes must be 0 \(off\) or 1 to 10080/], [10081, /must be 0 \(off\) or 1 to 10080/], [1.5, /whole number of minutes/], ['60', /must be a number of minutes/]] as const) {
      const refused = checkConfig({ ...complete, webhook: { ...complete.webhook, deliveryCheckMinutes: minutes } });
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.problems.join('\n')).toMatch(message);
    }
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

  it('a lock entry without id disables that entry alone, named with the field and the fix', () => {
    const check = checkConfig({ ...complete, locks: [{ name: 'Shed' }, { id: 'L2', name: 'Back Door' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks.map((l) => l.id)).toEqual(['L2']);
    expect(check.disabled).toHaveLength(1);
    expect(check.disabled[0]).toMatch(/^Lock 1 of locks \(Shed\) is left out until you fix it in the plugin settings: .*id.*copy it from the Lock Access app/);
    expect(check.disabled[0]).toMatch(/Everything else runs\.$/);
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

describe('config: who and how', () => {
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

  it('a person without userId disables that person alone', () => {
    const check = checkConfig({ ...complete, people: [{ name: 'Jamie' }, { userId: 'u-2', name: 'Sam' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(peopleOf(check.config)).toEqual([{ userId: 'u-2', name: 'Sam' }]);
    expect(check.disabled.join()).toMatch(/^Person 1 of people \(Jamie\) is left out .*userId/);
  });
});

describe('config: one bad entry disables that entry alone', () => {
  it('motionTimeoutSeconds 0 on one doorbell leaves the other devices and the plugin running', () => {
    const check = checkConfig({
      ...complete,
      locks: [{ id: 'L1', name: 'Front Door' }],
      doorbells: [{ id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 0 }, { id: 'D2', name: 'Side Bell' }],
    });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks.map((l) => l.id)).toEqual(['L1']);
    // The refused entry stands in as hidden, so discovery cannot bring D1 back.
    expect(check.config.doorbells.map((d) => [d.id, d.hidden])).toEqual([['D1', true], ['D2', false]]);
    expect(check.disabled).toEqual([
      'Doorbell 1 of doorbells (id "D1", Front Doorbell) is left out until you fix it in the plugin settings: motionTimeoutSeconds must be at least 1. Everything else runs.',
    ]);
  });

  it('several mistakes in one entry are named in one sentence; a blank id is refused after trimming', () => {
    const check = checkConfig({ ...complete, doorbells: [{ id: '   ', motionTimeoutSeconds: 99999 }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.doorbells).toEqual([]);
    expect(check.disabled).toHaveLength(1);
    expect(check.disabled[0]).toMatch(/the doorbell id is empty.*motionTimeoutSeconds must be at most 3600/);
  });

  it('ids are trimmed', () => {
    const check = checkConfig({ ...complete, locks: [{ id: '  L1 \n' }], doorbells: [{ id: ' D1' }], people: [{ userId: ' u-1 ' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks[0]?.id).toBe('L1');
    expect(check.config.doorbells[0]?.id).toBe('D1');
    expect(check.config.people[0]?.userId).toBe('u-1');
  });

  it('a list that is no list is ignored with an error; the plugin runs', () => {
    const check = checkConfig({ ...complete, locks: 'L1', doorbells: [{ id: 'D1' }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks).toEqual([]);
    expect(check.config.doorbells.map((d) => d.id)).toEqual(['D1']);
    expect(check.disabled).toEqual(['locks must be a list of lock entries; it is ignored until you fix it in the plugin settings.']);
  });

  it('a mistake in the account or webhook settings still idles the plugin, and names only those', () => {
    const check = checkConfig({ ...complete, webhook: { publicUrl: 'https://h.example/x', listenPort: 0 }, doorbells: [{ id: 'D1', motionTimeoutSeconds: 0 }] });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual(['webhook.listenPort must be 1 to 65535']);
  });
});

describe('config: webhook.publicUrl takes no query string or fragment', () => {
  it.each(['https://home.example.net/la?key=abc', 'https://home.example.net/la#frag', 'https://home.example.net/la?'])('%s is refused with the reason', (publicUrl) => {
    const check = checkConfig({ ...complete, webhook: { publicUrl } });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.join()).toMatch(/webhook\.publicUrl must not contain \? or #: the plugin appends \/lock\/ID/);
    expect(check.problems.join()).not.toContain('abc');
  });
});

describe('config: a webhook.publicUrl path with letters of any language or a space', () => {
  it.each([
    ['https://home.example.net/Haustür', '/Haustür', 'https://home.example.net/Haust%C3%BCr'],
    ['https://home.example.net/lock access/', '/lock access', 'https://home.example.net/lock%20access'],
    ['https://home.example.net/Haust%C3%BCr', '/Haustür', 'https://home.example.net/Haust%C3%BCr'],
  ])('%s is accepted, routed under %s and registered as %s', (publicUrl, prefix, registered) => {
    expect(checkConfig({ ...complete, webhook: { publicUrl } }).ok).toBe(true);
    expect(listenerPrefix(publicUrl)).toBe(prefix);
    expect(callbackUrls(publicUrl).lock('L1')).toBe(`${registered}/lock/L1`);
    expect(callbackUrls(publicUrl).health()).toBe(`${registered}/health`);
  });

  it('an address that needs no encoding is registered exactly as configured (an upgrade registers nothing new)', () => {
    expect(callbackUrls('https://Home.Example.net:8443/Lock-Access').user()).toBe('https://Home.Example.net:8443/Lock-Access/user');
  });

  it.each(['%2F', '%2f', '%3F', '%23', '%25'])('an escaped / ? # or %% (%s) in the path is refused, saying what to fix', (escape) => {
    const check = checkConfig({ ...complete, webhook: { publicUrl: `https://home.example.net/a${escape}b` } });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toEqual([`webhook.publicUrl has ${escape} in its path, an escaped / ? # or %: the plugin cannot route callbacks under such a path. Choose a path without it, such as https://home.example.net/lock-access (letters of any language and spaces are fine)`]);
  });

  it('a % that starts no escape is refused, saying what to fix', () => {
    const check = checkConfig({ ...complete, webhook: { publicUrl: 'https://home.example.net/100%off' } });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.join()).toMatch(/webhook\.publicUrl has a % in its path that does not start an escape such as %20/);
  });
});

describe('config: the guard options of a lock', () => {
  it('autoLockSeconds 0..3600 and leftOpenSeconds / leftUnlockedSeconds 0 (off) or 10..86400 are taken', () => {
    const check = checkConfig({ ...complete, locks: [{ id: 'L1', doorSensor: true, autoLockSeconds: 30, leftOpenSeconds: 300, leftUnlockedSeconds: 0 }] });
    expect(check.ok && check.config.locks[0]).toMatchObject({ autoLockSeconds: 30, leftOpenSeconds: 300, leftUnlockedSeconds: 0 });
  });

  it.each([
    [{ autoLockSeconds: 3601 }, /autoLockSeconds must be 0 \(off\) to 3600/],
    [{ leftOpenSeconds: 5 }, /leftOpenSeconds must be 0 \(off\) or 10 to 86400/],
    [{ leftUnlockedSeconds: 86401 }, /leftUnlockedSeconds must be 0 \(off\) or 10 to 86400/],
  ])('%o disables that lock with the reason', (options, reason) => {
    const check = checkConfig({ ...complete, locks: [{ id: 'L1', ...options }] });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.locks).toEqual([expect.objectContaining({ id: 'L1', hidden: true })]);
    expect(check.disabled.join()).toMatch(reason);
  });
});

describe('config: a mistake never widens what the user asked for', () => {
  const parsed = (raw: Record<string, unknown>) => {
    const check = checkConfig({ ...complete, ...raw });
    if (!check.ok) throw new Error(`refused: ${check.problems.join('; ')}`);
    return check;
  };

  it('an entry that says hidden, with a mistake elsewhere, keeps the device hidden and says why', () => {
    const check = parsed({ locks: [{ id: 'L1', name: 'Shed', hidden: true, autoLockSeconds: -5 }], doorbells: [{ id: 'D1', hidden: true, motionTimeoutSeconds: 0 }] });
    expect(check.config.locks).toEqual([expect.objectContaining({ id: 'L1', hidden: true })]);
    expect(check.config.doorbells).toEqual([expect.objectContaining({ id: 'D1', hidden: true })]);
    expect(check.disabled).toEqual([
      'Lock 1 of locks (id "L1", Shed) stays hidden until you fix it in the plugin settings: autoLockSeconds must be 0 (off) to 3600. Everything else runs.',
      'Doorbell 1 of doorbells (id "D1") stays hidden until you fix it in the plugin settings: motionTimeoutSeconds must be at least 1. Everything else runs.',
    ]);
  });

  it.each([['the string "true"', 'true'], ['the string "false"', 'false'], ['a number', 1], ['null', null]])('a hidden that is %s keeps the device hidden, and names the fix', (_what, hidden) => {
    const check = parsed({ locks: [{ id: 'L1', hidden }], doorbells: [{ id: 'D1', hidden }] });
    expect(check.config.locks).toEqual([expect.objectContaining({ id: 'L1', hidden: true })]);
    expect(check.config.doorbells).toEqual([expect.objectContaining({ id: 'D1', hidden: true })]);
    expect(check.disabled[0]).toBe('Lock 1 of locks (id "L1") stays hidden until you fix it in the plugin settings: hidden must be true or false (a switch, without quotes). Everything else runs.');
  });

  it('an entry that says doorSensorOnly, with a mistake elsewhere, keeps only the door sensor (with its name, without the faulty options)', () => {
    const check = parsed({ locks: [{ id: 'L1', name: 'Garage', doorSensorOnly: true, leftOpenSeconds: 5 }] });
    expect(check.config.locks).toEqual([{ id: 'L1', name: 'Garage', doorSensor: true, doorSensorOnly: true, hidden: false }]);
    expect(check.disabled).toEqual(['Lock 1 of locks (id "L1", Garage) shows only its door sensor until you fix it in the plugin settings: leftOpenSeconds must be 0 (off) or 10 to 86400. Everything else runs.']);
  });

  it('hidden wins over doorSensorOnly in a refused entry', () => {
    const check = parsed({ locks: [{ id: 'L1', doorSensorOnly: true, hidden: 'yes' }] });
    expect(check.config.locks).toEqual([expect.objectContaining({ id: 'L1', hidden: true })]);
    expect(check.disabled[0]).toMatch(/stays hidden/);
  });

  it('any other refused entry with an id is held out by id, so discovery cannot bring the device back', () => {
    const check = parsed({ locks: [{ id: ' L1 ', name: 'Front Door', autoLockSeconds: 9999 }] });
    expect(check.config.locks).toEqual([expect.objectContaining({ id: 'L1', hidden: true })]);
    expect(check.disabled[0]).toMatch(/^Lock 1 of locks \(id "L1", Front Door\) is left out until you fix it in the plugin settings: autoLockSeconds/);
  });

  it('a device list that is an object (it may hold a hidden entry) switches discovery off, and says why', () => {
    const check = parsed({ locks: { id: 'L1', hidden: true }, doorbells: [{ id: 'D1' }] });
    expect(check.config.locks).toEqual([]);
    expect(check.config.discoverDevices).toBe(false);
    expect(check.config.doorbells.map((d) => d.id)).toEqual(['D1']);
    expect(check.disabled).toEqual(['locks must be a list of lock entries; it is ignored until you fix it in the plugin settings, and devices are not looked up at the service meanwhile, so a device hidden there cannot come back.']);
  });
});
