import { describe, expect, it } from 'vitest';

import {
  applyMembership,
  configuredDevices,
  discoveredSet,
  isHidden,
  NO_MEMBERSHIP_CHANGES,
  startupDevices,
  withMembershipChange,
} from '../../src/cloud/device-set.js';
import { checkConfig } from '../../src/config.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { runtimeConfig } from '../runtime/config-fixture.js';

const config = (devices: { locks?: unknown[]; doorbells?: unknown[]; discoverDevices?: boolean }) => runtimeConfig(devices);

const lock = (id: string, name: string, doorSensor = false): DeviceEntry => ({ kind: 'lock', id, name, doorSensor });
const doorbell = (id: string, name: string, motionTimeoutSeconds = 30): DeviceEntry => ({ kind: 'doorbell', id, name, motionTimeoutSeconds });

describe('the configured devices, hidden entries excluded', () => {
  it('config entries become wanted devices with their options; a missing name is "Lock <id>" / "Doorbell <id>"', () => {
    const c = config({ locks: [{ id: 'L1', name: 'Front Door', doorSensor: true }, { id: 'L2' }], doorbells: [{ id: 'D1', motionTimeoutSeconds: 12 }] });
    expect(configuredDevices(c)).toEqual([lock('L1', 'Front Door', true), lock('L2', 'Lock L2'), doorbell('D1', 'Doorbell D1', 12)]);
  });

  it('"hidden": true excludes a device of either kind', () => {
    const c = config({ locks: [{ id: 'L1', hidden: true }, { id: 'L2' }], doorbells: [{ id: 'D1', hidden: true }] });
    expect(configuredDevices(c)).toEqual([lock('L2', 'Lock L2')]);
    expect(isHidden(c, 'lock', 'L1')).toBe(true);
    expect(isHidden(c, 'doorbell', 'D1')).toBe(true);
    expect(isHidden(c, 'lock', 'L2')).toBe(false);
    expect(isHidden(c, 'doorbell', 'L1')).toBe(false);
  });
});

describe('before the service is asked, cached devices are served with the configured ones', () => {
  const remembered = [lock('L1', 'Old name'), lock('L9', 'Garage'), doorbell('D9', 'Gate'), lock('LH', 'Hidden one')];

  it('with discovery: the configured devices, then cached ones the config neither lists nor hides', () => {
    const c = config({ locks: [{ id: 'L1', name: 'Front Door' }, { id: 'LH', hidden: true }] });
    expect(startupDevices(c, remembered)).toEqual([lock('L1', 'Front Door'), lock('L9', 'Garage'), doorbell('D9', 'Gate')]);
  });

  it('without discovery: only the configured devices (cached extras are not kept)', () => {
    const c = config({ locks: [{ id: 'L1', name: 'Front Door' }], discoverDevices: false });
    expect(startupDevices(c, remembered)).toEqual([lock('L1', 'Front Door')]);
  });
});

describe('discovered devices merge with the config', () => {
  it('config names and options win, hidden stays out, and each device says where it is known from', () => {
    const c = config({ locks: [{ id: 'L1', name: 'Front Door', doorSensor: true }, { id: 'L3', hidden: true }, { id: 'L4' }] });
    const found = discoveredSet(c, {
      locks: [
        { id: 'L1', name: 'Service name' },
        { id: 'L2', name: 'Back Door' },
        { id: 'L3', name: 'Hidden' },
        { id: 'L5', name: undefined },
      ],
      doorbells: [{ id: 'D1', name: 'Porch' }],
    });
    expect(found.devices).toEqual([lock('L1', 'Front Door', true), lock('L4', 'Lock L4'), lock('L2', 'Back Door'), lock('L5', 'Lock L5'), doorbell('D1', 'Porch')]);
    expect(Object.fromEntries(found.sources)).toEqual({ 'lock:L1': 'both', 'lock:L4': 'config', 'lock:L2': 'service', 'lock:L5': 'service', 'doorbell:D1': 'service' });
    // Only names the service gave: a lock added later by the user webhook is named by them.
    expect(Object.fromEntries(found.serviceLockNames)).toEqual({ L1: 'Service name', L2: 'Back Door', L3: 'Hidden' });
  });
});

