import { describe, expect, it } from 'vitest';

import type { OwnAction } from '../../src/model/event-words.js';
import type { DeviceEvent, DoorbellEvent, LockEvent } from '../../src/model/events.js';
import { EventRouter, type EventSink, type RoutedDevices, type RoutedEvent } from '../../src/callbacks/event-router.js';

const NOW = 1_700_000_000_000;
const context = { receivedAt: NOW, signedAt: NOW - 1_000 };
const person = { kind: 'person', userId: 'U1', firstName: 'Ada' } as const;

const locked = (lockId: string, at?: number): LockEvent => ({ lockId, at, kind: 'lockState', state: 'locked', source: 'operation', device: 'lock', actor: person });
const online = (lockId: string, value: boolean): LockEvent => ({ lockId, at: undefined, kind: 'online', online: value });
const member = (lockId: string, change: 'added' | 'removed' | 'userType', viaUserHook = true): LockEvent => ({ lockId, at: NOW, kind: 'membership', change, user: person, viaUserHook });
const pressed = (doorbellId: string): DoorbellEvent => ({ doorbellId, at: NOW - 500, kind: 'doorbellPress', dvrId: 'dvr-1' });
const deleted: DeviceEvent = { at: undefined, kind: 'accountDeleted', event: 'user_deleted' };

/** A recording sink per device id, standing in for the accessories the registry holds. */
function sinks<E>(own?: OwnAction) {
  const got = new Map<string, E[]>();
  const known = new Set<string>();
  return {
    got,
    known,
    lookup: (id: string): EventSink<E, OwnAction | undefined> | undefined =>
      known.has(id)
        ? {
            apply: (event) => {
              got.set(id, [...(got.get(id) ?? []), event]);
              return own;
            },
          }
        : undefined,
  };
}

function setup(options: { locks?: string[]; doorbells?: string[]; onMembership?: (lockId: string) => void; own?: OwnAction } = {}) {
  const locks = sinks<LockEvent>(options.own);
  const doorbells = sinks<DoorbellEvent>();
  for (const id of options.locks ?? []) locks.known.add(id);
  for (const id of options.doorbells ?? []) doorbells.known.add(id);
  const calls: string[] = [];
  const records: RoutedEvent[] = [];
  const lines: string[] = [];
  const devices: RoutedDevices = {
    lock: locks.lookup,
    doorbell: doorbells.lookup,
    nameOf: (kind, id) => (locks.known.has(id) || doorbells.known.has(id) ? `Name of ${kind} ${id}` : id),
  };
  const router = new EventRouter(devices, { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m), debug: () => undefined });
  router.routed.follow((routed) => records.push(routed));
  router.accountChanged.follow((change) => {
    if (change.kind === 'deleted') {
      calls.push('account deleted');
      return;
    }
    calls.push(`membership ${change.lockId} ${change.change}`);
    options.onMembership?.(change.lockId);
  });
  /** Routes one callback's events, then notes its end (what a follower heard comes before). */
  const route = (events: DeviceEvent[]) => {
    router.route(events, context);
    calls.push('routed');
  };
  return { router, route, locks, doorbells, calls, records, lines };
}

