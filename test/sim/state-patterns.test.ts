// The simulator's scripting for the state patterns: a lock's own clock (jumped ahead, reset by a
// battery run-out), a signature clock that is off, and the scripted state scenarios.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ManualClock, startSimulator, type Simulator } from './index.js';
import { ScenarioRun } from './scenario.js';
import { STATE_SCENARIOS, bridgeFlapping } from './state-scenarios.js';
import { api, grant, registration } from './test-helpers.js';
import { testReceiverForFile } from './test-receiver.js';

const receiver = testReceiverForFile();
let sim: Simulator;
let clock: ManualClock;
const START = Date.UTC(2026, 0, 1);
const YEAR = 365 * 24 * 60 * 60 * 1000;

beforeEach(async () => {
  clock = new ManualClock(START);
  sim = await startSimulator({ clock, locks: [{ id: 'L1', name: 'Front Door', doorSensor: true, keypad: true }] });
  const { accessToken } = await grant(sim);
  await api(sim, accessToken, 'POST', '/webhook/L1', registration(`${receiver.url}/lock/L1`, sim.account.clientId, ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt']));
});
afterEach(async () => {
  await sim.close();
});

const bodies = (): Array<Record<string, unknown>> => receiver.received.map((r) => r.body as Record<string, unknown>);
const signedT = (index: number): number => Number(/t=(\d+)/.exec(String(receiver.received[index]?.headers['x-svc-signature']))?.[1]);

describe('spec Lock: operation (sim): a lock\'s own clock stamps its operations and door states', () => {
  it('lock-clock-jump: nothing is sent, and the lock\'s later operations and door states are stamped a year ahead', async () => {
    expect(await sim.fire('lock-clock-jump')).toEqual([]);
    expect(sim.lock('L1')?.clockOffsetMs).toBe(YEAR);
    await sim.fire('unlock', { by: 'manual' });
    await sim.fire('door-open');
    await sim.fire('onetouchlock');
    await sim.fire('status');
    const [manual, door, oneTouch, status] = bodies();
    expect(manual).toMatchObject({ Timestamp: START + YEAR, timeStamp: START });
    expect(door).toMatchObject({ Timestamp: START + YEAR });
    expect(oneTouch).toMatchObject({ Timestamp: START + YEAR });
    // status callbacks come from the service: its clock is right
    expect(status).toMatchObject({ Timestamp: START });
    // the signature is the service's too
    expect(signedT(0)).toBe(START / 1000);
  });

  it('lock-clock-reset: the clock goes back to 2000, the service sends lock_log_timestamp_drifted, and keypad operations are stamped in 2000', async () => {
    const results = await sim.fire('lock-clock-reset');
    expect(results).toHaveLength(1);
    expect(bodies()[0]).toMatchObject({ EventType: 'systemstatus', Event: 'lock_log_timestamp_drifted', Timestamp: START, TimestampDrifted: Date.UTC(2000, 0, 1) });
    clock.advance(5_000);
    await sim.fire('unlock', { by: 'keypad' });
    expect(bodies()[1]).toMatchObject({ Device: 'keypad', Timestamp: Date.UTC(2000, 0, 1) + 5_000 });
    // a later drift notice reports the lock's clock as it is
    await sim.fire('clock-drift');
    expect(bodies()[2]).toMatchObject({ TimestampDrifted: Date.UTC(2000, 0, 1) + 5_000 });
  });

  it('lock-clock-fix: the lock stamps with the right time again; `at` still wins when given', async () => {
    await sim.fire('lock-clock-jump', { driftMs: 60_000 });
    await sim.fire('lock-clock-fix');
    await sim.fire('lock', { by: 'manual' });
    await sim.fire('lock', { by: 'manual', at: 42 });
    expect(bodies().map((b) => b.Timestamp)).toEqual([START, 42]);
  });
});

describe('spec Callback authentication (sim): a wrong clock on either side (faults.signatureSkewMs)', () => {
  it('shifts every signature\'s t, added to a per-delivery skew, until cleared', async () => {
    sim.faults.signatureSkewMs = -600_000;
    await sim.fire('bridge-online');
    await sim.fire('bridge-online', { signature: { skewMs: -60_000 } });
    sim.faults.clear();
    await sim.fire('bridge-online');
    expect([signedT(0), signedT(1), signedT(2)]).toEqual([(START - 600_000) / 1000, (START - 660_000) / 1000, START / 1000]);
    // event times in the body are not shifted: only the signature's clock is off
    expect(bodies()[0]).not.toHaveProperty('Timestamp');
  });

  it('is set over HTTP with POST /_sim/faults {signatureSkewMs} and shows in the pending faults', async () => {
    const reply = await fetch(`${sim.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signatureSkewMs: 900_000 }) });
    expect(await reply.json()).toMatchObject({ signatureSkewMs: 900_000 });
    await sim.fire('bridge-offline');
    expect(signedT(0)).toBe((START + 900_000) / 1000);
  });
});

describe('sim: scripted state scenarios', () => {
  it('bridge flapping sends byte-identical offline and online bodies, and ends online', async () => {
    const scenario = bridgeFlapping({ lockId: 'L1' });
    const run = new ScenarioRun(scenario.steps, (e, o) => sim.fire(e, o), clock);
    while (await run.next()) { /* every step */ }
    const raws = receiver.received.map((r) => r.rawBody);
    expect(raws).toHaveLength(4);
    expect(raws[0]).toBe(raws[2]);
    expect(raws[1]).toBe(raws[3]);
    expect(scenario.endsWith).toEqual({ bridge: 'online' });
    expect(sim.lock('L1')?.bridge).toBe('online');
  });

  it.each(Object.keys(STATE_SCENARIOS))('%s runs to its end and the device model agrees with what it must end in', async (name) => {
    const build = STATE_SCENARIOS[name];
    if (!build) throw new Error(name);
    const scenario = build({ lockId: 'L1' });
    const run = new ScenarioRun(scenario.steps, (e, o) => sim.fire(e, o), clock);
    while (await run.next()) clock.advance(1_000);
    const lock = sim.lock('L1');
    if (scenario.endsWith.lock) expect(lock?.lockState).toBe(scenario.endsWith.lock);
    if (scenario.endsWith.bridge) expect(lock?.bridge).toBe(scenario.endsWith.bridge);
    if (scenario.endsWith.lockBattery) expect(lock?.battery === 'lock_state_battery_warning_none' ? 'normal' : 'low').toBe(scenario.endsWith.lockBattery);
    expect(receiver.received.every((r) => r.path === '/lock/L1')).toBe(true);
  });

  it('POST /_sim/scenario/<name> steps through a state scenario; an unknown name is refused', async () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const first = await post('/_sim/scenario/lock-clock-reset', { mode: 'step' });
    expect(first.body).toMatchObject({ index: 0, event: 'lock' });
    const second = await post('/_sim/scenario/lock-clock-reset', { mode: 'step' });
    expect(second.body).toMatchObject({ index: 1, event: 'lock-clock-reset' });
    expect((await post('/_sim/scenario/no-such-thing', { mode: 'step' })).status).toBe(400);
  });
});
