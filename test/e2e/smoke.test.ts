// the built plugin loads in a real Homebridge, stays calm with a broken or unreachable
// config, and shuts down cleanly.
import { afterEach, describe, expect, it } from 'vitest';

import { freePort, startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';

const running: RunningHomebridge[] = [];
afterEach(async () => {
  for (const hb of running.splice(0)) {
    await hb.stop();
    await hb.cleanup();
  }
});

describe('Homebridge smoke test (a broken config never crashes Homebridge)', () => {
  it('with only {"platform": "LockAccess"} logs the missing fields once and keeps running', async () => {
    const hb = await startHomebridge({ platforms: [{ platform: 'LockAccess' }] });
    running.push(hb);
    const line = await hb.waitForLog(/Lock Access is not configured/);
    expect(line).toContain('apiKey, clientId, clientSecret, baseUrl, authUrl, webhook.publicUrl');
    await hb.waitForLog(/Homebridge v\S+ .*is running on port/);
    expect(hb.logs.filter((l) => l.includes('Lock Access is not configured'))).toHaveLength(1);
    expect(hb.logs.join('\n')).not.toMatch(/listening|webhook listener/i);
    expect(hb.running).toBe(true);
    const end = await hb.stop();
    expect(end.signal === 'SIGTERM' || end.code === 0 || end.code === 143).toBe(true);
    expect(hb.logs.join('\n')).not.toMatch(/Error: |Unhandled|TypeError/);
  });

  it('with a config pointing at an unreachable service starts, serves the listener, keeps running and stops cleanly', async () => {
    const listenPort = await freePort();
    const hb = await startHomebridge({
      platforms: [
        {
          platform: 'LockAccess',
          apiKey: 'smoke-api-key-0123456789',
          clientId: 'smoke-client',
          clientSecret: 'smoke-client-secret-0123456789',
          refreshToken: 'smoke-refresh-token-0123456789',
          baseUrl: 'http://127.0.0.1:9/api',
          authUrl: 'http://127.0.0.1:9/oauth',
          webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort },
          locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
          discoverDevices: true,
        },
      ],
    });
    running.push(hb);
    await hb.waitForLog(/Webhook listener ready on 127\.0\.0\.1:/);
    await hb.waitForLog(/Homebridge v\S+ .*is running on port/);
    const health = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    // The cloud outage is reported in words, and Homebridge keeps running.
    await hb.waitForLog(/could not|cannot|not reach|unreachable|failed/i);
    expect(hb.running).toBe(true);
    const text = hb.logs.join('\n');
    for (const secret of ['smoke-api-key-0123456789', 'smoke-client-secret-0123456789', 'smoke-refresh-token-0123456789']) expect(text).not.toContain(secret);
    await hb.stop();
    expect(hb.logs.join('\n')).not.toMatch(/Unhandled|TypeError|ReferenceError/);
  });
});
