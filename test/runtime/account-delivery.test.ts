// The delivery watch per account, with the whole plugin on fake time (test/harness/in-process.ts)
// against the simulator with a main account and a "Cabin" account. The service loses Cabin's
// registrations only: Cabin's own probe finds nothing, so Cabin alone is "not arriving" (its warning
// names it, only its registrations are sent again, the status file says so under accounts.cabin),
// the one "Lock Access Events Stopped" sensor opens, and the main account stays as it was.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { eventually, fireAccepted } from '../harness/e2e-session.js';
import { realPause } from '../harness/fake-time-steps.js';
import { freePort } from '../harness/homebridge.js';
import { startInProcess } from '../harness/in-process.js';
import { startSimulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { deliveryBed } from './delivery-bed.js';

const bed = deliveryBed(async () => {
  const sim = await startSimulator({
    accounts: [{ id: 'cabin', name: 'Cabin' }],
    locks: [{ id: 'L1', name: 'Front Door', lockState: 'locked' }, { id: 'L2', name: 'Cabin Door', lockState: 'locked', accounts: ['cabin'] }],
  });
  const cabin = sim.accountOf('cabin');
  const listenPort = await freePort();
  const base = simPlatformConfig(sim, listenPort);
  const plugin = await startInProcess({ platform: simPlatformConfig(sim, listenPort, {
    webhook: { ...(base.webhook as Record<string, unknown>), deliveryCheckMinutes: 1 },
    locks: [{ id: 'L1', name: 'Front Door' }],
    discoverDevices: false,
    userWebhook: false,
    refreshStateOnStart: false,
    accounts: [{ id: 'cabin', name: 'Cabin', apiKey: cabin.apiKey, clientId: cabin.clientId, clientSecret: cabin.clientSecret, refreshToken: cabin.refreshToken, locks: [{ id: 'L2', name: 'Cabin Door' }] }],
  }) });
  await eventually(() => Promise.resolve(sim.registrations().length >= 2 ? true : undefined), '2 webhook registrations', 30_000, () => plugin.lines.map((line) => line.message));
  return { sim, plugin };
});
const { within, sensorValue } = bed;

interface StatusFile { delivery?: { state: string }; accounts?: Record<string, { delivery?: { state: string; lastCheck?: { lockId?: string } } }> }
const statusFile = async (): Promise<StatusFile> => JSON.parse(await readFile(join(bed.plugin.storagePath, 'lock-access', 'status.json'), 'utf8')) as StatusFile;

describe('the delivery watch per account', () => {
  it('one account\'s registrations lost: that account alone is "not arriving" (named in the warning and under accounts.<id>.delivery, only its registrations sent again); the one sensor opens', async () => {
    const mainBefore = bed.sim.registrations().find((r) => r.account === 'main');
    const lostAt = Date.now();
    expect(bed.sim.loseRegistrations('cabin')).toBe(1);
    // Each account's check comes a minute after the start, its wait 30 s later.
    await within(120_000, () => Promise.resolve(bed.sim.registrations().find((r) => r.account === 'cabin' && r.updatedAt >= lostAt)), 'Cabin\'s registration sent again');
    const warning = await eventually(() => Promise.resolve(bed.plugin.lines.find((line) => /Events from Lock Access are not arriving/.test(line.message))), 'the warning', 30_000, () => bed.plugin.lines.map((line) => line.message));
    expect(warning.level).toBe('warn');
    expect(warning.message).toMatch(/^Cabin \(cabin\): Events from Lock Access are not arriving/);
    expect(warning.message).toMatch(/a status request for Cabin Door brought no callback/);
    expect(await sensorValue()).toBe(1);
    // The main account's probe came back on its own path: its registration was not sent again, and no line blames it.
    expect(bed.sim.registrations().find((r) => r.account === 'main')?.updatedAt).toBe(mainBefore?.updatedAt);
    expect(bed.plugin.lines.filter((line) => /not arriving/.test(line.message) && !line.message.startsWith('Cabin (cabin)'))).toEqual([]);
    const status = await eventually(async () => {
      const file = await statusFile();
      return file.accounts?.cabin?.delivery?.state === 'notArriving' ? file : undefined;
    }, 'accounts.cabin.delivery not arriving in status.json');
    expect(status.accounts?.cabin?.delivery?.lastCheck?.lockId).toBe('L2');
    expect(status.delivery?.state).not.toBe('notArriving');
  });

  it('a callback on that account\'s path closes the sensor again; a callback on another account\'s path does not', async () => {
    await fireAccepted(bed.sim, 'unlock', { lockId: 'L1', by: 'keypad' });
    await realPause(200);
    expect(await sensorValue()).toBe(1);
    await fireAccepted(bed.sim, 'unlock', { lockId: 'L2', by: 'keypad', account: 'cabin' });
    await eventually(async () => ((await sensorValue()) === 0 ? true : undefined), 'the sensor back at 0');
    const lines = bed.plugin.lines.filter((line) => /Events from Lock Access arrive again/.test(line.message));
    expect(lines.map((line) => line.message)).toEqual([expect.stringMatching(/^Cabin \(cabin\): Events from Lock Access arrive again \(a callback for Cabin Door\)/)]);
  });
});
