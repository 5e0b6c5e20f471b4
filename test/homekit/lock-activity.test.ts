// Who and how on real HAP objects of Homebridge 1 and 2: LockManagement and its last
// action, one switch per person, door-sensor-only locks, and Eve's door history.
import type { Characteristic, PlatformAccessory } from 'homebridge';
import { afterEach, describe, expect, it } from 'vitest';

import type { Actor, LockEvent } from '../../src/model/events.js';
import { EVE_HISTORY_SERVICE_UUID } from '../../src/homekit/eve-characteristics.js';
import { lockUuid } from '../../src/homekit/lock-accessory.js';
import { lastKnownAction } from '../../src/homekit/lock-management-service.js';
import { LAST_ACTIONS } from '../../src/model/last-action.js';
import type { Person } from '../../src/model/device-entry.js';
import { describeCommandFailure } from '../../src/cloud/command-failure.js';
import { captureLog, hapEnvs, hasService, newAccessory, service } from './hap-env.js';
import { serveLock, type LockDeps , restartServed } from './serve-device.js';
import type { LockEntry } from '../../src/model/device-entry.js';
import type { LockDevice } from '../../src/model/lock-device.js';

const NOW = 1_800_000_000_000;
const ctx = { receivedAt: NOW, signedAt: NOW };
const jamie: Actor = { kind: 'person', userId: 'u-jamie', firstName: 'Jamie', lastName: 'Guest' };
const alex: Actor = { kind: 'person', userId: 'u-alex', firstName: 'Alex', lastName: 'Example' };
const people: Person[] = [{ userId: 'u-jamie', name: 'Jamie' }, { userId: 'u-alex', name: 'Alex' }];
let seq = 0;
const op = (state: 'locked' | 'unlocked', extra: Partial<Extract<LockEvent, { kind: 'lockState' }>> = {}): LockEvent => {
  seq += 1;
  return { lockId: 'L1', at: NOW - 1_000 + seq, eventId: `ev-${seq}`, kind: 'lockState', state, source: 'operation', device: 'lock', actor: jamie, ...extra };
};
const door = (state: 'open' | 'closed' | 'ajar', at: number): LockEvent => ({ lockId: 'L1', at, kind: 'doorState', state });

