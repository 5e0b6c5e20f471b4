import { readFileSync } from 'node:fs';

import type { PlatformAccessory } from 'homebridge';
import { afterEach, describe, expect, it } from 'vitest';

import { BridgeError, RequestRejectedError, type BridgeProblem } from '../../src/cloud/http/errors.js';
import type { LockEvent } from '../../src/model/events.js';
import { KEYPAD_SUBTYPE, lockCategory, lockUuid } from '../../src/homekit/lock-accessory.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, hasService, newAccessory, read, service, type CharacteristicType, type ServiceType } from './hap-env.js';
import { serveLock, type LockDeps , restartServed, storeOf } from './serve-device.js';
import { LOCK_STATE_KEY, type LockDevice } from '../../src/model/lock-device.js';
import type { LockChange } from '../../src/model/device-changes.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const ctx = { receivedAt: 1_700_000_000_000, signedAt: 1_700_000_000_000 };
const actor = { kind: 'person', firstName: 'Ada', lastName: 'Lovelace' } as const;
const lockEv = (state: 'locked' | 'unlocked', at?: number, source: 'operation' | 'status' = 'operation'): LockEvent => ({
  lockId: 'L1', at, kind: 'lockState', state, source, device: 'lock', actor,
});
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe.each(hapEnvs)('LockAccessory on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: LockDevice[] = [];
  afterEach(() => {
    for (const lock of made.splice(0)) lock.dispose();
  });

  interface OperateCall {
    lockId: string;
    action: 'lock' | 'unlock';
    resolve: () => void;
    reject: (error: unknown) => void;
  }

  function setup(options: { doorSensor?: boolean; accessory?: PlatformAccessory } = {}) {
    const calls: OperateCall[] = [];
    const captured = captureLog();
    const deps: LockDeps = {
      api,
      log: captured.log,
      operate: (lockId, action) =>
        new Promise<void>((resolve, reject) => {
          calls.push({ lockId, action, resolve, reject });
        }),
      describeCommandFailure,
    };
    const accessory = options.accessory ?? newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
    const lock = serveLock(deps, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: options.doorSensor ?? false });
    made.push(lock);
    const value = (type: ServiceType, characteristic: CharacteristicType, subtype?: string) => service(accessory, type, subtype).getCharacteristic(characteristic).value;
    return { accessory, lock, calls, captured, value, deps };
  }

  describe('accessory identity and services', () => {
    it('UUID is hap.uuid.generate("lock:" + id) and the category a door lock', () => {
      expect(lockUuid(api, 'L1')).toBe(api.hap.uuid.generate('lock:L1'));
      expect(lockCategory(api)).toBe(api.hap.Categories.DOOR_LOCK);
    });

    it('LockMechanism is primary; LockCurrentState is UNKNOWN (3) before any event', () => {
      const { accessory, value } = setup();
      const lock = service(accessory, S.LockMechanism);
      expect(lock.isPrimaryService).toBe(true);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.UNKNOWN);
    });

    it('AccessoryInformation: manufacturer Lock Access, serial = device id, firmware = plugin version', () => {
      const { accessory } = setup();
      const info = service(accessory, S.AccessoryInformation);
      expect(info.getCharacteristic(C.Manufacturer).value).toBe('Lock Access');
      expect(info.getCharacteristic(C.SerialNumber).value).toBe('L1');
      expect(info.getCharacteristic(C.FirmwareRevision).value).toBe(pkg.version.replace(/[-+].*$/, ''));
      expect(info.getCharacteristic(C.Model).value).toBe('Smart Lock');
    });

    it('Battery for the lock is NOT_CHARGEABLE; no ContactSensor and no keypad Battery until needed', () => {
      const { accessory, value } = setup();
      expect(value(S.Battery, C.ChargingState)).toBe(C.ChargingState.NOT_CHARGEABLE);
      expect(hasService(accessory, S.ContactSensor)).toBe(false);
      expect(hasService(accessory, S.Battery, KEYPAD_SUBTYPE)).toBe(false);
    });

    it('ContactSensor exists when doorSensor is set', () => {
      const { accessory } = setup({ doorSensor: true });
      expect(hasService(accessory, S.ContactSensor)).toBe(true);
    });
  });

  describe('mapping table', () => {
    it('operation/status lock and onetouchlock: LockCurrentState and LockTargetState SECURED (1)', () => {
      const { lock, value } = setup();
      lock.apply(lockEv('locked', 1), ctx);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(1);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(1);
      lock.apply({ lockId: 'L1', at: 2, kind: 'lockState', state: 'locked', source: 'operation', device: 'keypad', actor: { kind: 'oneTouch' }, oneTouch: true }, ctx);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(1);
    });

    it('operation/status unlock: UNSECURED (0), target too; status sets the target like operation', () => {
      const { lock, value } = setup();
      lock.apply(lockEv('locked', 1), ctx);
      lock.apply(lockEv('unlocked', 2, 'status'), ctx);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(0);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(0);
    });

    it('door closed: CONTACT_DETECTED (0); open and ajar: CONTACT_NOT_DETECTED (1); init/unknown change nothing', () => {
      const { lock, value, accessory } = setup();
      expect(hasService(accessory, S.ContactSensor)).toBe(false);
      lock.apply({ lockId: 'L1', at: 1, kind: 'doorState', state: 'open' }, ctx);
      expect(hasService(accessory, S.ContactSensor)).toBe(true);
      expect(value(S.ContactSensor, C.ContactSensorState)).toBe(1);
      lock.apply({ lockId: 'L1', at: 2, kind: 'doorState', state: 'closed' }, ctx);
      expect(value(S.ContactSensor, C.ContactSensorState)).toBe(0);
      lock.apply({ lockId: 'L1', at: 3, kind: 'doorState', state: 'ajar' }, ctx);
      expect(value(S.ContactSensor, C.ContactSensorState)).toBe(1);
      lock.apply({ lockId: 'L1', at: 4, kind: 'doorState', state: 'init' }, ctx);
      lock.apply({ lockId: 'L1', at: 5, kind: 'doorState', state: 'unknown' }, ctx);
      expect(value(S.ContactSensor, C.ContactSensorState)).toBe(1);
    });

    it.each([
      ['lock_state_battery_warning_none', 100, false],
      ['lock_state_battery_warning_2week', 15, true],
      ['lock_state_battery_warning_1week', 10, true],
      ['lock_state_battery_warning_2day', 5, true],
    ])('lock battery %s: BatteryLevel %i, low %s', (raw, level, low) => {
      const { lock, value } = setup();
      lock.apply({ lockId: 'L1', at: 1, kind: 'battery', device: 'lock', raw }, ctx);
      expect(value(S.Battery, C.BatteryLevel)).toBe(level);
      expect(value(S.Battery, C.StatusLowBattery)).toBe(low ? C.StatusLowBattery.BATTERY_LEVEL_LOW : C.StatusLowBattery.BATTERY_LEVEL_NORMAL);
    });

    it.each([
      ['keypad_battery_none', 100, false],
      ['keypad_battery_warning', 20, true],
      ['keypad_battery_critical', 5, true],
    ])('keypad %s: Battery subtype keypad %i, low %s (created on the first keypad event)', (raw, level, low) => {
      const { lock, value, accessory } = setup();
      lock.apply({ lockId: 'L1', at: 1, kind: 'battery', device: 'keypad', raw, serialNumber: 'K1' }, ctx);
      expect(hasService(accessory, S.Battery, KEYPAD_SUBTYPE)).toBe(true);
      expect(value(S.Battery, C.BatteryLevel, KEYPAD_SUBTYPE)).toBe(level);
      expect(value(S.Battery, C.StatusLowBattery, KEYPAD_SUBTYPE)).toBe(low ? 1 : 0);
      expect(value(S.Battery, C.ChargingState, KEYPAD_SUBTYPE)).toBe(C.ChargingState.NOT_CHARGEABLE);
      // the lock's own battery is untouched: still no level told
      expect(service(accessory, S.Battery).testCharacteristic(C.BatteryLevel)).toBe(false);
    });

    it('an event older than the last applied one changes nothing in HomeKit', () => {
      const { lock, value } = setup();
      lock.apply(lockEv('locked', 2_000), ctx);
      lock.apply(lockEv('unlocked', 1_000), ctx);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(1);
    });
  });

  describe('systemstatus offline gives No Response until online', () => {
    it('every readable characteristic of every service fails with SERVICE_COMMUNICATION_FAILURE while offline', async () => {
      const { lock, accessory } = setup({ doorSensor: true });
      lock.apply({ lockId: 'L1', at: 1, kind: 'battery', device: 'keypad', raw: 'keypad_battery_warning' }, ctx);
      lock.apply({ lockId: 'L1', at: 1, kind: 'online', online: false }, ctx);
      const readable = accessory.services.flatMap((s) => s.characteristics.filter((c) => c.props.perms.includes(api.hap.Perms.PAIRED_READ)));
      expect(readable.length).toBeGreaterThan(10);
      for (const characteristic of readable) {
        await expect(characteristic.handleGetRequest(), characteristic.displayName).rejects.toBe(api.hap.HAPStatus.SERVICE_COMMUNICATION_FAILURE);
      }
      lock.apply({ lockId: 'L1', at: 2, kind: 'online', online: true }, ctx);
      for (const characteristic of readable) await expect(characteristic.handleGetRequest()).resolves.not.toBeUndefined();
      expect(await read(accessory, S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.UNKNOWN);
    });
  });

  describe('cached state and services persist across a restart', () => {
    it('a restart shows the last known state at once, and a ContactSensor created by a door event stays', () => {
      const first = setup();
      first.lock.apply(lockEv('locked', 1), ctx);
      first.lock.apply({ lockId: 'L1', at: 1, kind: 'doorState', state: 'open' }, ctx);
      first.lock.apply({ lockId: 'L1', at: 1, kind: 'battery', device: 'keypad', raw: 'keypad_battery_critical' }, ctx);
      first.lock.dispose();
      const again = setup({ accessory: restartServed(api, first.accessory) });
      expect(again.value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.SECURED);
      expect(again.value(S.LockMechanism, C.LockTargetState)).toBe(C.LockTargetState.SECURED);
      expect(hasService(again.accessory, S.ContactSensor)).toBe(true);
      expect(again.value(S.ContactSensor, C.ContactSensorState)).toBe(1);
      expect(again.value(S.Battery, C.BatteryLevel, KEYPAD_SUBTYPE)).toBe(5);
      expect(again.lock.state.lock).toBe('locked');
    });

    it('"a bad context starts fresh" with a warning', () => {
      const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      storeOf(accessory).write(LOCK_STATE_KEY, { version: 1, lock: 'sideways' }, 'now');
      const { value, captured } = setup({ accessory });
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.UNKNOWN);
      expect(captured.text('warn')).toMatch(/could not be read, so it starts fresh/);
    });

    it('services converge to the config: a ContactSensor no longer wanted and stray services are pruned', () => {
      const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      accessory.addService(new S.Switch('Old switch'));
      const { lock } = setup({ accessory, doorSensor: true });
      expect(hasService(accessory, S.ContactSensor)).toBe(true);
      expect(hasService(accessory, S.Switch)).toBe(false);
      lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false });
      expect(hasService(accessory, S.ContactSensor)).toBe(false);
    });

    it('each part is bound once, and whatever the pass did not bind goes, of any type and subtype (no list of services to keep)', () => {
      const accessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      accessory.addService(new S.Battery('Stray battery', 'solar'));
      accessory.addService(new S.ContactSensor('Old alert', 'left-open'));
      accessory.addService(new S.StatelessProgrammableSwitch('Gone', 'person:u-gone'));
      accessory.addService(new S.Lightbulb('Not ours'));
      setup({ accessory, doorSensor: true });
      const kinds = accessory.services.map((s) => `${s.UUID}/${s.subtype ?? ''}`);
      expect(new Set(kinds).size).toBe(kinds.length);
      expect(hasService(accessory, S.Battery, 'solar')).toBe(false);
      expect(hasService(accessory, S.ContactSensor, 'left-open')).toBe(false);
      expect(hasService(accessory, S.StatelessProgrammableSwitch, 'person:u-gone')).toBe(false);
      expect(hasService(accessory, S.Lightbulb)).toBe(false);
      expect(hasService(accessory, S.ContactSensor)).toBe(true);
      expect(hasService(accessory, S.LockManagement)).toBe(true);
    });

    it('names: lock_name_changed renames the accessory and its services; a changed config name wins again', () => {
      const { lock, accessory, value } = setup();
      lock.apply({ lockId: 'L1', at: 1, kind: 'lockName', name: 'Main Entrance' }, ctx);
      expect(accessory.displayName).toBe('Main Entrance');
      expect(value(S.LockMechanism, C.Name)).toBe('Main Entrance');
      lock.update({ kind: 'lock', id: 'L1', name: 'Porch', doorSensor: false });
      expect(accessory.displayName).toBe('Porch');
      expect(value(S.Battery, C.Name)).toBe('Porch Battery');
    });
  });

  describe('control from Apple Home', () => {
    const target = (accessory: PlatformAccessory) => service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState);

    it('setting LockTargetState calls operate(lockId, action); on success current follows the target', async () => {
      const { accessory, calls, value, lock } = setup();
      lock.apply(lockEv('unlocked', 1), ctx);
      await target(accessory).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      expect(calls.map((c) => [c.lockId, c.action])).toEqual([['L1', 'lock']]);
      // answered at once: HomeKit shows "Locking…" while the command runs
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(0);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(1);
      calls[0]?.resolve();
      await settle();
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(1);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(1);
    });

    it.each([
      ['timeout', 408, /did not answer in time \(408\)\. Try again in a moment\./],
      ['noBridge', 409, /has no Wi-Fi bridge.*\(409\)\. Remote control needs a Lock Access Wi-Fi bridge paired with this lock\./],
      ['offline', 422, /bridge is offline \(422\)\. Check that the bridge has power and Wi-Fi\./],
      ['busy', 423, /busy with another command \(423\)\. Try again in a moment\./],
    ] as [BridgeProblem, number, RegExp][])('bridge %s (%i): the target reverts and the log says which', async (problem, status, words) => {
      const { accessory, calls, value, lock, captured } = setup();
      lock.apply(lockEv('locked', 1), ctx);
      await target(accessory).handleSetRequest(C.LockTargetState.UNSECURED);
      await settle();
      calls[0]?.reject(new BridgeError(problem, status));
      await settle();
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(C.LockTargetState.SECURED);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.SECURED);
      expect(captured.text('error')).toMatch(/Front Door: could not unlock from Apple Home: /);
      expect(captured.text('error')).toMatch(words);
    });

    it('any other error also reverts the target, to the opposite of the failed command when the state is unknown', async () => {
      const { accessory, calls, value, captured } = setup();
      await target(accessory).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      calls[0]?.reject(new RequestRejectedError('the service refused the command (400)', 400));
      await settle();
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(C.LockTargetState.UNSECURED);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.UNKNOWN);
      expect(captured.text('error')).toMatch(/could not lock from Apple Home: the service refused the command \(400\)/);
    });

    it('"a command in flight is not repeated": setting the same target again joins it', async () => {
      const { accessory, calls, value } = setup();
      await target(accessory).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      await target(accessory).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      expect(calls).toHaveLength(1);
      calls[0]?.resolve();
      await settle();
      expect(calls).toHaveLength(1);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(1);
    });

    it('concurrent commands are serialised: unlock waits for the running lock, and the final state is the last wish', async () => {
      const { accessory, calls, value } = setup();
      await target(accessory).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      await target(accessory).handleSetRequest(C.LockTargetState.UNSECURED);
      await settle();
      expect(calls.map((c) => c.action)).toEqual(['lock']);
      calls[0]?.resolve();
      await settle();
      expect(calls.map((c) => c.action)).toEqual(['lock', 'unlock']);
      // the waiting unlock keeps its target while the lock's success is shown
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(0);
      calls[1]?.resolve();
      await settle();
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(0);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(0);
    });
  });

  describe('other publishers follow the same lock state and share its command serialiser', () => {
    it('onChange gets every applied event with the new state; an event ordering ignores comes as stale and moves nothing; unsubscribing stops it', () => {
      const { lock } = setup();
      const changes: LockChange[] = [];
      const stop = lock.onChange((change) => changes.push(change));
      lock.apply(lockEv('locked', 2_000), ctx);
      lock.apply(lockEv('unlocked', 1_000), ctx);
      expect(changes).toHaveLength(2);
      expect(changes[0]).toMatchObject({ cause: 'event', state: { lock: 'locked' }, event: { kind: 'lockState', state: 'locked' }, context: ctx, byAutoLock: false });
      expect(changes[1]).toMatchObject({ cause: 'stale', state: { lock: 'locked' }, event: { kind: 'lockState', state: 'unlocked' } });
      stop();
      lock.apply(lockEv('unlocked', 3_000), ctx);
      expect(changes).toHaveLength(2);
    });

    it('a command that succeeded is a change too, so a follower sees what HomeKit shows', async () => {
      const { accessory, lock, calls } = setup();
      const changes: LockChange[] = [];
      lock.onChange((change) => changes.push(change));
      await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      calls[0]?.resolve();
      await settle();
      expect(changes).toEqual([{ cause: 'command', state: lock.state, action: 'lock', origin: 'Apple Home', settled: true }]);
      expect(lock.state.lock).toBe('locked');
    });

    it('a follower that throws is logged and HomeKit still shows the change', () => {
      const { lock, value, captured } = setup();
      lock.onChange(() => {
        throw new Error('endpoint gone');
      });
      lock.apply(lockEv('locked', 1), ctx);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.SECURED);
      expect(captured.text('error')).toMatch(/Front Door: a follower of its state failed \(endpoint gone\)/);
    });

    it('command() resolves when the command succeeded, and joins one already running instead of sending it twice', async () => {
      const { accessory, lock, calls, value, captured } = setup();
      await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
      await settle();
      let settled = false;
      const done = lock.command('lock', 'Matter').then(() => (settled = true));
      await settle();
      expect(calls).toHaveLength(1);
      expect(settled).toBe(false);
      calls[0]?.resolve();
      await done;
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.SECURED);
      expect(captured.text('info')).toMatch(/Front Door: locked from Apple Home\./);
    });

    it('command() rejects with the cause when the command failed, and the log names who asked', async () => {
      const { lock, calls, value, captured } = setup();
      lock.apply(lockEv('locked', 1), ctx);
      const outcome = lock.command('unlock', 'Matter');
      await settle();
      expect(calls.map((c) => c.action)).toEqual(['unlock']);
      const failure = new BridgeError('offline', 422);
      calls[0]?.reject(failure);
      await expect(outcome).rejects.toBe(failure);
      expect(value(S.LockMechanism, C.LockCurrentState)).toBe(C.LockCurrentState.SECURED);
      expect(value(S.LockMechanism, C.LockTargetState)).toBe(C.LockTargetState.SECURED);
      expect(captured.text('info')).toMatch(/Front Door: unlocking from Matter\./);
      expect(captured.text('error')).toMatch(/Front Door: could not unlock from Matter: the lock's Wi-Fi bridge is offline \(422\)\. Check that the bridge has power and Wi-Fi\./);
    });

    it('command() on a lock no longer served rejects without calling the service', async () => {
      const { lock, calls } = setup();
      lock.dispose();
      await expect(lock.command('lock', 'Matter')).rejects.toThrow(/no longer served/);
      expect(calls).toHaveLength(0);
    });
  });
});
