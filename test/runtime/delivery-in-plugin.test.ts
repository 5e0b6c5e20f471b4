// Push that never goes silently deaf, with the whole plugin on fake time: the platform as Homebridge
// constructs it (test/harness/in-process.ts) against the simulator over real HTTP. The service loses
// every registration; within the check period (1 minute, the shortest a user can set) plus the 30 s
// wait, the log says events are not arriving, "Lock Access Events Stopped" opens and every
// registration has been sent again; one verified callback closes the sensor again at once. Fake
// time instead of the 90 s a real Homebridge needed; the sensor on a paired bridge, and its removal
// with webhook.deliverySensor false, are read through HAP in test/e2e/guard.test.ts.
import hap from '@homebridge/hap-nodejs';
import { describe, expect, it } from 'vitest';

import { eventually, fireAccepted } from '../harness/e2e-session.js';
import { freePort } from '../harness/homebridge.js';
import { startInProcess } from '../harness/in-process.js';
import { startSimulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { deliveryBed } from './delivery-bed.js';

const { Service: S } = hap;

const SENSOR = 'Lock Access Events Stopped';

const bed = deliveryBed(async () => {
  const sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, lockState: 'locked' }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  const listenPort = await freePort();
  const base = simPlatformConfig(sim, listenPort);
  const plugin = await startInProcess({ platform: simPlatformConfig(sim, listenPort, {
    webhook: { ...(base.webhook as Record<string, unknown>), deliveryCheckMinutes: 1 },
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
    discoverDevices: false,
    userWebhook: true,
    refreshStateOnStart: false,
  }) });
  await eventually(() => Promise.resolve(sim.registrations().length >= 3 ? true : undefined), '3 webhook registrations', 30_000, () => plugin.lines.map((line) => line.message));
  return { sim, plugin };
});
const { within, sensorValue } = bed;

describe('the delivery watch inside the plugin, on fake time', () => {
  it('"Lock Access Events Stopped" is on a bridge-level accessory "Lock Access" and reads 0 (closed) before anything is known', async () => {
    const accessory = bed.plugin.accessory('Lock Access');
    expect(accessory?.getService(S.ContactSensor)?.displayName).toBe(SENSOR);
    expect(await sensorValue()).toBe(0);
  });

  it('the service lost the registrations: within the period plus 30 s the log says not arriving, the sensor reads 1, and every registration was sent again', async () => {
    const lostAt = Date.now();
    expect(bed.sim.loseRegistrations()).toBe(3);
    // The first check comes a minute after the last callback, its wait 30 s later; then every
    // registration is sent again at once.
    await within(95_000, () => (bed.sim.registrations().length === 3 && bed.sim.registrations().every((r) => r.updatedAt >= lostAt) ? true : undefined), 'the registrations sent again');
    // The warning waits (up to 15 s) for the answers, which are real I/O: from here time runs only
    // as fast as real time, so a loaded machine cannot outrun them with fake seconds.
    const warning = await eventually(() => Promise.resolve(bed.plugin.lines.find((line) => /Events from Lock Access are not arriving/.test(line.message))), 'the warning', 30_000, () => bed.plugin.lines.map((line) => line.message));
    expect(warning.level).toBe('warn');
    expect(warning.message).toMatch(/a status request for Front Door brought no callback within 30 s/);
    expect(warning.message).toMatch(/Checked: every webhook registration was sent again \(3 confirmed\); the public address self-check passes/);
    expect(warning.message).toMatch(/Send a test event from the plugin settings/);
    expect(await sensorValue()).toBe(1);
    const again = bed.sim.registrations();
    expect(again.map((r) => `${r.kind}:${r.kind === 'user' ? 'account' : r.scope}`).sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-1', 'user:account']);
    expect(again.every((r) => r.updatedAt >= lostAt)).toBe(true);
  });

  it('one verified callback sets it back to 0 at once (no further check needed), with one info line', async () => {
    await fireAccepted(bed.sim, 'unlock', { lockId: 'LOCK-1', by: 'keypad' });
    // Time runs only at real speed here, far below the next check (a minute away): only the callback can close it.
    await eventually(async () => ((await sensorValue()) === 0 ? true : undefined), 'the sensor back at 0');
    const lines = bed.plugin.lines.filter((line) => /Events from Lock Access arrive again/.test(line.message));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe('info');
    expect(lines[0]?.message).toMatch(/arrive again \(a callback for Front Door\)/);
  });
});
