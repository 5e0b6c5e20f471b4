// Auto-lock acts only on fresh facts, whatever order the callbacks arrive in and however the lock's
// clock runs: a property over interleavings of door reports, door `unknown`/`init`, the bridge coming
// back online and an unlock, driven through the real lock device (reducer, ordering and guard).
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { memoryStore } from '../../src/model/device-store.js';
import type { LockEvent } from '../../src/model/events.js';
import { LockDevice } from '../../src/model/lock-device.js';

const START = 1_700_000_000_000;
const AUTO_LOCK_SECONDS = 3;
/** The longest a callback is sent after its event (a retry, a bridge uploading its log). */
const MAX_SEND_DELAY_MS = 500;

type Kind = 'closed' | 'unknown' | 'init' | 'offline' | 'online' | 'unlock';
/** What marks a moment the plugin may have missed a door change. */
const missedKinds: ReadonlySet<Kind> = new Set(['unknown', 'init', 'online']);

interface Happening {
  kind: Kind;
  /** Real time after the previous happening. */
  gapMs: number;
  /** Whether the callback carries the event's own time. */
  timed: boolean;
  /** How long after it happened the service sent it (a retry, a bridge uploading its log). */
  sendDelayMs: number;
}

interface World {
  /** How far the lock's clock runs ahead of the service's. */
  lockLeadMs: number;
  /** How far this machine's clock runs ahead of the service's. */
  machineSkewMs: number;
  /** The unit of the signature's `t`. */
  unit: 's' | 'ms';
  happenings: Happening[];
}

const happening = fc.record({
  kind: fc.constantFrom<Kind>('closed', 'unknown', 'init', 'offline', 'online', 'unlock'),
  gapMs: fc.oneof(fc.constant(200), fc.integer({ min: 0, max: 1_500 })),
  timed: fc.boolean(),
  sendDelayMs: fc.integer({ min: 0, max: MAX_SEND_DELAY_MS }),
});

const world: fc.Arbitrary<World> = fc.record({
  // A lead inside the whole-second slack is not learnt; a larger one is.
  lockLeadMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_900 }), fc.integer({ min: 3_000, max: 60_000 })),
  machineSkewMs: fc.integer({ min: -3_000, max: 3_000 }),
  unit: fc.constantFrom<'s' | 'ms'>('s', 'ms'),
  happenings: fc.array(happening, { minLength: 1, maxLength: 8 }),
});

interface Delivery {
  kind: Kind;
  /** Real (service-clock) time it happened. */
  at: number;
  timed: boolean;
  /** Service-clock time it was sent. */
  sentAt: number;
}

function eventOf(delivery: Delivery, lockLeadMs: number): LockEvent {
  const { kind, timed, at } = delivery;
  // Door reports carry the lock's clock; the bridge's reports and app operations the service's.
  if (kind === 'closed' || kind === 'unknown' || kind === 'init') return { lockId: 'L1', kind: 'doorState', state: kind, at: timed ? at + lockLeadMs : undefined };
  if (kind === 'unlock') return { lockId: 'L1', kind: 'lockState', state: 'unlocked', source: 'operation', device: 'lock', actor: { kind: 'person', userId: 'u-1' }, at: timed ? at : undefined };
  return { lockId: 'L1', kind: 'online', online: kind === 'online', at: timed ? at : undefined };
}

/**
 * How far apart two times of different clocks must be for the plugin to tell their order: a time
 * read through a lead learnt from a delivery that was sent late, `t` in whole seconds, a lead inside
 * the whole-second slack that is never learnt. Within it, either answer keeps the rule.
 */
function uncertainty(w: World): number {
  return MAX_SEND_DELAY_MS + (w.unit === 's' ? 1_000 : 0) + (w.lockLeadMs <= 2_000 ? w.lockLeadMs : 0);
}

interface Missed {
  index: number;
  delivery: Delivery | undefined;
  when: number;
}

/**
 * The rule: a lock command only while a `closed` has been delivered that happened after every moment
 * the plugin may have missed a change (its start, each delivered unknown/init/online). A moment without
 * a time of its own is when the plugin learnt of it, and whatever it learnt before happened before;
 * two stamps of the lock's clock are ordered exactly (at the same millisecond, the later delivery is
 * later); times of different clocks, or a report without its own time (it counts by its arrival),
 * only beyond the uncertainty.
 */
