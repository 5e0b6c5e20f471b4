// Homebridge's Matter API at the edge: registers endpoints one at a time and confirms each, pushes
// attribute changes, presses the doorbell switch, unregisters. Failures are logged, never thrown
// at callers that cannot act on them: a Matter problem must not disturb HomeKit.
import type { MatterAPI, MatterAccessory } from 'homebridge';

import type { Logger } from '../util/logger.js';
import { errorText } from '../util/error-text.js';
import { MANUFACTURER } from '../settings.js';
import { pluginVersion } from '../util/plugin-version.js';
import { confirmingCluster, type ClusterValues, type EndpointPlan } from './matter-endpoints.js';

/** How long a registration may take to show up before it counts as failed, and how often to look. */
export const CONFIRM_TIMEOUT_MS = 15_000;
export const CONFIRM_POLL_MS = 20;
/**
 * Two presses within matter.js's multi-press window (300 ms) read as one double press: rings of one
 * doorbell are spaced by more than that, so each real ring is one press at the controller.
 */
export const RING_SPACING_MS = 400;

export type MatterHandlers = NonNullable<MatterAccessory['handlers']>;

export interface MatterPublisherOptions {
  matter: MatterAPI;
  log: Logger;
  pluginName: string;
  platformName: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class MatterPublisher {
  private readonly rings = new Map<string, Promise<void>>();

  constructor(private readonly options: MatterPublisherOptions) {}

  uuidOf(plan: Pick<EndpointPlan, 'seed'>): string {
    return this.options.matter.uuid.generate(plan.seed);
  }

  /** The Homebridge accessory for a plan: its configuration plus the state it shows now. */
  accessoryOf(plan: EndpointPlan, handlers?: MatterHandlers): MatterAccessory {
    const clusters: ClusterValues = {};
    for (const cluster of new Set([...Object.keys(plan.fixed), ...Object.keys(plan.state)])) {
      clusters[cluster] = { ...plan.fixed[cluster], ...plan.state[cluster] };
    }
    return {
      UUID: this.uuidOf(plan),
      displayName: plan.label,
      deviceType: this.options.matter.deviceTypes[plan.deviceType],
      serialNumber: plan.serial,
      manufacturer: MANUFACTURER,
      model: plan.model,
      firmwareRevision: pluginVersion(),
      context: { lockAccess: { device: plan.device, seed: plan.seed } },
      clusters,
      ...(handlers === undefined ? {} : { handlers }),
    };
  }

  /**
   * Registers one endpoint and waits until Homebridge has it. Homebridge registers in the background
   * after the call resolves, and an endpoint that fails (a bad attribute, too long a name) leaves
   * only a log line: so one per call, confirmed by reading it back. Resolves false when it did not take.
   */
  async register(accessory: MatterAccessory, plan: EndpointPlan): Promise<boolean> {
    const { matter, pluginName, platformName, log } = this.options;
    try {
      await matter.registerPlatformAccessories(pluginName, platformName, [accessory]);
    } catch (error) {
      log.warn(`Matter: ${plan.label} could not be published (${errorText(error)}).`);
      return false;
    }
    const cluster = confirmingCluster(plan);
    const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
    for (;;) {
      try {
        if ((await matter.getAccessoryState(accessory.UUID, cluster)) !== undefined) return true;
      } catch {
        // Not there yet.
      }
      if (Date.now() >= deadline) return false;
      await sleep(CONFIRM_POLL_MS);
    }
  }

  /** Updates the cached copy Homebridge keeps (its name, after a rename). */
  async refreshCache(accessory: MatterAccessory): Promise<void> {
    try {
      await this.options.matter.updatePlatformAccessories([accessory]);
    } catch (error) {
      this.options.log.debug(`Matter: could not update the cached ${accessory.displayName} (${errorText(error)}).`);
    }
  }

  async unregister(accessories: MatterAccessory[]): Promise<void> {
    if (accessories.length === 0) return;
    const { matter, pluginName, platformName, log } = this.options;
    try {
      await matter.unregisterPlatformAccessories(pluginName, platformName, accessories);
    } catch (error) {
      log.warn(`Matter: could not remove ${accessories.map((a) => a.displayName).join(', ')} (${errorText(error)}).`);
    }
  }

  /** Pushes changed attributes, cluster by cluster; the label and reachable go to the bridged-device information. */
  async update(uuid: string, label: string, state: ClusterValues, info?: { reachable?: boolean; nodeLabel?: string }): Promise<void> {
    const { matter, log } = this.options;
    const pushes = Object.entries(state).map(([cluster, attributes]) => [cluster, attributes] as const);
    if (info !== undefined && Object.keys(info).length > 0) pushes.push(['bridgedDeviceBasicInformation', info]);
    await Promise.all(
      pushes.map(async ([cluster, attributes]) => {
        try {
          await matter.updateAccessoryState(uuid, cluster, attributes);
        } catch (error) {
          log.debug(`Matter: ${label} did not take ${cluster} ${JSON.stringify(attributes)} (${errorText(error)}).`);
        }
      }),
    );
  }

  /** One press and release of the doorbell's switch, after the rings before it. */
  ring(uuid: string, label: string): Promise<void> {
    const previous = this.rings.get(uuid) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        await this.options.matter.switch.emit(uuid, 'press');
        await this.options.matter.switch.emit(uuid, 'release');
      } catch (error) {
        this.options.log.warn(`Matter: ${label} could not ring (${errorText(error)}).`);
      }
      await sleep(RING_SPACING_MS);
    });
    this.rings.set(uuid, next);
    void next.then(() => {
      if (this.rings.get(uuid) === next) this.rings.delete(uuid);
    });
    return next;
  }
}
