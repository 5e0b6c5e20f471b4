import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, startSimulator, type Simulator } from './index.js';
import { api, grant, registration } from './test-helpers.js';
import { testReceiverForFile } from './test-receiver.js';
import { frontDoorDay, ScenarioRun } from './scenario.js';

const receiver = testReceiverForFile();
let sim: Simulator;
let clock: ManualClock;

const allLock = ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'];
const allBell = ['motiondetected', 'videoavailable', 'buttonpush'];

beforeEach(async () => {
  clock = new ManualClock();
  sim = await startSimulator({ clock, locks: [{ id: 'L1', name: 'Front Door', doorSensor: true, keypad: true }], doorbells: [{ id: 'D1', name: 'Front Doorbell' }] });
  const { accessToken } = await grant(sim);
  await api(sim, accessToken, 'POST', '/webhook/L1', registration(`${receiver.url}/lock/L1`, sim.account.clientId, allLock));
  await api(sim, accessToken, 'POST', '/webhook/doorbell/D1', registration(`${receiver.url}/doorbell/D1`, sim.account.clientId, allBell));
  await api(sim, accessToken, 'POST', '/webhook/user', registration(`${receiver.url}/user`, sim.account.clientId, ['lockmembership', 'lifecycle']));
});
afterEach(async () => {
  await sim.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

const bodies = (): Array<Record<string, unknown>> => receiver.received.map((r) => r.body as Record<string, unknown>);

describe('README The service simulator: Named events (sim.fire and POST /_sim/fire)', () => {
  it('every named event reaches a hook and builds its payload from the device model', async () => {
    const expected: Record<string, Record<string, unknown>> = {
      unlock: { EventType: 'operation', Event: 'unlock', Device: 'lock' },
      lock: { EventType: 'operation', Event: 'lock' },
      onetouchlock: { Event: 'onetouchlock', Device: 'keypad' },
      'door-open': { Event: 'open', User: { UserID: 'DoorStateChanged' } },
      'door-closed': { Event: 'closed' },
      'door-ajar': { Event: 'ajar' },
      'door-init': { Event: 'init' },
      'door-unknown': { Event: 'unknown' },
      status: { EventType: 'status' },
      'lock-name-changed': { Event: 'lock_name_changed' },
      'privacy-mode': { Event: 'privacy_mode', Value: true },
      'vacation-mode': { Event: 'vacation_mode', Value: true },
      'keypad-enabled': { Event: 'keypad_enabled', Value: false },
      'pin-managed': { Event: 'keypad_pin_managed' },
      'master-pin-changed': { Event: 'keypad_pin_managed', Pin: {} },
      'keypad-battery': { EventType: 'battery', Event: 'keypad_battery_warning' },
      'lock-battery': { EventType: 'system', warningLevel: 'lock_state_battery_warning_2week' },
      'battery-level': { EventType: 'battery', Event: 'battery_level_warning', DeviceType: 'lock' },
      'bridge-offline': { EventType: 'systemstatus', Event: 'offline', LockID: ['L1'] },
      'bridge-online': { EventType: 'systemstatus', Event: 'online' },
      'clock-drift': { Event: 'lock_log_timestamp_drifted' },
      'lock-clock-reset': { Event: 'lock_log_timestamp_drifted', TimestampDrifted: Date.UTC(2000, 0, 1) },
      'lock-user-add': { EventType: 'authorization', Event: 'lock_user_add' },
      'lock-user-remove': { Event: 'lock_user_remove' },
      'lock-usertype-changed': { Event: 'lock_usertype_changed' },
      'lock-accesstype-changed': { Event: 'lock_accesstype_changed' },
      'doorbell-press': { EventType: 'buttonpush', DoorbellID: 'D1' },
      motion: { EventType: 'doorbell_motion_detected' },
      'video-available': { EventType: 'doorbell_video_upload_available', cause: 'buttonpush' },
      'user-deleted': { EventType: 'lifecycle', Event: 'user_deleted', UserID: sim.account.userId },
    };
    // The lock's clock changing ahead or back to right sends nothing: the service need not notice.
    const silent = ['lock-clock-jump', 'lock-clock-fix'];
    expect([...sim.eventNames].filter((n) => n !== 'raw' && !silent.includes(n)).sort()).toEqual(Object.keys(expected).sort());
    for (const name of silent) expect(await sim.fire(name), name).toEqual([]);
    await sim.fire('lock-clock-fix');
    for (const [name, shape] of Object.entries(expected)) {
      receiver.received.length = 0;
      const results = await sim.fire(name);
      expect(results, name).toHaveLength(1);
      expect(bodies()[0], name).toMatchObject(shape);
    }
  });

  it('events update the device model', async () => {
    await sim.fire('unlock', { by: 'manual' });
    await sim.fire('door-open');
    await sim.fire('lock-name-changed', { name: 'Porch' });
    await sim.fire('bridge-offline');
    await sim.fire('keypad-battery', { level: 'critical' });
    expect(sim.lock('L1')).toMatchObject({ lockState: 'unlocked', doorState: 'open', name: 'Porch', bridge: 'offline', keypadBattery: 'keypad_battery_critical' });
    expect(bodies()[0]).toMatchObject({ User: { UserID: 'manualunlock' } });
  });

  it('membership of the account user (subject "me") also goes to the user hook, as an independent delivery', async () => {
    const results = await sim.fire('lock-user-remove', { subject: 'me' });
    expect(results.map((r) => r.kind)).toEqual(['lock', 'user']);
    expect(bodies()[1]).toMatchObject({ EventType: 'authorization', Event: 'lock_user_remove', UserID: sim.account.userId, LockID: 'L1' });
    expect(sim.lock('L1')).toBeUndefined();
  });

  it('raw sends a given payload', async () => {
    await sim.fire('raw', { payload: { EventType: 'operation', Event: 'weird' }, lockId: 'L1' });
    expect(bodies()).toEqual([{ EventType: 'operation', Event: 'weird' }]);
  });

  it('POST /_sim/fire fires by name; unknown names and options get 400', async () => {
    const ok = await post('/_sim/fire', { event: 'unlock', lockId: 'L1', by: 'keypad' });
    expect(ok.status).toBe(200);
    expect(ok.body.deliveries).toEqual([expect.objectContaining({ kind: 'lock', status: 200, outcome: 'delivered' })]);
    expect(bodies()[0]).toMatchObject({ Device: 'keypad', User: { FirstName: 'Jamie' } });
    expect((await post('/_sim/fire', { event: 'nope' })).status).toBe(400);
    expect((await post('/_sim/fire', { event: 'unlock', lockId: 'NOPE' })).status).toBe(400);
    expect((await post('/_sim/fire', { event: 'lock-battery', level: 'empty' })).status).toBe(400);
    expect((await post('/_sim/fire', {})).status).toBe(400);
  });

  it('GET /_sim/state shows devices, registrations (without tokens), stats and deliveries', async () => {
    await sim.fire('unlock');
    const state = await (await fetch(`${sim.url}/_sim/state`)).json() as Record<string, unknown>;
    expect(state).toMatchObject({ baseUrl: sim.baseUrl, locks: [expect.objectContaining({ id: 'L1' })], doorbells: [expect.objectContaining({ id: 'D1' })] });
    expect(JSON.stringify(state)).not.toContain('hook-secret');
    expect((state.deliveries as unknown[]).length).toBe(1);
  });

  it('POST /_sim/faults sets faults', async () => {
    const reply = await post('/_sim/faults', { failNext: { n: 1, status: 500, route: '/users/me' } });
    expect(reply.status).toBe(200);
    const { accessToken } = await grant(sim);
    expect((await api(sim, accessToken, 'GET', '/users/me')).status).toBe(500);
    expect((await post('/_sim/faults', { failNext: { n: 0 } })).status).toBe(400);
    await post('/_sim/faults', { rotateThenFail: '500', clear: true });
  });

  it('POST /_sim/faults {"forwarding": false} stops callbacks reaching the plugin (a stopped tunnel); true lets them through again', async () => {
    expect((await post('/_sim/faults', { forwarding: false })).body).toMatchObject({ forwarding: false });
    const stopped = await post('/_sim/fire', { event: 'unlock', lockId: 'L1', by: 'keypad' });
    expect(stopped.body.deliveries).toEqual([expect.objectContaining({ outcome: 'failed', willRetry: true })]);
    expect(receiver.received).toHaveLength(0);
    await post('/_sim/faults', { forwarding: true });
    const flowing = await post('/_sim/fire', { event: 'lock', lockId: 'L1', by: 'keypad' });
    expect(flowing.body.deliveries).toEqual([expect.objectContaining({ outcome: 'delivered' })]);
    expect(receiver.received).toHaveLength(1);
    await post('/_sim/faults', { clear: true });
  });
});

describe('README The service simulator: Scenario: a day at the front door', () => {
  it('covers keypad and app unlocks, door open/close, press with still image and recording, motion, battery, bridge offline and back', () => {
    const events = frontDoorDay({ lockId: 'L1', doorbellId: 'D1', dvrId: 'X' }).map((s) => `${s.event}${s.options.by ? `:${s.options.by}` : ''}`);
    for (const needed of ['unlock:keypad', 'unlock:app', 'door-open', 'door-closed', 'doorbell-press', 'video-available', 'motion', 'keypad-battery', 'bridge-offline', 'bridge-online']) {
      expect(events).toContain(needed);
    }
  });

  it('runs step by step over HTTP ({"mode":"step"})', async () => {
    const total = frontDoorDay({ lockId: 'L1', doorbellId: 'D1', dvrId: 'X' }).length;
    for (let i = 0; i < total; i++) {
      const reply = await post('/_sim/scenario/front-door', { mode: 'step' });
      expect(reply.body).toMatchObject({ index: i, total, done: i === total - 1 });
    }
    expect(receiver.received).toHaveLength(total);
    const press = bodies().find((b) => b.EventType === 'buttonpush');
    const video = bodies().find((b) => b.EventType === 'doorbell_video_upload_available');
    expect(video?.dvrID).toBe(press?.dvrID);
  });

  it('runs all steps with the step interval on the simulator clock', async () => {
    const reply = await post('/_sim/scenario/front-door', { intervalMs: 5000 });
    expect(reply.status).toBe(202);
    const total = (reply.body.steps as unknown[]).length;
    // The next step's timer is set once the previous step's deliveries had their first attempt.
    const nextStepScheduled = async (): Promise<void> => {
      for (let spins = 0; clock.pending() === 0 && spins < 1000; spins++) await new Promise((resolve) => setImmediate(resolve));
    };
    await nextStepScheduled();
    expect(receiver.received).toHaveLength(1);
    for (let i = 2; i <= total; i++) {
      expect(clock.nextDelay()).toBe(5000);
      clock.advance(4999);
      await sim.idle();
      expect(receiver.received).toHaveLength(i - 1);
      clock.advance(1);
      await sim.idle();
      expect(receiver.received).toHaveLength(i);
      if (i < total) await nextStepScheduled();
    }
    await sim.idle();
    expect(clock.pending()).toBe(0);
  });

  it('ScenarioRun.next() fires one step at a time and stops at the end', async () => {
    const run = new ScenarioRun(frontDoorDay({ lockId: 'L1', doorbellId: 'D1', dvrId: 'X' }), (e, o) => sim.fire(e, o), clock);
    let count = 0;
    while (await run.next()) count++;
    expect(count).toBe(run.steps.length);
    expect(await run.next()).toBeUndefined();
  });
});