function freshClosedDelivered(delivered: readonly Delivery[], startedAt: number, w: World): boolean {
  const when = (d: Delivery) => (d.timed ? d.at : d.sentAt);
  const lockStamped = (d: Delivery | undefined) => d !== undefined && d.timed && d.kind !== 'online';
  const missed: Missed[] = [{ index: -1, delivery: undefined, when: startedAt }];
  delivered.forEach((d, index) => {
    if (missedKinds.has(d.kind)) missed.push({ index, delivery: d, when: when(d) });
  });
  const after = (c: Delivery, index: number, m: Missed) => {
    if (m.delivery === undefined || !m.delivery.timed) {
      if (index < m.index) return false;
      return !c.timed || c.at > m.when - uncertainty(w);
    }
    if (lockStamped(c) && lockStamped(m.delivery)) return c.at > m.when || (c.at === m.when && index > m.index);
    return when(c) > m.when - uncertainty(w);
  };
  return delivered.some((d, index) => d.kind === 'closed' && missed.every((m) => after(d, index, m)));
}

async function run(w: World): Promise<void> {
  // Fake time is this machine's clock; the service's clock is `machine - skew`.
  const machine = (service: number) => service + w.machineSkewMs;
  vi.setSystemTime(machine(START));
  let at = START;
  const deliveries: Delivery[] = w.happenings.map((h) => {
    at += h.gapMs;
    return { kind: h.kind, at, timed: h.timed, sentAt: at + h.sendDelayMs };
  });
  deliveries.sort((a, b) => a.sentAt - b.sentAt);
  const delivered: Delivery[] = [];
  const violations: string[] = [];
  const device = new LockDevice(
    {
      log: { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined },
      store: memoryStore({}),
      clock: { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => { clearTimeout(h as NodeJS.Timeout); } },
      describeCommandFailure: () => 'failed.',
      operate: (_id, action) => {
        if (action === 'lock' && !freshClosedDelivered(delivered, START, w)) violations.push(`locked after ${delivered.map((d) => d.kind).join(', ')}`);
        return Promise.resolve();
      },
    },
    { kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: true, autoLockSeconds: AUTO_LOCK_SECONDS },
  );
  try {
    for (const delivery of deliveries) {
      await vi.advanceTimersByTimeAsync(Math.max(0, machine(delivery.sentAt) - Date.now()));
      const signedAt = w.unit === 's' ? Math.floor(delivery.sentAt / 1000) * 1000 : delivery.sentAt;
      delivered.push(delivery);
      device.apply(eventOf(delivery, w.lockLeadMs), { receivedAt: Date.now(), signedAt });
    }
    await vi.advanceTimersByTimeAsync(AUTO_LOCK_SECONDS * 1000 + 1_000);
  } finally {
    device.dispose();
  }
  expect(violations).toEqual([]);
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('auto-lock never starts without a closed that happened after the last moment a change could have been missed', () => {
  it('the race seen in the acceptance run: closed, unknown, unlock 200 ms apart across a second of `t`', async () => {
    // Closed at …900 ms is signed with the second before; unknown 200 ms later with the next one.
    await run({ lockLeadMs: 0, machineSkewMs: 0, unit: 's', happenings: [
      { kind: 'closed', gapMs: 900, timed: true, sendDelayMs: 0 },
      { kind: 'unknown', gapMs: 200, timed: true, sendDelayMs: 0 },
      { kind: 'unlock', gapMs: 200, timed: true, sendDelayMs: 0 },
    ] });
  });

  it('a lock clock a little fast: a closed before an unknown without a time of its own', async () => {
    await run({ lockLeadMs: 1_500, machineSkewMs: 0, unit: 'ms', happenings: [
      { kind: 'closed', gapMs: 100, timed: true, sendDelayMs: 0 },
      { kind: 'unknown', gapMs: 200, timed: false, sendDelayMs: 0 },
      { kind: 'unlock', gapMs: 200, timed: true, sendDelayMs: 0 },
    ] });
  });

  it('over arrival orders, lock clock leads, machine clock skews, units of `t`, with and without event times', async () => {
    await fc.assert(fc.asyncProperty(world, run), { numRuns: 400 });
  });
});
