import { describe, expect, it } from 'vitest';

import { buildDiagnostics, scrub } from '../../src/status/diagnostics.js';

const NOW = 1_800_000_000_000;
const SECRETS = {
  apiKey: 'ak_live_5f3c9a1b2d4e6f708192a3b4',
  clientSecret: 'cs_9f8e7d6c5b4a39281706f5e4d3',
  refreshToken: 'rt.eyJhbGciOiJIUzI1NiJ9.refresh-part-7766',
  accessToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.access-sig-5544',
  newRefresh: 'rt.rotated-refresh-token-998877',
  newAccess: 'eyJhbGciOiJIUzI1NiJ9.rotated-access-112233',
  webhookToken: 'whk_0123456789abcdef0123456789abcdef',
  proxyPassword: 'proxy-pass-4242',
  email: 'jamie.guest@example.com',
  phone: '+1 (555) 867-5309',
  pin: '482913',
};

function realisticInput() {
  const config = {
    platform: 'LockAccess', name: 'Lock Access',
    apiKey: SECRETS.apiKey, clientId: 'client-123', clientSecret: SECRETS.clientSecret,
    refreshToken: SECRETS.refreshToken, accessToken: SECRETS.accessToken,
    baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com',
    webhook: { publicUrl: `https://proxyuser:${SECRETS.proxyPassword}@home.example.net/lock-access`, listenPort: 8582 },
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
  };
  const tokens = {
    version: 1, generation: 7, rotations: 3, state: 'linked',
    refreshToken: SECRETS.newRefresh, accessToken: SECRETS.newAccess,
    accessTokenIssuedAt: NOW - 3_600_000, accessTokenExpiresAt: NOW + 86_400_000, linkedAt: NOW - 86_400_000,
    pendingAccessToken: { token: SECRETS.newAccess, issuedAt: NOW },
  };
  const events = [
    { deviceKind: 'lock', deviceId: 'LOCK-1', deviceName: 'Front Door', kind: 'pinManaged', at: NOW, text: `PIN ${SECRETS.pin} added for Jamie (${SECRETS.email}, ${SECRETS.phone})`, pin: SECRETS.pin },
    { deviceKind: 'lock', deviceId: 'LOCK-1', deviceName: 'Front Door', kind: 'lockState', at: NOW - 1, text: 'Unlocked by Jamie Guest at the keypad', userId: 'u-jamie' },
  ];
  const status = {
    versions: { plugin: '0.1.0', homebridge: '2.4.0', node: 'v24.0.0' },
    selfCheck: { state: 'ok', url: 'https://home.example.net/lock-access/health', message: 'ok', checkedAt: NOW },
    delivery: { state: 'notArriving', since: NOW - 60_000, checkEveryMinutes: 360, checked: { registrations: 'every webhook registration was sent again (2 confirmed)', selfCheck: 'the public address self-check passes' } },
    receiver: { listening: true, accepted: 12, duplicates: 1, rejected: { 'stale-timestamp': 2 }, lastRejection: { at: NOW, reason: 'stale-timestamp', clockOffsetMs: 400_000 }, lastCallbacks: {} },
    devices: [{ kind: 'lock', id: 'LOCK-1', name: 'Front Door' }],
  };
  return {
    versions: { plugin: '0.1.0', homebridge: '2.4.0', node: 'v24.0.0' },
    generatedAt: NOW,
    config,
    tokens,
    registrations: [{ kind: 'lock', id: 'LOCK-1', clientId: 'client-123', url: 'https://home.example.net/lock-access/lock/LOCK-1', tokenFingerprint: 'fp', state: 'registered' }],
    status,
    support: { testEvents: [{ lockId: 'LOCK-1', startedAt: NOW, state: 'passed', message: 'ok', tookMs: 800 }] },
    events,
    secrets: [SECRETS.apiKey, SECRETS.clientSecret, SECRETS.refreshToken, SECRETS.accessToken, SECRETS.newRefresh, SECRETS.newAccess, SECRETS.webhookToken, SECRETS.proxyPassword],
  };
}

