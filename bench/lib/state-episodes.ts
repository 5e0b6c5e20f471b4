// The state patterns for the soaks' fault mix: a flapping bridge, a flapping battery
// (both the same bodies again and again), a lock clock reset by a battery run-out (announced by
// lock_log_timestamp_drifted, its events stamped in 2000 and applied in arrival order), and a lock
// clock that jumped a year ahead. Each episode runs on a lock of its own, one delivery after the
// other (arrival order is the contract once a clock was reset, so nothing may overtake), and keeps
// what the plugin must show at the end. A signature clock a little off rides along.
import type { FireOptions, Simulator } from '../../test/sim/index.js';

export type Episode = 'bridgeFlap' | 'batteryFlap' | 'clockReset' | 'clockJump';

export interface EpisodeExpectations {
  lock: Map<string, 0 | 1>;
  online: Map<string, boolean>;
  /** BatteryLevel the lock's own Battery must show. */
  batteryLevel: Map<string, number>;
}

/** Delivers one named event and returns once it reached the plugin (or its retries ended). */
export type Deliver = (name: string, options: FireOptions) => Promise<void>;

/**
 * A signature clock up to 30 s behind: inside the 300 s tolerance, and presses (aged by the
 * signature) still well inside the 60 s ring age.
 */
export const SIGNATURE_SKEWS_MS = [0, -5_000, -15_000, -30_000] as const;

export class StateEpisodes {
  readonly expected: EpisodeExpectations = { lock: new Map(), online: new Map(), batteryLevel: new Map() };
  readonly counts: Record<Episode, number> & { deliveries: number; skewChanges: number } = {
    bridgeFlap: 0, batteryFlap: 0, clockReset: 0, clockJump: 0, deliveries: 0, skewChanges: 0,
  };
  private running = false;
  private next = 0;

  constructor(
    private readonly sim: Simulator,
    /** Locks no other generator touches. */
    readonly lockIds: readonly string[],
    private readonly deliver: Deliver,
    private readonly random: () => number = Math.random,
  ) {}

  get busy(): boolean {
    return this.running;
  }

  /** Runs one episode (the next kind, on a random lock of its own); one at a time. */
  async runOne(): Promise<Episode | undefined> {
    if (this.running || this.lockIds.length === 0) return undefined;
    this.running = true;
    const kinds: Episode[] = ['bridgeFlap', 'batteryFlap', 'clockReset', 'clockJump'];
    const kind = kinds[this.next % kinds.length] as Episode;
    this.next += 1;
    const lockId = this.lockIds[Math.floor(this.random() * this.lockIds.length)] as string;
    try {
      await this[kind](lockId);
      this.counts[kind] += 1;
      return kind;
    } finally {
      this.running = false;
    }
  }

  /** Moves the signature clock to another small offset. */
  shiftSignatureClock(): void {
    this.sim.faults.signatureSkewMs = SIGNATURE_SKEWS_MS[Math.floor(this.random() * SIGNATURE_SKEWS_MS.length)] ?? 0;
    this.counts.skewChanges += 1;
  }

  /** Brings every lock an episode left offline back (a final check reads them after that). */
  async allOnline(): Promise<string[]> {
    const offline = [...this.expected.online].filter(([, online]) => !online).map(([id]) => id);
    for (const lockId of offline) await this.send('bridge-online', { lockId }, () => this.expected.online.set(lockId, true));
    return offline;
  }

  private async send(name: string, options: FireOptions, expect: () => void): Promise<void> {
    this.counts.deliveries += 1;
    await this.deliver(name, options);
    expect();
  }

  private async operate(lockId: string, lock: boolean): Promise<void> {
    await this.send(lock ? 'lock' : 'unlock', { lockId, by: this.random() < 0.5 ? 'manual' : 'keypad' }, () => this.expected.lock.set(lockId, lock ? 1 : 0));
  }

  /** Offline and online a few times, ending either way. */
  private async bridgeFlap(lockId: string): Promise<void> {
    const steps = 2 + Math.floor(this.random() * 4);
    for (let i = 0; i < steps; i += 1) {
      const online = i % 2 === 1;
      await this.send(online ? 'bridge-online' : 'bridge-offline', { lockId }, () => this.expected.online.set(lockId, online));
    }
  }

  /** Low, fine, low, ... ending either way. */
  private async batteryFlap(lockId: string): Promise<void> {
    const steps = 2 + Math.floor(this.random() * 3);
    for (let i = 0; i < steps; i += 1) {
      const low = i % 2 === 0;
      await this.send('lock-battery', { lockId, level: low ? '2day' : 'none' }, () => this.expected.batteryLevel.set(lockId, low ? 5 : 100));
    }
  }

  /** Batteries ran out: the notice, operations stamped in 2000, and sometimes the clock set right again. */
  private async clockReset(lockId: string): Promise<void> {
    await this.send('lock-clock-reset', { lockId }, () => undefined);
    const steps = 2 + Math.floor(this.random() * 3);
    let lock = this.random() < 0.5;
    for (let i = 0; i < steps; i += 1, lock = !lock) await this.operate(lockId, lock);
    if (this.random() < 0.5) {
      await this.send('lock-clock-fix', { lockId }, () => undefined);
      await this.operate(lockId, !lock);
    }
  }

  /** One operation stamped a year ahead, then the clock set right and a real one. */
  private async clockJump(lockId: string): Promise<void> {
    await this.send('lock-clock-jump', { lockId }, () => undefined);
    const lock = this.random() < 0.5;
    await this.operate(lockId, lock);
    await this.send('lock-clock-fix', { lockId }, () => undefined);
    await this.operate(lockId, !lock);
  }
}
