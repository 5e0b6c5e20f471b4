// The lock accessory's rendering of state it was never told, of reachability and of event times
// (design sections 6 and 7), on both Homebridge generations' real HAP objects.
import type { PlatformAccessory } from 'homebridge';
import { afterEach, describe, expect, it } from 'vitest';

import type { LockEvent } from '../../src/model/events.js';
import { KEYPAD_SUBTYPE, lockUuid } from '../../src/homekit/lock-accessory.js';
import { initialLockState, type LockState } from '../../src/model/lock-state.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, hasService, newAccessory, service } from './hap-env.js';
import { serveLock, type LockDeps , restartServed, storeOf } from './serve-device.js';
import { LOCK_STATE_KEY, type LockDevice } from '../../src/model/lock-device.js';

const NOW = Date.UTC(2026, 5, 1);
const YEAR = 365 * 86_400_000;
const at = (t: number) => ({ receivedAt: t + 20, signedAt: t, toleranceMs: 300_000 });
const ctx = at(NOW);
const actor = { kind: 'manual' } as const;
const lockEv = (state: 'locked' | 'unlocked', time?: number, source: 'operation' | 'status' = 'operation'): LockEvent => ({
  lockId: 'L1', at: time, kind: 'lockState', state, source, device: 'lock', actor,
});
const door = (state: 'open' | 'closed' | 'ajar' | 'init' | 'unknown', time = NOW): LockEvent => ({ lockId: 'L1', at: time, kind: 'doorState', state });
const online = (value: boolean): LockEvent => ({ lockId: 'L1', at: undefined, kind: 'online', online: value });
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe.each(hapEnvs)('lock accessory state on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: LockDevice[] = [];
  afterEach(() => {
    for (const lock of made.splice(0)) lock.dispose();
  });

  function setup(options: { doorSensor?: boolean; accessory?: PlatformAccessory; operate?: LockDeps['operate'] } = {}) {
    const captured = captureLog();
    const deps: LockDeps = { api, log: captured.log, operate: options.operate ?? (() => Promise.resolve()), describeCommandFailure, now: () => NOW };
    const accessory = options.accessory ?? newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
    const lock = serveLock(deps, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: options.doorSensor ?? false });
    made.push(lock);
    return { accessory, lock, captured };
  }

  const contact = (accessory: PlatformAccessory) => service(accessory, S.ContactSensor);
  // undefined when the sensor has no StatusActive at all (reading it through getCharacteristic would add one)
  const active = (accessory: PlatformAccessory) => (contact(accessory).testCharacteristic(C.StatusActive) ? contact(accessory).getCharacteristic(C.StatusActive).value : undefined);
  const readAll = (accessory: PlatformAccessory) =>
    Promise.allSettled(accessory.services.flatMap((s) => s.characteristics.filter((c) => c.props.perms.includes(api.hap.Perms.PAIRED_READ)).map((c) => c.handleGetRequest())));
  const allFail = async (accessory: PlatformAccessory) => (await readAll(accessory)).every((r) => r.status === 'rejected' && r.reason === api.hap.HAPStatus.SERVICE_COMMUNICATION_FAILURE);
  const noneFail = async (accessory: PlatformAccessory) => (await readAll(accessory)).every((r) => r.status === 'fulfilled');

  describe('"nothing unknown is shown as known"', () => {
    it('a configured door sensor is not active before any door event, and the first real position makes it active', () => {
      const { accessory, lock } = setup({ doorSensor: true });
      expect(active(accessory)).toBe(false);
      lock.apply(door('closed'), ctx);
      expect(active(accessory)).toBe(true);
      expect(contact(accessory).getCharacteristic(C.ContactSensorState).value).toBe(C.ContactSensorState.CONTACT_DETECTED);
    });

    it('init/unknown as the first door event reveal the sensor but claim no position; init after a real one keeps it', () => {
      const { accessory, lock } = setup();
      lock.apply(door('init'), ctx);
      expect(hasService(accessory, S.ContactSensor)).toBe(true);
      expect(active(accessory)).toBe(false);
      lock.apply(door('unknown', NOW + 1), ctx);
      expect(active(accessory)).toBe(false);
      lock.apply(door('open', NOW + 2), ctx);
      expect(active(accessory)).toBe(true);
      lock.apply(door('init', NOW + 3), ctx);
      expect(active(accessory)).toBe(true);
      expect(contact(accessory).getCharacteristic(C.ContactSensorState).value).toBe(C.ContactSensorState.CONTACT_NOT_DETECTED);
    });

    it('a restart with a known door shows it active at once; an old cache with an unknown door is made inactive', () => {
      const first = setup({ doorSensor: true });
      first.lock.apply(door('open'), ctx);
      first.lock.dispose();
      const known = setup({ doorSensor: true, accessory: restartServed(api, first.accessory) });
      expect(active(known.accessory)).toBe(true);

      // a cache written by an older version: a ContactSensor without StatusActive and no door known
      const old = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      old.addService(new S.ContactSensor('Front Door Door'));
      const { accessory } = setup({ doorSensor: true, accessory: old });
      expect(active(accessory)).toBe(false);
    });

    it('the lock battery claims no level before the lock reports one (an old cache\'s 100 % is taken away)', () => {
      const fresh = setup();
      expect(service(fresh.accessory, S.Battery).testCharacteristic(C.BatteryLevel)).toBe(false);
      expect(service(fresh.accessory, S.Battery).getCharacteristic(C.StatusLowBattery).value).toBe(C.StatusLowBattery.BATTERY_LEVEL_NORMAL);
      fresh.lock.apply({ lockId: 'L1', at: undefined, kind: 'battery', device: 'lock', raw: 'lock_state_battery_warning_2week' }, ctx);
      expect(service(fresh.accessory, S.Battery).getCharacteristic(C.BatteryLevel).value).toBe(15);

      const old = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      old.addService(new S.Battery('Front Door Battery')).setCharacteristic(C.BatteryLevel, 100);
      const { accessory } = setup({ accessory: old });
      expect(service(accessory, S.Battery).testCharacteristic(C.BatteryLevel)).toBe(false);
    });

    it('a level that first arrives while the bridge is offline is guarded like every other read', async () => {
      const { accessory, lock } = setup();
      lock.apply(online(false), ctx);
      lock.apply({ lockId: 'L1', at: undefined, kind: 'battery', device: 'keypad', raw: 'keypad_battery_warning' }, ctx);
      lock.apply({ lockId: 'L1', at: undefined, kind: 'battery', device: 'lock', raw: 'lock_state_battery_warning_2day' }, ctx);
      expect(hasService(accessory, S.Battery, KEYPAD_SUBTYPE)).toBe(true);
      expect(await allFail(accessory)).toBe(true);
    });
  });

  describe('No Response ends when the bridge is proven reachable', () => {
    it('a status callback ends it, and the log says why', async () => {
      const { accessory, lock, captured } = setup({ doorSensor: true });
      lock.apply(online(false), ctx);
      expect(await allFail(accessory)).toBe(true);
      lock.apply(lockEv('locked', NOW + 1_000, 'status'), at(NOW + 1_000));
      expect(await noneFail(accessory)).toBe(true);
      expect(lock.state.online).toBe(true);
      expect(captured.text('info')).toMatch(/Front Door: the lock's Wi-Fi bridge answered a status request, so it is back online/);
    });

    it('a successful remote command ends it', async () => {
      const { accessory, lock, captured } = setup();
      lock.apply(online(false), ctx);
      await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      expect(await noneFail(accessory)).toBe(true);
      expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.SECURED);
      expect(captured.text('info')).toMatch(/answered a command, so it is back online/);
    });

    it('a failed remote command or an operation callback does not', async () => {
      const { accessory, lock } = setup({ operate: () => Promise.reject(new Error('no answer')) });
      lock.apply(online(false), ctx);
      await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      lock.apply(lockEv('unlocked', NOW + 1_000), at(NOW + 1_000));
      expect(await allFail(accessory)).toBe(true);
    });

    it('offline, online, offline, online (the same bodies, applied every time) ends readable', async () => {
      const { accessory, lock } = setup();
      for (const value of [false, true, false, true]) lock.apply(online(value), ctx);
      expect(await noneFail(accessory)).toBe(true);
    });
  });

  describe('event times are evidence', () => {
    it('one event stamped a year ahead does not freeze the lock', () => {
      const { accessory, lock } = setup();
      lock.apply(lockEv('locked', NOW + YEAR), ctx);
      lock.apply(lockEv('unlocked', NOW + 60_000), at(NOW + 60_000));
      expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
    });

    it('after lock_log_timestamp_drifted, manual operations stamped by the reset clock apply', () => {
      const { accessory, lock } = setup();
      const reset = Date.UTC(2000, 0, 1);
      lock.apply(lockEv('locked', NOW), ctx);
      lock.apply(lockEv('unlocked', reset), at(NOW + 1_000));
      expect(lock.state.lock).toBe('locked');
      lock.apply({ lockId: 'L1', at: NOW + 2_000, kind: 'clockDrift', warningLevel: 'warning', driftedTo: reset }, at(NOW + 2_000));
      lock.apply(lockEv('unlocked', reset + 5_000), at(NOW + 3_000));
      expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
    });

    it('marks cached by an older version in the future are repaired at start-up, with a line in the log', () => {
      const old = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      const saved: LockState = { ...initialLockState(), lock: 'locked', lastAt: { lock: NOW + YEAR } };
      storeOf(old).write(LOCK_STATE_KEY, saved, 'now');
      const { accessory, lock, captured } = setup({ accessory: old });
      expect(lock.state.lastAt.lock).toBe(NOW);
      expect(captured.text('info')).toMatch(/saved event times lay in the future/);
      lock.apply(lockEv('unlocked', NOW + 1_000), at(NOW + 1_000));
      expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
    });
  });
});