describe.each(hapEnvs)('who and how on $label', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;
  const made: LockDevice[] = [];
  afterEach(() => {
    for (const lock of made.splice(0)) lock.dispose();
  });

  let clock = NOW;
  function setup(entry: Partial<LockEntry> = {}, accessory: PlatformAccessory = newAccessory(api, 'Front Door', lockUuid(api, 'L1'))) {
    clock = NOW;
    const captured = captureLog();
    const deps: LockDeps = { api, log: captured.log, operate: () => Promise.resolve(), describeCommandFailure, now: () => clock };
    const lock = serveLock(deps, accessory, { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false, ...entry });
    made.push(lock);
    return { lock, accessory, captured };
  }

  /** ProgrammableSwitchEvent values sent by the person's switch, as a subscribed controller gets them. */
  function presses(accessory: PlatformAccessory, userId: string): number[] {
    const events: number[] = [];
    service(accessory, S.StatelessProgrammableSwitch, `person:${userId}`)
      .getCharacteristic(C.ProgrammableSwitchEvent)
      .on('change', (change: { newValue: unknown }) => events.push(Number(change.newValue)));
    return events;
  }

  const lastAction = (accessory: PlatformAccessory) => service(accessory, S.LockManagement).characteristics.find((c) => c.UUID === C.LockLastKnownAction.UUID)?.value;

  describe('LockManagement', () => {
    it('every lock has LockManagement with Version "1.0" and LockLastKnownAction from its first publication (HAP\'s 0 until the first operation)', () => {
      const { accessory } = setup();
      const management = service(accessory, S.LockManagement);
      expect(management.getCharacteristic(C.Version).value).toBe('1.0');
      expect(management.testCharacteristic(C.LockControlPoint)).toBe(true);
      expect(management.testCharacteristic(C.LockLastKnownAction)).toBe(true);
      expect(lastAction(accessory)).toBe(0);
    });

    it('a cached accessory of an earlier version, whose LockManagement lacks LockLastKnownAction, gets it at start-up', () => {
      const cached = newAccessory(api, 'Front Door', lockUuid(api, 'L1'));
      const old = cached.addService(S.LockManagement, 'Front Door Management');
      expect(old.testCharacteristic(C.LockLastKnownAction)).toBe(false);
      const { accessory } = setup({}, cached);
      expect(service(accessory, S.LockManagement).testCharacteristic(C.LockLastKnownAction)).toBe(true);
    });

    it('LockLastKnownAction follows applied operations and Apple Home commands; status reports and older events change nothing', async () => {
      const { lock, accessory } = setup();
      lock.apply(op('unlocked'), ctx);
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.UNSECURED_REMOTELY);
      lock.apply(op('locked', { device: 'keypad' }), ctx);
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.SECURED_BY_KEYPAD);
      lock.apply(op('unlocked', { actor: { kind: 'manual', userId: 'manualunlock' } }), ctx);
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.UNSECURED_PHYSICALLY);
      lock.apply(op('locked', { source: 'status' }), ctx);
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.UNSECURED_PHYSICALLY);
      lock.apply(op('locked', { at: 1 }), ctx);
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.UNSECURED_PHYSICALLY);
      await service(accessory, S.LockMechanism).getCharacteristic(C.LockTargetState).handleSetRequest(C.LockTargetState.SECURED);
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(lastAction(accessory)).toBe(C.LockLastKnownAction.SECURED_REMOTELY);
    });

    it('the last action survives a restart (Homebridge\'s accessory cache)', () => {
      const first = setup();
      first.lock.apply(op('locked', { device: 'keypad' }), ctx);
      first.lock.dispose();
      const again = setup({}, restartServed(api, first.accessory));
      expect(lastAction(again.accessory)).toBe(C.LockLastKnownAction.SECURED_BY_KEYPAD);
      expect(service(again.accessory, S.LockManagement).getCharacteristic(C.Version).value).toBe('1.0');
    });
  });

  describe('a switch per person', () => {
    it('each person gets a StatelessProgrammableSwitch "person:<userId>" with their name and a ServiceLabelIndex; single and double press only', () => {
      const { accessory } = setup({ people });
      expect(service(accessory, S.ServiceLabel).getCharacteristic(C.ServiceLabelNamespace).value).toBe(C.ServiceLabelNamespace.ARABIC_NUMERALS);
      const [first, second] = people.map((p) => service(accessory, S.StatelessProgrammableSwitch, `person:${p.userId}`));
      expect(first?.getCharacteristic(C.Name).value).toBe('Jamie');
      expect(first?.getCharacteristic(C.ConfiguredName).value).toBe('Jamie');
      expect(first?.getCharacteristic(C.ServiceLabelIndex).value).toBe(1);
      expect(second?.getCharacteristic(C.ServiceLabelIndex).value).toBe(2);
      expect(first?.getCharacteristic(C.ProgrammableSwitchEvent).props.validValues).toEqual([0, 1]);
    });

    it('unlock by the person: SINGLE_PRESS, lock: DOUBLE_PRESS; never another person\'s, never a status, a redelivery, an older or a late event', () => {
      const { lock, accessory, captured } = setup({ people });
      const jamiePresses = presses(accessory, 'u-jamie');
      const alexPresses = presses(accessory, 'u-alex');
      const unlock = op('unlocked');
      lock.apply(unlock, ctx);
      lock.apply(unlock, ctx); // the same event again
      lock.apply(op('locked', { device: 'keypad' }), ctx);
      lock.apply(op('locked', { source: 'status' }), ctx);
      lock.apply(op('unlocked', { at: 5 }), ctx); // older than the last applied one
      lock.apply(op('unlocked', { at: NOW - 90_000, eventId: 'late' }), { ...ctx, receivedAt: NOW + 1 }); // applied? older too; and late
      expect(jamiePresses).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS, C.ProgrammableSwitchEvent.DOUBLE_PRESS]);
      expect(alexPresses).toEqual([]);
      lock.apply(op('unlocked', { actor: alex }), ctx);
      expect(alexPresses).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS]);
      expect(jamiePresses).toHaveLength(2);
      expect(captured.text('info')).toMatch(/Jamie's automation trigger stays quiet: the same event arrived twice/);
    });

    it('a late event (over 60 s by its own time) still sets the lock state but presses nothing', () => {
      const { lock, accessory } = setup({ people });
      const events = presses(accessory, 'u-jamie');
      lock.apply(op('unlocked', { at: NOW - 61_000 }), ctx);
      expect(service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value).toBe(C.LockCurrentState.UNSECURED);
      expect(events).toEqual([]);
    });

    it('switches converge: a person removed from the config loses their switch, a renamed one is renamed, none leaves the label', () => {
      const { lock, accessory } = setup({ people });
      lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false, people: [{ userId: 'u-alex', name: 'Alex E.' }] });
      expect(hasService(accessory, S.StatelessProgrammableSwitch, 'person:u-jamie')).toBe(false);
      const alexSwitch = service(accessory, S.StatelessProgrammableSwitch, 'person:u-alex');
      expect(alexSwitch.getCharacteristic(C.ConfiguredName).value).toBe('Alex E.');
      expect(alexSwitch.getCharacteristic(C.ServiceLabelIndex).value).toBe(1);
      lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false, people: [] });
      expect(accessory.services.some((s) => s.UUID === S.StatelessProgrammableSwitch.UUID)).toBe(false);
      expect(hasService(accessory, S.ServiceLabel)).toBe(false);
    });
  });

  it('converging again and again keeps one ConfiguredName per switch: HAP would keep every optional template it is handed', () => {
    const { lock, accessory } = setup({ people });
    const templates = () => service(accessory, S.StatelessProgrammableSwitch, 'person:u-alex').optionalCharacteristics.filter((c) => c.UUID === C.ConfiguredName.UUID).length;
    const before = templates();
    for (let i = 0; i < 5; i += 1) lock.update({ kind: 'lock', id: 'L1', name: `Front Door ${String(i)}`, doorSensor: false, people });
    expect(before).toBe(1);
    expect(templates()).toBe(1);
  });

  describe('doorSensorOnly', () => {
    it('no LockMechanism or LockManagement; ContactSensor primary; batteries and person switches stay; door events still arrive', () => {
      const { lock, accessory } = setup({ doorSensorOnly: true, people });
      expect(hasService(accessory, S.LockMechanism)).toBe(false);
      expect(hasService(accessory, S.LockManagement)).toBe(false);
      expect(service(accessory, S.ContactSensor).isPrimaryService).toBe(true);
      expect(hasService(accessory, S.Battery)).toBe(true);
      expect(hasService(accessory, S.StatelessProgrammableSwitch, 'person:u-jamie')).toBe(true);
      const events = presses(accessory, 'u-jamie');
      lock.apply(door('open', NOW - 10), ctx);
      expect(service(accessory, S.ContactSensor).getCharacteristic(C.ContactSensorState).value).toBe(C.ContactSensorState.CONTACT_NOT_DETECTED);
      lock.apply(op('unlocked'), ctx);
      expect(events).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS]);
    });

    it('switching it on and off converges the cached accessory (services added and pruned, primary moved) without a new accessory', () => {
      const first = setup({ people });
      first.lock.apply(op('locked', { device: 'keypad' }), ctx);
      first.lock.dispose();
      const cached = restartServed(api, first.accessory);
      const sensorOnly = setup({ doorSensorOnly: true, people }, cached);
      expect(hasService(cached, S.LockMechanism)).toBe(false);
      expect(hasService(cached, S.LockManagement)).toBe(false);
      expect(service(cached, S.ContactSensor).isPrimaryService).toBe(true);
      sensorOnly.lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false, doorSensorOnly: false, people });
      expect(service(cached, S.LockMechanism).isPrimaryService).toBe(true);
      expect(hasService(cached, S.LockManagement)).toBe(true);
      // The door sensor was only there for door-sensor-only: without doorSensor or a door event it goes.
      expect(hasService(cached, S.ContactSensor)).toBe(false);
      expect(cached.UUID).toBe(first.accessory.UUID);
    });
  });

  describe('door history in Eve', () => {
    const history = (acc: PlatformAccessory) => acc.services.find((s) => s.UUID === EVE_HISTORY_SERVICE_UUID);
    const eve = (acc: PlatformAccessory, uuid: string): Characteristic | undefined =>
      acc.services.flatMap((s) => s.characteristics).find((c) => c.UUID.startsWith(uuid));
    /** One read of Eve's HistoryEntries, decoded from base64. */
    const readEntries = async (acc: PlatformAccessory): Promise<Buffer> => {
      const value: unknown = await eve(acc, 'E863F117')?.handleGetRequest();
      if (typeof value !== 'string') throw new Error('HistoryEntries gave no data');
      return Buffer.from(value, 'base64');
    };

    it('a contact sensor brings Eve\'s history service, opening count and last-opened time; without one they are pruned', () => {
      const { lock, accessory } = setup({ doorSensor: true });
      expect(history(accessory)).toBeDefined();
      clock = NOW + 60_000;
      // Each door report is sent as it happens: signed at its own time.
      const sentAt = (at: number) => ({ receivedAt: at, signedAt: at });
      lock.apply(door('closed', NOW + 10_000), sentAt(NOW + 10_000));
      lock.apply(door('open', NOW + 20_000), sentAt(NOW + 20_000));
      lock.apply(door('ajar', NOW + 30_000), sentAt(NOW + 30_000));
      lock.apply(door('closed', NOW + 40_000), sentAt(NOW + 40_000));
      lock.apply(door('open', NOW + 50_000), sentAt(NOW + 50_000));
      expect(eve(accessory, 'E863F129')?.value).toBe(2);
      // Seconds from the history's start (when the accessory first ran) to the last opening.
      expect(eve(accessory, 'E863F11A')?.value).toBe(50);
      // A door time ahead of this machine's clock (here the service's clock runs 2 minutes ahead,
      // within the tolerance) counts as now.
      lock.apply(door('closed', NOW + 55_000), sentAt(NOW + 55_000));
      lock.apply(door('open', NOW + 180_000), sentAt(NOW + 180_000));
      expect(eve(accessory, 'E863F11A')?.value).toBe(60);
      // A lock clock 30 s fast: the opening is recorded at its time in the service's clock.
      clock = NOW + 600_000;
      lock.apply(door('closed', NOW + 330_000), sentAt(NOW + 300_000));
      lock.apply(door('open', NOW + 430_000), sentAt(NOW + 400_000));
      expect(eve(accessory, 'E863F11A')?.value).toBe(400);
      lock.update({ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false });
      // A door event was seen, so the sensor (and its history) stays.
      expect(history(accessory)).toBeDefined();
      const plain = setup({}, newAccessory(api, 'Back Door', lockUuid(api, 'L2')));
      expect(history(plain.accessory)).toBeUndefined();
    });

    it('Eve reads the history: request entry 1, then entries until 00; reads fail while the lock is offline and work again after', async () => {
      const { lock, accessory } = setup({ doorSensor: true });
      lock.apply(door('open', NOW), ctx);
      lock.apply(door('closed', NOW), ctx);
      const request = eve(accessory, 'E863F11C');
      const entries = eve(accessory, 'E863F117');
      await request?.handleSetRequest(Buffer.from('000001000000', 'hex').toString('base64'));
      const chunk = await readEntries(accessory);
      expect(chunk.readUInt8(0)).toBe(21);
      expect(chunk.length).toBe(21 + 11 + 11);
      expect((await readEntries(accessory)).toString('hex')).toBe('00');
      lock.apply({ lockId: 'L1', at: NOW, kind: 'online', online: false }, ctx);
      await expect(entries?.handleGetRequest()).rejects.toBe(api.hap.HAPStatus.SERVICE_COMMUNICATION_FAILURE);
      lock.apply({ lockId: 'L1', at: NOW + 1, kind: 'online', online: true }, ctx);
      await request?.handleSetRequest(Buffer.from('000002000000', 'hex').toString('base64'));
      expect((await readEntries(accessory)).readUInt8(0)).toBe(11);
    });

    it('Eve\'s reset button clears the opening count; after a restart the history answers again', async () => {
      const { lock, accessory } = setup({ doorSensor: true });
      lock.apply(door('open', NOW), ctx);
      expect(eve(accessory, 'E863F129')?.value).toBe(1);
      await eve(accessory, 'E863F112')?.handleSetRequest(800_000_000);
      expect(eve(accessory, 'E863F129')?.value).toBe(0);
      lock.dispose();
      const again = setup({ doorSensor: true }, restartServed(api, accessory));
      expect(again.accessory.services.filter((s) => s.UUID === EVE_HISTORY_SERVICE_UUID)).toHaveLength(1);
      await eve(again.accessory, 'E863F11C')?.handleSetRequest(Buffer.from('000001000000', 'hex').toString('base64'));
      // The history is the lock's and survives: Eve's transfer starts with the reference record again.
      expect((await readEntries(again.accessory)).readUInt8(0)).toBe(21);
    });
  });
});

describe.each(hapEnvs)('the last action as HomeKit says it, on $label', ({ api }) => {
  it('each model word is its LockLastKnownAction number (keypad 4/5, remotely 6/7, auto-secure timeout 8, physically 9/10)', () => {
    const numbers = Object.fromEntries(LAST_ACTIONS.map((action) => [action, lastKnownAction(api, action)]));
    expect(numbers).toEqual({ securedByKeypad: 4, unsecuredByKeypad: 5, securedRemotely: 6, unsecuredRemotely: 7, securedPhysically: 9, unsecuredPhysically: 10, securedByAutoLock: 8 });
  });
});