describe('each event goes to the device it names, keyed by device id', () => {
  it('lock and doorbell events reach only their own accessory, in order', () => {
    const { router, locks, doorbells } = setup({ locks: ['L1', 'L2'], doorbells: ['D1'] });
    router.route([locked('L1', 1), pressed('D1'), locked('L2', 2), locked('L1', 3)], context);
    expect(locks.got.get('L1')?.map((e) => e.at)).toEqual([1, 3]);
    expect(locks.got.get('L2')?.map((e) => e.at)).toEqual([2]);
    expect(doorbells.got.get('D1')).toEqual([pressed('D1')]);
  });

  it('every event is recorded for the event log and status, with its own time or else the arrival time', () => {
    const { router, records } = setup({ locks: ['L1'], doorbells: ['D1'] });
    router.route([locked('L1', 1_000), online('L1', false), pressed('D1')], context);
    expect(records).toEqual([
      { deviceKind: 'lock', deviceId: 'L1', deviceName: 'Name of lock L1', event: locked('L1', 1_000), at: 1_000, receivedAt: NOW },
      { deviceKind: 'lock', deviceId: 'L1', deviceName: 'Name of lock L1', event: online('L1', false), at: NOW, receivedAt: NOW },
      { deviceKind: 'doorbell', deviceId: 'D1', deviceName: 'Name of doorbell D1', event: pressed('D1'), at: NOW - 500, receivedAt: NOW },
    ]);
  });

  it('what the device says it did itself (the lock callback of its own auto-lock) goes with the record', () => {
    const { router, records } = setup({ locks: ['L1'], own: { autoLockSeconds: 30 } });
    router.route([locked('L1', 1_000)], context);
    expect(records).toEqual([{ deviceKind: 'lock', deviceId: 'L1', deviceName: 'Name of lock L1', event: locked('L1', 1_000), at: 1_000, receivedAt: NOW, own: { autoLockSeconds: 30 } }]);
  });

  it('an event for a device HomeKit does not show is logged in words as not shown, and still recorded', () => {
    const { router, records, lines, locks } = setup();
    router.route([locked('LX', 1), pressed('DX')], context);
    expect(locks.got.size).toBe(0);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^LX: .+ \(not shown in HomeKit\)$/);
    expect(lines[1]).toMatch(/^DX: .+ \(not shown in HomeKit\)$/);
    expect(records.map((r) => `${r.deviceKind}:${r.deviceId}`)).toEqual(['lock:LX', 'doorbell:DX']);
  });

  it('a follower that stops following hears nothing more', () => {
    const { router, route } = setup({ locks: ['L1'] });
    const heard: RoutedEvent[] = [];
    const stop = router.routed.follow((routed) => heard.push(routed));
    route([locked('L1', 1)]);
    stop();
    route([locked('L1', 2)]);
    expect(heard.map((r) => r.event.at)).toEqual([1]);
  });

  it('a recording for an unknown or hidden doorbell: one line saying it is not shown, recorded, and no other doorbell gets it', () => {
    const { router, records, lines, doorbells } = setup({ doorbells: ['D1'] });
    const recording: DoorbellEvent = { doorbellId: 'HIDDEN', at: NOW, kind: 'videoAvailable', dvrId: 'dvr-9', cause: 'buttonpush' };
    expect(() => {
      router.route([recording], context);
    }).not.toThrow();
    expect(doorbells.got.size).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^HIDDEN: .+ \(not shown in HomeKit\)$/);
    expect(records.map((r) => `${r.deviceKind}:${r.deviceId}:${r.event.kind}`)).toEqual(['doorbell:HIDDEN:videoAvailable']);
  });
});

describe('membership changes from the user webhook', () => {
  it('lock_user_add / lock_user_remove on the user webhook are passed on, before the lock sees the event', () => {
    const seen: string[] = [];
    const box: { got?: Map<string, LockEvent[]> } = {};
    const { route, calls, locks } = setup({ locks: ['L1', 'L2'], onMembership: (id) => seen.push(`${id} had ${String(box.got?.get(id)?.length ?? 0)}`) });
    box.got = locks.got;
    route([member('L1', 'removed'), member('L2', 'added')]);
    expect(calls).toEqual(['membership L1 removed', 'membership L2 added', 'routed']);
    expect(seen).toEqual(['L1 had 0', 'L2 had 0']);
    expect(locks.got.get('L1')).toHaveLength(1);
  });

  it('a lock removed by the membership change has no accessory left, so its event is logged as not shown', () => {
    const box: { known?: Set<string> } = {};
    const { router, lines, locks } = setup({ locks: ['L1'], onMembership: (id) => box.known?.delete(id) });
    box.known = locks.known;
    router.route([member('L1', 'removed')], context);
    expect(locks.got.get('L1')).toBeUndefined();
    expect(lines[0]).toMatch(/^L1: .+ \(not shown in HomeKit\)$/);
  });

  it('other membership changes, and those from a lock webhook, change no device set', () => {
    const { route, calls, locks } = setup({ locks: ['L1'] });
    route([member('L1', 'userType'), member('L1', 'added', false)]);
    expect(calls).toEqual(['routed']);
    expect(locks.got.get('L1')).toHaveLength(2);
  });
});

describe('a lifecycle callback is the account-deleted notice', () => {
  it('it is recorded for the account and unlinks', () => {
    const { route, calls, records } = setup();
    route([deleted]);
    expect(records).toEqual([{ deviceKind: 'account', deviceId: 'account', deviceName: 'Account', event: deleted, at: NOW, receivedAt: NOW }]);
    expect(calls).toEqual(['account deleted', 'routed']);
  });
});
