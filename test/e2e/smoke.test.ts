// Issue 2: the built plugin loads in a real Homebridge, stays calm with a broken or unreachable
// config, and shuts down cleanly.
import { afterEach, describe, expect, it } from 'vitest';

import { startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';

const running: RunningHomebridge[] = [];
afterEach(async () => {
  for (const hb of running.splice(0)) {
    await hb.stop();
    await hb.cleanup();
  }
});

describe('Homebridge smoke test (design section 3: a broken config never crashes Homebridge)', () => {
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
});