describe('the diagnostics file for a bug report', () => {
  it('no secret of a realistic config, token file, webhook token, proxy password, e-mail, phone number or PIN survives', () => {
    const text = JSON.stringify(buildDiagnostics(realisticInput()));
    for (const [name, value] of Object.entries(SECRETS)) expect(text, name).not.toContain(value);
    expect(text).not.toContain('867');
  });

  it('keeps what helps: versions, link state and token ages, registrations, whether events arrive, self-check, test events, rejections and clock offset, listener counters, events', () => {
    const report = buildDiagnostics(realisticInput());
    expect(report).toMatchObject({
      versions: { plugin: '0.1.0', homebridge: '2.4.0', node: 'v24.0.0' },
      link: { state: 'linked', hasRefreshToken: true, hasAccessToken: true, accessTokenAgeSeconds: 3_600, accessTokenExpiresInSeconds: 86_400, rotations: 3 },
      config: { apiKey: '[redacted]', clientId: 'client-123', webhook: { publicUrl: 'https://home.example.net/lock-access' } },
      registrations: [{ id: 'LOCK-1', state: 'registered' }],
      selfCheck: { state: 'ok' },
      delivery: { state: 'notArriving', since: NOW - 60_000, checked: { registrations: 'every webhook registration was sent again (2 confirmed)' } },
      testEvents: [{ state: 'passed', tookMs: 800 }],
      listener: { accepted: 12, rejected: { 'stale-timestamp': 2 }, clockOffsetMs: 400_000 },
      events: [{ text: 'PIN [digits] added for Jamie ([e-mail], [phone])' }, { userId: 'u-jamie' }],
    });
    const events = report.events as Record<string, unknown>[];
    expect(events).toHaveLength(2);
    expect(events[0]).not.toHaveProperty('pin');
  });

  it('with several accounts, names the accounts whose events are not arriving, and keeps each extra account\'s name, link and delivery', () => {
    const input = realisticInput();
    const status = {
      ...(input.status as Record<string, unknown>),
      delivery: { state: 'arriving', since: 1, checkEveryMinutes: 360 },
      accounts: {
        cabin: { name: 'Cabin', link: { state: 'linked', message: 'Linked.' }, delivery: { state: 'notArriving', since: 2, checkEveryMinutes: 360 } },
        flat: { name: 'Flat', link: { state: 'linked', message: 'Linked.' }, delivery: { state: 'arriving', since: 3, checkEveryMinutes: 360 } },
      },
    };
    const report = buildDiagnostics({ ...input, status }) as { eventsNotArriving: string[]; accounts: Record<string, { delivery: { state: string } }> };
    expect(report.eventsNotArriving).toEqual(['Cabin (cabin)']);
    expect(report.accounts.cabin?.delivery.state).toBe('notArriving');
    const mainToo = buildDiagnostics({ ...input, status: { ...status, delivery: { state: 'notArriving', since: 1, checkEveryMinutes: 360 } } }) as { eventsNotArriving: string[] };
    expect(mainToo.eventsNotArriving).toEqual(['main account', 'Cabin (cabin)']);
  });

  it('keeps at most the last 200 events', () => {
    const input = realisticInput();
    const many = Array.from({ length: 500 }, (_, i) => ({ deviceId: 'LOCK-1', kind: 'lockState', at: NOW - i, text: `event ${i}` }));
    expect((buildDiagnostics({ ...input, events: many }) as { events: unknown[] }).events).toHaveLength(200);
  });

  it('scrub: a secret value is taken out wherever it stands; numbers and ids stay', () => {
    expect(scrub({ note: `key=${SECRETS.apiKey}`, deviceId: 'LOCK-12345678', at: NOW }, [SECRETS.apiKey])).toEqual({ note: 'key=[redacted]', deviceId: 'LOCK-12345678', at: NOW });
  });

  it('motion stills are signed links: their query string and user info are taken out wherever a URL stands, the host and path stay', () => {
    const signed = 'https://cam:pw-7788@media.example.com/stills/BELL-1/a.jpg?X-Amz-Credential=AKIA4455%2F20261125&X-Amz-Signature=9f8e7d6c5b4a&Expires=1800000000#frag';
    const input = realisticInput();
    const report = buildDiagnostics({
      ...input,
      events: [{ deviceKind: 'doorbell', deviceId: 'BELL-1', kind: 'motion', at: NOW, text: 'Motion', imageUrl: signed }],
      status: { ...input.status, devices: [{ kind: 'doorbell', id: 'BELL-1', lastMotion: { imageUrl: signed, fallbackImageUrl: 'http://media.example.com/b.jpg?sig=55aa66bb' }, note: `could not load the motion picture (${signed}): 403` }] },
    });
    const text = JSON.stringify(report);
    for (const part of ['AKIA4455', '9f8e7d6c5b4a', 'Expires=', 'pw-7788', 'cam:', 'frag', '55aa66bb']) expect(text, part).not.toContain(part);
    expect((report.events as { imageUrl: string }[])[0]?.imageUrl).toBe('https://media.example.com/stills/BELL-1/a.jpg?[redacted]');
    expect(text).toContain('could not load the motion picture (https://media.example.com/stills/BELL-1/a.jpg?[redacted]): 403');
    expect(text).toContain('"fallbackImageUrl":"http://media.example.com/b.jpg?[redacted]"');
  });

  it('a URL without a query string or user info is left as it is', () => {
    expect(scrub({ url: 'https://home.example.net/lock-access/health', note: 'see https://example.com/docs/x.html.' }, [])).toEqual({ url: 'https://home.example.net/lock-access/health', note: 'see https://example.com/docs/x.html.' });
  });
});

describe('the diagnostics file with the built-in ngrok tunnel', () => {
  const AUTHTOKEN = '2abcDEFghiJKLmnoPQRstuVWX_1234567890abcdefghij';

  it('the authtoken is redacted from the config and from anywhere else; the tunnel\'s address and state stay', () => {
    const input = realisticInput();
    const config = { ...input.config, webhook: { listenPort: 8582, tunnel: { provider: 'ngrok', authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' } } };
    const status = {
      ...input.status,
      publicAddress: { via: 'ngrok', url: 'https://calm-otter.ngrok-free.app', tunnel: { state: 'failed', message: `ngrok refused the authtoken ${AUTHTOKEN}`, since: NOW } },
    };
    const report = buildDiagnostics({ ...input, config, status, secrets: [...input.secrets, AUTHTOKEN] });
    expect(JSON.stringify(report)).not.toContain(AUTHTOKEN);
    expect(report).toMatchObject({
      config: { webhook: { tunnel: { provider: 'ngrok', authtoken: '[redacted]', domain: 'calm-otter.ngrok-free.app' } } },
      publicAddress: { via: 'ngrok', url: 'https://calm-otter.ngrok-free.app', tunnel: { state: 'failed' } },
    });
  });
});
