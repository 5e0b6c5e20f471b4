// A real Matter controller in the test process (matter.js CommissioningController), talking to a
// Homebridge 2 bridge with Matter on over 127.0.0.1: commission, read, subscribe, invoke. It records
// every attribute report and event with its arrival time. matter.js keeps process-wide state, so a
// test file using it runs in its own forked worker (vitest.config.ts) with one controller.
import { Environment, Logger } from '@matter/main';
import { GeneralCommissioning } from '@matter/main/clusters/general-commissioning';
import { QrPairingCodeCodec } from '@matter/main/types';
import { CommissioningController } from '@project-chip/matter.js';
import type { PairedNode } from '@project-chip/matter.js/device';

export interface MatterPairing {
  passcode: number;
  discriminator: number;
}

export interface AttributeReport {
  endpoint: number;
  attribute: string;
  value: unknown;
  /** performance.now() when the report arrived. */
  at: number;
}

export interface EventReport {
  endpoint: number;
  event: string;
  count: number;
  at: number;
}

/** One endpoint of the bridge as the controller sees it (the aggregator's parts). */
export interface MatterEndpointView {
  number: number;
  deviceTypes: number[];
  label: string | undefined;
  serial: string | undefined;
  reachable: boolean | undefined;
  /** Cached cluster state by cluster name, e.g. state('doorLock').lockState. */
  state(cluster: string): Record<string, unknown> | undefined;
  /** Reads the cluster from the bridge now (not the subscribed copy). */
  read(cluster: string): Promise<Record<string, unknown>>;
  invoke(cluster: string, command: string, request?: unknown): Promise<unknown>;
}

/** The passcode and long discriminator in a QR payload ("MT:…"), as a Matter app reads them. */
export function pairingFromQr(qrCode: string): MatterPairing {
  const [data] = QrPairingCodeCodec.decode(qrCode);
  if (!data) throw new Error(`no pairing data in ${qrCode}`);
  return { passcode: data.passcode, discriminator: data.discriminator };
}

type ClientEndpoint = ReturnType<PairedNode['getDevices']>[number];

const STATUS_PREFIX = 'matter-test-controller';

export class MatterTestController {
  readonly attributes: AttributeReport[] = [];
  readonly events: EventReport[] = [];
  private node: PairedNode | undefined;
  private unsubscribe: (() => void)[] = [];

  private constructor(private readonly controller: CommissioningController) {}

  /** A controller with its fabric stored in `storagePath` (use a fresh folder per run). */
  static async start(storagePath: string): Promise<MatterTestController> {
    Logger.level = 'warn';
    const environment = Environment.default;
    environment.vars.set('storage.path', storagePath);
    const controller = new CommissioningController({
      environment: { environment, id: STATUS_PREFIX },
      autoConnect: false,
      adminFabricLabel: 'lock-access tests',
    });
    await controller.start();
    return new MatterTestController(controller);
  }

  /** Commissions the bridge at 127.0.0.1:port; returns with the node connected and subscribed. */
  async commission(port: number, pairing: MatterPairing): Promise<void> {
    const nodeId = await this.controller.commissionNode({
      commissioning: { regulatoryLocation: GeneralCommissioning.RegulatoryLocationType.IndoorOutdoor, regulatoryCountryCode: 'XX' },
      discovery: {
        identifierData: { longDiscriminator: pairing.discriminator },
        knownAddress: { ip: '127.0.0.1', port, type: 'udp' },
      },
      passcode: pairing.passcode,
    });
    // commissionNode returns connected: its "initialized" event has already fired.
    this.follow(await this.controller.getNode(nodeId));
  }

  /** Connects again to the commissioned bridge (after a Homebridge restart), without commissioning. */
  async reconnect(timeoutMs = 60_000): Promise<void> {
    const node = this.node;
    if (!node) throw new Error('nothing commissioned yet');
    node.triggerReconnect();
    await this.waitFor(() => node.isConnected && node.initialized, 'the node to be connected again', timeoutMs);
  }

