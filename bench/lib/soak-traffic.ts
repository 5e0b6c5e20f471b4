// The callbacks of the long soak: a steady mix at a fixed rate through the simulator's signed
// delivery (lock, door, battery, doorbell press, motion and recordings available), bridges flapping
// on locks of their own, and what HomeKit must show at the end: the state of each device's last event.
import type { DeliveryResult, Simulator } from '../../test/sim/index.js';
import type { Fleet } from './fleet.js';

type Kind = 'lock' | 'door' | 'battery' | 'press' | 'motion' | 'video';

/** Shares of the mix, in this order (they add up to 1). */
const MIX: [Kind, number][] = [['lock', 0.3], ['door', 0.25], ['battery', 0.1], ['press', 0.15], ['motion', 0.1], ['video', 0.1]];
const BATTERY_LEVELS = ['none', 'warning', 'critical'] as const;

export interface Expected {
  /** LockCurrentState: 1 secured, 0 unsecured. */
  lock: Map<string, 0 | 1>;
  /** ContactSensorState: 1 open, 0 closed. */
  door: Map<string, 0 | 1>;
  /** StatusLowBattery: 1 for warning and critical. */
  lowBattery: Map<string, 0 | 1>;
  /** The flapping bridges' locks: online after their last event. */
  online: Map<string, boolean>;
}

export interface TrafficCounts {
  sent: Record<Kind | 'bridge', number>;
  deliveries: number;
  delivered: number;
  notDelivered: number;
}

const pick = <T>(items: readonly T[]): T => {
  const item = items[Math.floor(Math.random() * items.length)];
  if (item === undefined) throw new Error('nothing to pick from');
  return item;
};

export class SoakTraffic {
  readonly expected: Expected = { lock: new Map(), door: new Map(), lowBattery: new Map(), online: new Map() };
  readonly counts: TrafficCounts = { sent: { lock: 0, door: 0, battery: 0, press: 0, motion: 0, video: 0, bridge: 0 }, deliveries: 0, delivered: 0, notDelivered: 0 };
  private readonly locks: string[];
  private readonly flapLocks: string[];
  private readonly doorbells: string[];
  /** Untimed events (battery, bridge) of one lock go one after the other, so the last sent is the last applied. */
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private lastAt = 0;

  /** `quietDoorbell` gets no callbacks here (the soak's camera views and Secure Video clips use it). */
  constructor(
    private readonly sim: Simulator,
    fleet: Fleet,
    quietDoorbell: string,
    flapLockCount = 4,
  ) {
    const ids = fleet.locks.map((l) => l.id);
    this.flapLocks = ids.slice(-flapLockCount);
    this.locks = ids.slice(0, -flapLockCount);
    this.doorbells = fleet.doorbells.map((d) => d.id).filter((id) => id !== quietDoorbell);
  }

  /** One callback of the mix. */
  one(): void {
    let roll = Math.random();
    const kind = MIX.find(([, share]) => (roll -= share) < 0)?.[0] ?? 'lock';
    this.counts.sent[kind] += 1;
    switch (kind) {
      case 'lock': {
        const lockId = pick(this.locks);
        const state: 0 | 1 = this.expected.lock.get(lockId) === 1 ? 0 : 1;
        this.expected.lock.set(lockId, state);
        this.track(this.sim.fire(state === 1 ? 'lock' : 'unlock', { lockId, at: this.stamp() }));
        return;
      }
      case 'door': {
        const lockId = pick(this.locks);
        const state: 0 | 1 = this.expected.door.get(lockId) === 1 ? 0 : 1;
        this.expected.door.set(lockId, state);
        this.track(this.sim.fire(state === 1 ? 'door-open' : 'door-closed', { lockId, at: this.stamp() }));
        return;
      }
      case 'battery': {
        const free = this.locks.filter((id) => !this.busy.has(id));
        // Every lock still waits for its last battery event's delivery (a slow machine): a lock event instead.
        if (free.length === 0) {
          this.counts.sent.battery -= 1;
          this.counts.sent.lock += 1;
          const lockId = pick(this.locks);
          const state: 0 | 1 = this.expected.lock.get(lockId) === 1 ? 0 : 1;
          this.expected.lock.set(lockId, state);
          this.track(this.sim.fire(state === 1 ? 'lock' : 'unlock', { lockId, at: this.stamp() }));
          return;
        }
        const lockId = pick(free);
        const level = pick(BATTERY_LEVELS);
        this.expected.lowBattery.set(lockId, level === 'none' ? 0 : 1);
        this.serial(lockId, () => this.sim.fire('battery-level', { lockId, level, device: 'lock' }));
        return;
      }
      case 'press':
        this.track(this.sim.fire('doorbell-press', { doorbellId: pick(this.doorbells) }));
        return;
      case 'motion':
        this.track(this.sim.fire('motion', { doorbellId: pick(this.doorbells) }));
        return;
      case 'video':
        this.track(this.sim.fire('video-available', { doorbellId: pick(this.doorbells), cause: Math.random() < 0.5 ? 'buttonpush' : 'doorbell_motion_detected' }));
        return;
    }
  }

  /** A bridge goes offline or comes back, on one of the locks kept for it. */
  flap(): void {
    const free = this.flapLocks.filter((id) => !this.busy.has(id));
    if (free.length === 0) return;
    const lockId = pick(free);
    const online = !(this.expected.online.get(lockId) ?? true);
    this.expected.online.set(lockId, online);
    this.counts.sent.bridge += 1;
    this.serial(lockId, () => this.sim.fire(online ? 'bridge-online' : 'bridge-offline', { lockId }));
  }

  /** Resolves once every delivery sent so far is final (retries included). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Event times strictly rising, so "the last event" is the newest for the plugin too. */
  private stamp(): number {
    this.lastAt = Math.max(Date.now(), this.lastAt + 1);
    return this.lastAt;
  }

  private serial(lockId: string, send: () => Promise<DeliveryResult[]>): void {
    this.busy.add(lockId);
    const done = send().then((results) => this.settle(results));
    this.hold(done.finally(() => this.busy.delete(lockId)));
  }

  private track(sent: Promise<DeliveryResult[]>): void {
    this.hold(sent.then((results) => this.settle(results)));
  }

  private async settle(results: DeliveryResult[]): Promise<void> {
    this.counts.deliveries += results.length;
    const outcomes = await Promise.all(results.map((r) => r.done));
    for (const outcome of outcomes) {
      if (outcome === 'delivered') this.counts.delivered += 1;
      else this.counts.notDelivered += 1;
    }
  }

  private hold(p: Promise<unknown>): void {
    const held = p.catch(() => {
      this.counts.notDelivered += 1;
    });
    this.inFlight.add(held);
    void held.finally(() => this.inFlight.delete(held));
  }
}
