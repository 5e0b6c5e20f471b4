import { describe, expect, it } from 'vitest';

import type { LockChange } from '../../src/homekit/lock-accessory.js';
import { initialLockState, type LockState } from '../../src/model/lock-state.js';
import { CommandReachability, type FollowedLock } from '../../src/runtime/command-reachability.js';
import type { WantedDevice } from '../../src/runtime/wanted-device.js';

/** A lock as the follower sees it: a state and the changes it announces. */
class AnnouncingLock implements FollowedLock {
  state: LockState;
  readonly listeners = new Set<(change: LockChange) => void>();

  constructor(online: boolean) {
    this.state = { ...initialLockState(), online };
  }

  onChange(listener: (change: LockChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  commandSucceeded(online: boolean): void {
    this.state = { ...this.state, online, lock: 'locked' };
    for (const listener of this.listeners) listener({ cause: 'command', state: this.state, action: 'lock' });
  }

  eventApplied(online: boolean): void {
    this.state = { ...this.state, online };
    for (const listener of this.listeners) listener({ cause: 'event', state: this.state, event: { kind: 'online', online, lockId: 'A', at: undefined } });
  }
}

const lockEntry = (id: string): WantedDevice => ({ kind: 'lock', id, name: id, doorSensor: false, doorSensorOnly: false });

function setUp(locks: Record<string, AnnouncingLock>) {
  const published: string[] = [];
  const follower = new CommandReachability({ lock: (id) => locks[id], reachabilityChanged: (id) => published.push(id) });
  return { follower, published };
}

describe('a successful remote command proves the bridge reachable, and the status file follows', () => {
  it('publishes when a command brings an offline lock back, not when it was online already', () => {
    const offline = new AnnouncingLock(false);
    const online = new AnnouncingLock(true);
    const { follower, published } = setUp({ A: offline, B: online });
    follower.sync([lockEntry('A'), lockEntry('B')], true);
    online.commandSucceeded(true);
    expect(published).toEqual([]);
    offline.commandSucceeded(true);
    expect(published).toEqual(['A']);
    offline.commandSucceeded(true);
    expect(published).toEqual(['A']);
  });

  it('leaves events to the router: an online event is not published twice', () => {
    const lock = new AnnouncingLock(false);
    const { follower, published } = setUp({ A: lock });
    follower.sync([lockEntry('A')], true);
    lock.eventApplied(true);
    expect(published).toEqual([]);
    // The follower still knows the lock is online now, so a later command changes nothing.
    lock.commandSucceeded(true);
    expect(published).toEqual([]);
  });

  it('follows each lock once, and stops following locks that leave, are removed or at shutdown', () => {
    const lock = new AnnouncingLock(false);
    const { follower } = setUp({ A: lock });
    follower.sync([lockEntry('A')], false);
    follower.sync([lockEntry('A')], false);
    expect(lock.listeners.size).toBe(1);
    follower.sync([], false);
    expect(lock.listeners.size).toBe(1);
    follower.sync([], true);
    expect(lock.listeners.size).toBe(0);
    follower.sync([lockEntry('A')], true);
    follower.remove('lock', 'A');
    expect(lock.listeners.size).toBe(0);
    follower.sync([lockEntry('A')], true);
    follower.disposeAll();
    expect(lock.listeners.size).toBe(0);
  });
});