  get connected(): boolean {
    return this.node?.isConnected ?? false;
  }

  /** The bridged endpoints, in endpoint order. */
  endpoints(): MatterEndpointView[] {
    const node = this.requireNode();
    const flat: ClientEndpoint[] = [];
    const walk = (endpoint: ClientEndpoint) => {
      flat.push(endpoint);
      for (const child of endpoint.parts.values()) walk(child);
    };
    for (const device of node.getDevices()) walk(device);
    return flat
      .filter((endpoint) => endpoint.maybeStateOf('bridgedDeviceBasicInformation') !== undefined)
      .map((endpoint) => view(endpoint))
      .sort((a, b) => a.number - b.number);
  }

  endpoint(label: string): MatterEndpointView | undefined {
    return this.endpoints().find((e) => e.label === label);
  }

  /** Polls (every 50 ms) until `probe` gives a value; not a timing assertion. */
  async waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let value: T | undefined | false;
      try {
        value = probe();
      } catch {
        value = undefined;
      }
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error(`Matter controller: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resolves with the first attribute report after `since` matching the filter. */
  waitForAttribute(filter: (report: AttributeReport) => boolean, since: number, what: string, timeoutMs = 15_000): Promise<AttributeReport> {
    return this.waitFor(() => this.attributes.find((r) => r.at >= since && filter(r)), what, timeoutMs);
  }

  async close(): Promise<void> {
    for (const stop of this.unsubscribe) stop();
    this.unsubscribe = [];
    await this.controller.close();
  }

  private requireNode(): PairedNode {
    if (!this.node) throw new Error('nothing commissioned yet');
    return this.node;
  }

  private follow(node: PairedNode): void {
    this.node = node;
    const onAttribute = (data: { path: { endpointId: number; attributeName: string }; value: unknown }) => {
      this.attributes.push({ endpoint: data.path.endpointId, attribute: data.path.attributeName, value: data.value, at: performance.now() });
    };
    const onEvent = (data: { path: { endpointId: number; eventName: string }; events: unknown[] }) => {
      this.events.push({ endpoint: data.path.endpointId, event: data.path.eventName, count: data.events.length, at: performance.now() });
    };
    node.events.attributeChanged.on(onAttribute);
    node.events.eventTriggered.on(onEvent);
    this.unsubscribe.push(
      () => {
        node.events.attributeChanged.off(onAttribute);
      },
      () => {
        node.events.eventTriggered.off(onEvent);
      },
    );
  }
}

function view(endpoint: ClientEndpoint): MatterEndpointView {
  const info = endpoint.maybeStateOf('bridgedDeviceBasicInformation');
  const descriptor = endpoint.maybeStateOf('descriptor');
  const deviceTypeList = (descriptor?.deviceTypeList ?? []) as readonly { deviceType: number }[];
  return {
    number: Number(endpoint.number),
    deviceTypes: deviceTypeList.map((d) => d.deviceType),
    label: typeof info?.nodeLabel === 'string' ? info.nodeLabel : undefined,
    serial: typeof info?.serialNumber === 'string' ? info.serialNumber : undefined,
    reachable: typeof info?.reachable === 'boolean' ? info.reachable : undefined,
    state: (cluster): Record<string, unknown> | undefined => endpoint.maybeStateOf(cluster),
    // Without known versions: a quieter-reported attribute (batPercentRemaining) may have changed
    // while the cluster's data version the subscription saw already counts it.
    read: async (cluster) => endpoint.getStateOf(cluster, undefined, { includeKnownVersions: true }),
    invoke: async (cluster, command, request) => {
      const commands = endpoint.commandsOf(cluster) as Record<string, ((request?: unknown) => Promise<unknown>) | undefined>;
      const run = commands[command];
      if (!run) throw new Error(`endpoint ${Number(endpoint.number)} has no ${cluster}.${command}`);
      return run(request ?? {});
    },
  };
}
