// The Matter endpoints of one device while they are published: follows the device's source and
// pushes what changed to each live endpoint, presses the doorbell switch on a ring, and reports
// when the set of endpoints or their names changed (a door sensor appeared, a rename) so the
// registry can publish the new one and update Homebridge's cached copies.
import type { EndpointPlan } from './matter-endpoints.js';
import { planChanges } from './matter-endpoints.js';
import type { MatterPublisher } from './matter-publisher.js';
import type { MatterSource } from './matter-sources.js';

export class MatterDevice {
  /** What each live endpoint was last given, by UUID. */
  private readonly live = new Map<string, EndpointPlan>();
  private readonly stop: () => void;
  private structure: string;

  constructor(
    readonly source: MatterSource,
    private readonly publisher: MatterPublisher,
    private readonly structureChanged: () => void,
  ) {
    this.structure = this.structureOf(source.plans());
    this.stop = source.follow({
      change: () => {
        this.refresh();
      },
      ring: () => {
        this.ring();
      },
    });
  }

  get device(): string {
    return this.source.device;
  }

  /** The endpoints this device wants now, by UUID. */
  wanted(): Map<string, EndpointPlan> {
    return new Map(this.source.plans().map((plan) => [this.publisher.uuidOf(plan), plan]));
  }

  isLive(uuid: string): boolean {
    return this.live.has(uuid);
  }

  /**
   * The endpoint is registered: give it the whole current state (a restored endpoint keeps what it
   * showed when Homebridge stopped, and registration sets no name or reachability), then follow.
   */
  async attach(uuid: string): Promise<void> {
    const plan = this.wanted().get(uuid);
    if (!plan) return;
    this.live.set(uuid, plan);
    await this.publisher.update(uuid, plan.label, plan.state, { reachable: plan.reachable, nodeLabel: plan.label });
  }

  detach(uuid: string): void {
    this.live.delete(uuid);
  }

  /** Pushes what changed since the last push to every live endpoint. */
  refresh(): void {
    const wanted = this.wanted();
    for (const [uuid, before] of this.live) {
      const after = wanted.get(uuid);
      if (!after) continue;
      const changes = planChanges(before, after);
      this.live.set(uuid, after);
      const info = {
        ...(changes.reachable ? { reachable: after.reachable } : {}),
        ...(changes.label ? { nodeLabel: after.label } : {}),
      };
      if (Object.keys(changes.state).length > 0 || Object.keys(info).length > 0) void this.publisher.update(uuid, after.label, changes.state, info);
    }
    const structure = this.structureOf([...wanted.values()]);
    if (structure !== this.structure) {
      this.structure = structure;
      this.structureChanged();
    }
  }

  dispose(): void {
    this.stop();
    this.live.clear();
  }

  private ring(): void {
    for (const [uuid, plan] of this.live) {
      if (plan.deviceType === 'GenericSwitch') void this.publisher.ring(uuid, plan.label);
    }
  }

  private structureOf(plans: EndpointPlan[]): string {
    return plans.map((plan) => `${plan.seed}\t${plan.label}`).sort().join('\n');
  }
}
