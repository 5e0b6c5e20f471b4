// The guard on real HAP objects of Homebridge 1 and 2: Left Open / Left Unlocked sensors, the
// auto-lock through the lock's own command path with AutoSecurityTimeout, and the doorbell chime.
import type { PlatformAccessory } from 'homebridge';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { doorbellUuid } from '../../src/homekit/doorbell-accessory.js';
import { lockUuid } from '../../src/homekit/lock-accessory.js';
import type { DoorbellEvent, LockEvent } from '../../src/model/events.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, hasService, newAccessory, service } from './hap-env.js';
import { serveLock, serveDoorbell, type LockDeps, type DoorbellDeps, restartServed } from './serve-device.js';
import type { LockEntry } from '../../src/model/device-entry.js';
import type { LockDevice } from '../../src/model/lock-device.js';

const owner = { kind: 'person', userId: 'u-owner', firstName: 'Alex', lastName: 'Example' } as const;

describe.each(hapEnvs)('guard on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: { dispose(): void }[] = [];
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    for (const item of made.splice(0)) item.dispose();
    vi.useRealTimers();
  });

  function lockSetup(entry: Partial<LockEntry> = {}, accessory: PlatformAccessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'))) {
    const captured = captureLog();
    const operated: string[] = [];
    const deps: LockDeps = { api, log: captured.log, operate: (_id, action) => { operated.push(action); return Promise.resolve(); }, describeCommandFailure, now: () => Date.now() };
    const lock = serveLock(deps, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, people: [{ userId: 'u-owner', name: 'Alex' }], ...entry });
    made.push(lock);
    return { lock, accessory, operated, captured };
  }
  const ctx = () => ({ receivedAt: Date.now(), signedAt: Date.now() });
  const lockEvent = (state: 'locked' | 'unlocked', device: 'lock' | 'keypad' = 'lock', at?: number): LockEvent => ({ kind: 'lockState', lockId: 'L1', at, state, source: 'operation', device, actor: owner });
  const door = (state: 'open' | 'closed'): LockEvent => ({ kind: 'doorState', lockId: 'L1', at: undefined, state });

  /** The door reported closed, then the owner unlocks: the auto-lock countdown runs. */
  function unlockWithDoorClosed(lock: LockDevice): void {
    lock.apply(door('closed'), ctx());
    lock.apply(lockEvent('unlocked'), ctx());
  }
  /** The owner's automation button presses from now on. */
  function ownerPresses(accessory: PlatformAccessory): unknown[] {
    const presses: unknown[] = [];
    service(accessory, S.StatelessProgrammableSwitch, 'person:u-owner').getCharacteristic(C.ProgrammableSwitchEvent).on('change', (change: { newValue: unknown }) => presses.push(change.newValue));
    return presses;
  }

  it('Left Open and Left Unlocked are contact sensors with their subtypes and names while the settings are on, and go when they are off', () => {
    const { lock, accessory } = lockSetup({ leftOpenSeconds: 300, leftUnlockedSeconds: 600 });
    expect(service(accessory, S.ContactSensor, 'left-open').getCharacteristic(C.Name).value).toBe('Front Door Left Open');
    expect(service(accessory, S.ContactSensor, 'left-unlocked').getCharacteristic(C.Name).value).toBe('Front Door Left Unlocked');
    expect(service(accessory, S.ContactSensor, 'left-open').getCharacteristic(C.ContactSensorState).value).toBe(C.ContactSensorState.CONTACT_DETECTED);
    lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true });
    expect(hasService(accessory, S.ContactSensor, 'left-open')).toBe(false);
    expect(hasService(accessory, S.ContactSensor, 'left-unlocked')).toBe(false);
    expect(hasService(accessory, S.ContactSensor)).toBe(true);
  });

  it('Left Open trips after the door has been open that long and clears on close', async () => {
    const { lock, accessory } = lockSetup({ leftOpenSeconds: 300 });
    const state = () => service(accessory, S.ContactSensor, 'left-open').getCharacteristic(C.ContactSensorState).value;
    lock.apply(door('open'), ctx());
    await vi.advanceTimersByTimeAsync(299_000);
    expect(state()).toBe(C.ContactSensorState.CONTACT_DETECTED);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state()).toBe(C.ContactSensorState.CONTACT_NOT_DETECTED);
    lock.apply(door('closed'), ctx());
    expect(state()).toBe(C.ContactSensorState.CONTACT_DETECTED);
  });

  it('auto-lock sends one lock command; the callback that follows sets LockLastKnownAction 8 and fires no person trigger', async () => {
    const { lock, accessory, operated } = lockSetup({ autoLockSeconds: 30 });
    const management = service(accessory, S.LockManagement);
    expect(management.getCharacteristic(C.LockManagementAutoSecurityTimeout).value).toBe(30);
    unlockWithDoorClosed(lock);
    const presses = ownerPresses(accessory);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(operated).toEqual(['lock']);
    expect(management.getCharacteristic(C.LockLastKnownAction).value).toBe(8);
    // The service's callback for the plugin's own remote lock (sent as the account owner).
    lock.apply(lockEvent('locked'), ctx());
    expect(management.getCharacteristic(C.LockLastKnownAction).value).toBe(8);
    expect(presses).toEqual([]);
    expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.SECURED);
  });

  it('AutoSecurityTimeout written from HomeKit changes the delay, survives a restart, and yields to a new config value', async () => {
    const first = lockSetup({ autoLockSeconds: 30 });
    service(first.accessory, S.LockManagement).getCharacteristic(C.LockManagementAutoSecurityTimeout).setValue(120);
    await vi.advanceTimersByTimeAsync(0);
    first.lock.dispose();
    const cached = restartServed(api, first.accessory);
    const again = lockSetup({ autoLockSeconds: 30 }, cached);
    expect(service(again.accessory, S.LockManagement).getCharacteristic(C.LockManagementAutoSecurityTimeout).value).toBe(120);
    unlockWithDoorClosed(again.lock);
    await vi.advanceTimersByTimeAsync(119_000);
    expect(again.operated).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(again.operated).toEqual(['lock']);
    again.lock.dispose();
    const changed = lockSetup({ autoLockSeconds: 45 }, restartServed(api, again.accessory));
    expect(service(changed.accessory, S.LockManagement).getCharacteristic(C.LockManagementAutoSecurityTimeout).value).toBe(45);
  });

  /** A lock whose remote commands wait for the test to answer them. */
  function slowLockSetup(entry: Partial<LockEntry> = {}, accessory: PlatformAccessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'))) {
    const captured = captureLog();
    const operations: { action: string; resolve: () => void; reject: (error: unknown) => void }[] = [];
    const operate = (_id: string, action: string) => new Promise<void>((resolve, reject) => operations.push({ action, resolve, reject }));
    const lock = serveLock({ api, log: captured.log, operate, describeCommandFailure, now: () => Date.now() }, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, people: [{ userId: 'u-owner', name: 'Alex' }], ...entry });
    made.push(lock);
    return { lock, accessory, operations, captured };
  }

  it('after a restart the saved door position is shown in HomeKit but auto-lock waits for the door to report closed', async () => {
    const first = lockSetup({ autoLockSeconds: 30 });
    unlockWithDoorClosed(first.lock);
    first.lock.dispose();
    const again = lockSetup({ autoLockSeconds: 30 }, restartServed(api, first.accessory));
    expect(service(again.accessory, S.ContactSensor).getCharacteristic(C.ContactSensorState).value).toBe(C.ContactSensorState.CONTACT_DETECTED);
    expect(service(again.accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(again.operated).toEqual([]);
    again.lock.apply(door('closed'), ctx());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(again.operated).toEqual(['lock']);
  });

  it('an unlock written from Apple Home stops the countdown at the write: no auto-lock follows it while it is on its way', async () => {
    const { lock, accessory, operations } = slowLockSetup({ autoLockSeconds: 30 });
    unlockWithDoorClosed(lock);
    await vi.advanceTimersByTimeAsync(29_000);
    service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).setValue(C.LockTargetState.UNSECURED);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    operations[0]?.resolve();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(operations.map((o) => o.action)).toEqual(['unlock']);
    expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
  });

  it('after a failed auto-lock a person locking at the keypad is that person: keypad last action and their trigger', async () => {
    const { lock, accessory, operations } = slowLockSetup({ autoLockSeconds: 30 });
    const management = service(accessory, S.LockManagement);
    unlockWithDoorClosed(lock);
    const presses = ownerPresses(accessory);
    await vi.advanceTimersByTimeAsync(30_000);
    operations[0]?.reject(new Error('the bridge is busy'));
    await vi.advanceTimersByTimeAsync(5_000);
    lock.apply(lockEvent('locked', 'keypad', Date.now()), ctx());
    expect(management.getCharacteristic(C.LockLastKnownAction).value).toBe(C.LockLastKnownAction.SECURED_BY_KEYPAD);
    expect(presses).toEqual([C.ProgrammableSwitchEvent.DOUBLE_PRESS]);
  });

  it('a lock with autoLockSeconds and no door sensor gets a warning naming it, and no auto-lock', async () => {
    const { lock, operated, captured } = lockSetup({ autoLockSeconds: 30, doorSensor: false });
    expect(captured.text('warn')).toMatch(/^Front Door: autoLockSeconds needs a door sensor/);
    lock.apply(lockEvent('unlocked'), ctx());
    await vi.advanceTimersByTimeAsync(600_000);
    expect(operated).toEqual([]);
  });

  describe('the doorbell chime', () => {
    function bellSetup(accessory: PlatformAccessory = newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1'))) {
      const captured = captureLog();
      const deps: DoorbellDeps = { api, log: captured.log, fetchImage: () => Promise.resolve(Buffer.from('x')) };
      const bell = serveDoorbell(deps, accessory, { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
      made.push(bell);
      const rings: unknown[] = [];
      service(accessory, S.Doorbell).getCharacteristic(C.ProgrammableSwitchEvent).on('change', (change: { newValue: unknown }) => rings.push(change.newValue));
      const changes: boolean[] = [];
      bell.onChange((change) => { if (change.cause === 'event') changes.push(change.ring); });
      return { bell, accessory, rings, changes, captured };
    }
    let dvr = 0;
    const press = (): DoorbellEvent => ({ kind: 'doorbellPress', doorbellId: 'D1', at: undefined, dvrId: `dvr-${++dvr}` });

    it('a Switch "<name> Chime" (subtype chime), On by default; Off: a press rings no phone and no Matter press, but is recorded; On again rings nothing belatedly', () => {
      const { bell, accessory, rings, changes, captured } = bellSetup();
      const chime = service(accessory, S.Switch, 'chime');
      expect(chime.getCharacteristic(C.Name).value).toBe('Front Doorbell Chime');
      expect(chime.getCharacteristic(C.On).value).toBe(true);
      bell.apply(press(), ctx());
      expect(rings).toHaveLength(1);
      chime.setCharacteristic(C.On, false);
      bell.apply(press(), ctx());
      expect(rings).toHaveLength(1);
      expect(changes).toEqual([true, false]);
      expect(captured.text('info')).toMatch(/doorbell pressed; the chime is off/);
      chime.setCharacteristic(C.On, true);
      expect(rings).toHaveLength(1);
      bell.apply(press(), ctx());
      expect(rings).toHaveLength(2);
    });

    it('Off is kept across restarts', () => {
      const first = bellSetup();
      service(first.accessory, S.Switch, 'chime').setCharacteristic(C.On, false);
      first.bell.dispose();
      const again = bellSetup(restartServed(api, first.accessory));
      expect(service(again.accessory, S.Switch, 'chime').getCharacteristic(C.On).value).toBe(false);
    });
  });
});