describe('locks added or removed by membership callbacks (lock_user_add / lock_user_remove)', () => {
  const c = config({ locks: [{ id: 'L1', name: 'Front Door' }, { id: 'LH', hidden: true }] });
  const devices = [lock('L1', 'Front Door'), doorbell('D1', 'Porch')];

  it('no membership changes leave the devices as they are', () => {
    expect(applyMembership(devices, NO_MEMBERSHIP_CHANGES, c, new Map())).toEqual(devices);
  });

  it('an added lock joins, named by the service when it named it, else "Lock <id>", without a door sensor', () => {
    let membership = withMembershipChange(NO_MEMBERSHIP_CHANGES, 'L2', 'added');
    membership = withMembershipChange(membership, 'L3', 'added');
    expect(applyMembership(devices, membership, c, new Map([['L2', 'Back Door']]))).toEqual([...devices, lock('L2', 'Back Door'), lock('L3', 'Lock L3')]);
  });

  it('an added lock that is already there or hidden in the config is not added again', () => {
    let membership = withMembershipChange(NO_MEMBERSHIP_CHANGES, 'L1', 'added');
    membership = withMembershipChange(membership, 'LH', 'added');
    expect(applyMembership(devices, membership, c, new Map())).toEqual(devices);
  });

  it('a removed lock leaves even when the config or the service lists it; doorbells are untouched', () => {
    const membership = withMembershipChange(NO_MEMBERSHIP_CHANGES, 'L1', 'removed');
    expect(applyMembership(devices, membership, c, new Map())).toEqual([doorbell('D1', 'Porch')]);
  });

  it('the latest word about a lock wins, and earlier states are not changed', () => {
    const added = withMembershipChange(NO_MEMBERSHIP_CHANGES, 'L2', 'added');
    const removed = withMembershipChange(added, 'L2', 'removed');
    const again = withMembershipChange(removed, 'L2', 'added');
    expect(applyMembership(devices, removed, c, new Map())).toEqual(devices);
    expect(applyMembership(devices, again, c, new Map())).toEqual([...devices, lock('L2', 'Lock L2')]);
    expect([...added.added]).toEqual(['L2']);
    expect([...removed.added]).toEqual([]);
    expect(NO_MEMBERSHIP_CHANGES.added.size + NO_MEMBERSHIP_CHANGES.removed.size).toBe(0);
  });
});

describe('a refused entry never lets a device back in', () => {
  // Parsed by the plugin's own config check, as the runtime gets it.
  const checked = (raw: Record<string, unknown>) => {
    const check = checkConfig({ ...runtimeConfig(), ...raw });
    if (!check.ok) throw new Error('config refused');
    return check.config;
  };
  const c = checked({
    locks: [{ id: 'LH', hidden: 'true' }, { id: 'LB', autoLockSeconds: -1 }, { id: 'LS', name: 'Garage', doorSensorOnly: true, leftOpenSeconds: 1 }, { id: 'L1' }],
    doorbells: [{ id: 'DH', hidden: true, motionTimeoutSeconds: 0 }],
  });

  it('discovery does not bring back a hidden or refused device; a refused door-sensor-only entry stays door sensor only', () => {
    const found = discoveredSet(c, { locks: ['LH', 'LB', 'LS', 'L1', 'L2'].map((id) => ({ id, name: `Service ${id}` })), doorbells: [{ id: 'DH', name: 'Porch' }] });
    expect(found.devices).toEqual([{ kind: 'lock', id: 'LS', name: 'Garage', doorSensor: true, doorSensorOnly: true }, lock('L1', 'Service L1'), lock('L2', 'Service L2')]);
  });

  it('the cache of the last run does not bring them back either', () => {
    const remembered = [lock('LH', 'Hidden'), lock('LB', 'Bad'), doorbell('DH', 'Porch'), lock('L9', 'Shed')];
    expect(startupDevices(c, remembered).map((d) => d.id)).toEqual(['LS', 'L1', 'L9']);
  });

  it('nor a membership callback that adds them', () => {
    let membership = withMembershipChange(NO_MEMBERSHIP_CHANGES, 'LH', 'added');
    membership = withMembershipChange(membership, 'LB', 'added');
    expect(applyMembership([], membership, c, new Map())).toEqual([]);
  });

  it('a second entry for the same id cannot show a device that a refused or hidden entry holds out', () => {
    const twice = checked({ locks: [{ id: 'L1', hidden: 'true' }, { id: 'L1', name: 'Front Door' }] });
    expect(configuredDevices(twice)).toEqual([]);
    expect(discoveredSet(twice, { locks: [{ id: 'L1', name: 'Service' }], doorbells: [] }).devices).toEqual([]);
  });

  it('a device list that is no list but an object turns discovery off: nothing comes back from the service or the cache', () => {
    const broken = checked({ locks: { id: 'LH', hidden: true }, doorbells: [{ id: 'D1' }] });
    expect(startupDevices(broken, [lock('LH', 'Hidden'), lock('L9', 'Shed')])).toEqual([doorbell('D1', 'Doorbell D1')]);
  });
});
