import { describe, expect, it } from 'vitest';

import { confirmingCluster, doorbellEndpoints, lockEndpoints, planChanges } from '../../src/matter/matter-endpoints.js';
import { initialLockState, type LockState } from '../../src/model/lock-state.js';

const lockView = { id: 'LOCK-1', name: 'Front Door', doorSensor: false };

function state(fields: Partial<LockState> = {}): LockState {
  return { ...initialLockState(), ...fields };
}

describe('a lock\'s endpoints', () => {
  it('a lock is a DoorLock carrying the lock battery as its PowerSource, named and numbered after the lock', () => {
    const [lock, ...rest] = lockEndpoints(lockView, state({ lock: 'locked' }));
    expect(rest).toHaveLength(0);
    expect(lock).toMatchObject({ deviceType: 'DoorLock', label: 'Front Door', serial: 'LOCK-1', device: 'lock:LOCK-1', seed: 'matter:lock:LOCK-1', reachable: true });
    expect(lock?.state).toEqual({ doorLock: { lockState: 1 }, powerSource: { batChargeLevel: 0, batPercentRemaining: 200, batReplacementNeeded: false } });
    // Homebridge's DoorLock fails to register without these (matter-facts: pitfalls).
    expect(lock?.fixed.doorLock).toMatchObject({ lockType: expect.any(Number) as number, actuatorEnabled: true, operatingMode: 0 });
  });

  it('the ContactSensor exists when doorSensor is set or once a door event has arrived (as in section 7)', () => {
    expect(lockEndpoints({ ...lockView, doorSensor: true }, state()).map((p) => p.label)).toEqual(['Front Door', 'Front Door Door']);
    expect(lockEndpoints(lockView, state({ doorSensorSeen: true, door: 'open' })).map((p) => p.deviceType)).toEqual(['DoorLock', 'ContactSensor']);
  });

  it('the door sensor claims no position before a real one: unreachable until then, reachable once known', () => {
    const unknown = lockEndpoints({ ...lockView, doorSensor: true }, state())[1];
    expect(unknown).toMatchObject({ reachable: false, state: { booleanState: { stateValue: false } }, serial: 'LOCK-1-door' });
    const closed = lockEndpoints({ ...lockView, doorSensor: true }, state({ door: 'closed', doorSensorSeen: true }))[1];
    expect(closed).toMatchObject({ reachable: true, state: { booleanState: { stateValue: true } } });
  });

  it('a lock whose bridge is offline is unreachable, its door sensor too', () => {
    const plans = lockEndpoints({ ...lockView, doorSensor: true }, state({ online: false, door: 'closed', doorSensorSeen: true }));
    expect(plans.map((p) => p.reachable)).toEqual([false, false]);
  });

  it('doorSensorOnly: no DoorLock; the ContactSensor carries the battery, as a new endpoint', () => {
    const plans = lockEndpoints({ ...lockView, doorSensor: false, doorSensorOnly: true }, state({ door: 'closed' }));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatchObject({ deviceType: 'ContactSensor', label: 'Front Door Door', serial: 'LOCK-1-door' });
    expect(plans[0]?.state.powerSource).toBeDefined();
    expect(plans[0]?.seed).not.toBe(lockEndpoints({ ...lockView, doorSensor: true }, state())[1]?.seed);
  });
});

describe('a doorbell\'s endpoints', () => {
  it('a GenericSwitch named after the doorbell and an OccupancySensor "<name> Motion"', () => {
    const plans = doorbellEndpoints({ id: 'BELL-1', name: 'Front Doorbell' }, false);
    expect(plans.map((p) => [p.deviceType, p.label, p.serial])).toEqual([
      ['GenericSwitch', 'Front Doorbell', 'BELL-1'],
      ['MotionSensor', 'Front Doorbell Motion', 'BELL-1-motion'],
    ]);
    expect(plans[0]?.fixed.switch).toMatchObject({ numberOfPositions: 2, currentPosition: 0 });
  });

  it('occupied while motion is on', () => {
    expect(doorbellEndpoints({ id: 'B', name: 'B' }, true)[1]?.state).toEqual({ occupancySensing: { occupancy: { occupied: true } } });
  });
});

describe('what a state change pushes', () => {
  it('only the attributes that changed, by cluster', () => {
    const before = lockEndpoints(lockView, state({ lock: 'locked' }))[0];
    const after = lockEndpoints(lockView, state({ lock: 'unlocked' }))[0];
    if (!before || !after) throw new Error('no plans');
    expect(planChanges(before, after)).toEqual({ state: { doorLock: { lockState: 2 } }, reachable: false, label: false });
    expect(planChanges(after, after)).toEqual({ state: {}, reachable: false, label: false });
  });

  it('a battery change pushes the PowerSource attributes that moved', () => {
    const before = lockEndpoints(lockView, state())[0];
    const after = lockEndpoints(lockView, state({ battery: { raw: 'lock_state_battery_warning_2day' } }))[0];
    if (!before || !after) throw new Error('no plans');
    expect(planChanges(before, after).state).toEqual({ powerSource: { batChargeLevel: 2, batPercentRemaining: 10, batReplacementNeeded: true } });
  });

  it('reachability and the label are reported apart from cluster state', () => {
    const before = lockEndpoints(lockView, state())[0];
    const after = lockEndpoints({ ...lockView, name: 'Main Entrance' }, state({ online: false }))[0];
    if (!before || !after) throw new Error('no plans');
    expect(planChanges(before, after)).toEqual({ state: {}, reachable: true, label: true });
  });

  it('a registration is confirmed with the endpoint\'s first state cluster, else its configuration', () => {
    const [lock] = lockEndpoints(lockView, state());
    const [bell] = doorbellEndpoints({ id: 'B', name: 'B' }, false);
    if (!lock || !bell) throw new Error('no plans');
    expect(confirmingCluster(lock)).toBe('doorLock');
    expect(confirmingCluster(bell)).toBe('switch');
  });
});
