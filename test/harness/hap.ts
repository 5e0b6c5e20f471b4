// A real HomeKit controller for end-to-end tests: hap-controller's HttpClient speaking HAP to a
// Homebridge bridge on 127.0.0.1 (no mDNS). Pair with the bridge's setup code, list accessories,
// read, write, subscribe (one connection per subscription: a second subscribe on one connection
// spins hap-controller at 100% CPU) and fetch camera snapshots.
import { HttpClient } from 'hap-controller';

const APPLE_SUFFIX = '-0000-1000-8000-0026BB765291';

/** HAP sends Apple-defined types in short form ("45"); HAP-NodeJS names them in long form. */
export function shortType(uuid: string): string {
  const upper = uuid.toUpperCase();
  return upper.endsWith(APPLE_SUFFIX) ? upper.slice(0, 8).replace(/^0+/, '') : upper;
}

export interface HapCharacteristicInfo {
  aid: number;
  iid: number;
  type: string;
  value?: unknown;
  perms: string[];
  format?: string;
}

export interface HapServiceInfo {
  aid: number;
  iid: number;
  type: string;
  primary: boolean;
  characteristics: HapCharacteristicInfo[];
}

export interface HapAccessoryInfo {
  aid: number;
  name: string;
  services: HapServiceInfo[];
}

export interface ReadResult {
  value?: unknown;
  /** HAP status when the read failed, e.g. -70402 (SERVICE_COMMUNICATION_FAILURE, "No Response"). */
  status?: number;
}

export interface HapEvent {
  id: string;
  value: unknown;
}

export interface Subscription {
  readonly events: HapEvent[];
  /** Resolves with the first event (already received or later) matching `predicate`. */
  waitFor(predicate: (event: HapEvent) => boolean, what: string, timeoutMs?: number): Promise<HapEvent>;
  close(): Promise<void>;
}

interface RawCharacteristic {
  aid?: number;
  iid: number;
  type: string;
  value?: unknown;
  perms?: string[];
  format?: string;
  status?: number;
}

interface RawAccessories {
  accessories: { aid: number; services: { iid: number; type: string; primary?: boolean; characteristics: RawCharacteristic[] }[] }[];
}

const NAME_TYPE = '23';
const INFO_TYPE = '3E';

export interface BridgeAddress {
  port: number;
  /** The bridge's username (its HAP device id), e.g. "0E:AA:11:22:33:44". */
  username: string;
  pin: string;
  host?: string;
}

/** A controller's long-term pairing keys (its id, its key pair and the bridge's public key). */
export type HapPairing = NonNullable<ReturnType<HttpClient['getLongTermData']>>;

export class HapController {
  private readonly subscriptions = new Set<Subscription>();

  private constructor(
    private readonly address: Required<BridgeAddress>,
    private client: HttpClient,
  ) {}

  /** Pairs a new controller with the bridge using its setup code (`bridge.pin`). */
  static async pair(bridge: BridgeAddress): Promise<HapController> {
    const address = { host: '127.0.0.1', ...bridge };
    const setup = new HttpClient(address.username, address.host, address.port);
    await setup.pairSetup(address.pin);
    const pairing = setup.getLongTermData();
    await setup.close();
    if (!pairing) throw new Error('pairing gave no long-term keys');
    return new HapController(address, new HttpClient(address.username, address.host, address.port, pairing, { usePersistentConnections: true }));
  }

  /**
   * A controller with the long-term keys of an earlier pairing, for a bridge that already holds that
   * pairing (its AccessoryInfo record): every connection still runs pair-verify.
   */
  static paired(bridge: BridgeAddress, pairing: HapPairing): HapController {
    const address = { host: '127.0.0.1', ...bridge };
    return new HapController(address, new HttpClient(address.username, address.host, address.port, pairing, { usePersistentConnections: true }));
  }

  /** The same pairing for another HttpClient (e.g. after the bridge restarted, or for a subscription). */
  private newClient(): HttpClient {
    const pairing = this.client.getLongTermData();
    if (!pairing) throw new Error('not paired');
    return new HttpClient(this.address.username, this.address.host, this.address.port, pairing);
  }

  /** A fresh connection with the same pairing, e.g. after the bridge restarted (pairings persist). */
  async reconnect(): Promise<void> {
    const pairing = this.client.getLongTermData();
    if (!pairing) throw new Error('not paired');
    for (const subscription of [...this.subscriptions]) await subscription.close();
    await this.client.close().catch(() => undefined);
    this.client = new HttpClient(this.address.username, this.address.host, this.address.port, pairing, { usePersistentConnections: true });
  }

  async accessories(): Promise<HapAccessoryInfo[]> {
    const raw: unknown = await this.client.getAccessories();
    return (raw as RawAccessories).accessories.map((accessory) => {
      const services = accessory.services.map((service) => ({
        aid: accessory.aid,
        iid: service.iid,
        type: shortType(service.type),
        primary: service.primary === true,
        characteristics: service.characteristics.map((c) => ({
          aid: accessory.aid,
          iid: c.iid,
          type: shortType(c.type),
          value: c.value,
          perms: c.perms ?? [],
          ...(c.format === undefined ? {} : { format: c.format }),
        })),
      }));
      const info = services.find((s) => s.type === INFO_TYPE);
      const name = info?.characteristics.find((c) => c.type === NAME_TYPE)?.value;
      return { aid: accessory.aid, name: typeof name === 'string' ? name : '', services };
    });
  }

  /** The accessory whose AccessoryInformation Name is `name`. */
  async accessory(name: string): Promise<HapAccessoryInfo> {
    const found = (await this.accessories()).find((a) => a.name === name);
    if (!found) throw new Error(`no accessory named ${name}`);
    return found;
  }

  async read(ids: string[]): Promise<Map<string, ReadResult>> {
    const response: unknown = await this.client.getCharacteristics(ids);
    const results = new Map<string, ReadResult>();
    for (const c of (response as { characteristics: RawCharacteristic[] }).characteristics) {
      const result: ReadResult = {};
      if (c.status !== undefined && c.status !== 0) result.status = c.status;
      else result.value = c.value;
      results.set(`${c.aid ?? 0}.${c.iid}`, result);
    }
    return results;
  }

  async readOne(id: string): Promise<ReadResult> {
    return (await this.read([id])).get(id) ?? {};
  }

  /** Writes one value; resolves with the HAP status of the write (0 when it succeeded). */
  async write(id: string, value: unknown): Promise<number> {
    try {
      const response = await this.client.setCharacteristics({ [id]: value });
      const entry = (response as { characteristics?: { status?: number }[] }).characteristics?.[0];
      return entry?.status ?? 0;
    } catch (error) {
      const body = (error as { body?: Buffer }).body;
      const parsed = body ? (JSON.parse(body.toString()) as { characteristics?: { status?: number }[] }) : undefined;
      const status = parsed?.characteristics?.[0]?.status;
      if (status !== undefined) return status;
      throw error;
    }
  }

  /** Subscribes to `ids` on a connection of its own. */
  async subscribe(ids: string[]): Promise<Subscription> {
    const client = this.newClient();
    const events: HapEvent[] = [];
    const waiters = new Set<{ predicate: (event: HapEvent) => boolean; resolve: (event: HapEvent) => void }>();
    client.on('event', (message: { characteristics?: { aid: number; iid: number; value: unknown }[] }) => {
      for (const c of message.characteristics ?? []) {
        const event = { id: `${c.aid}.${c.iid}`, value: c.value };
        events.push(event);
        for (const waiter of waiters) {
          if (waiter.predicate(event)) {
            waiters.delete(waiter);
            waiter.resolve(event);
          }
        }
      }
    });
    await client.subscribeCharacteristics(ids);
    const subscription: Subscription = {
      events,
      waitFor: (predicate, what, timeoutMs = 10_000) => {
        const found = events.find(predicate);
        if (found) return Promise.resolve(found);
        return new Promise((resolve, reject) => {
          const waiter = {
            predicate,
            resolve: (event: HapEvent) => {
              clearTimeout(timer);
              resolve(event);
            },
          };
          const timer = setTimeout(() => {
            waiters.delete(waiter);
            reject(new Error(`no HAP event for ${what} within ${timeoutMs} ms (got ${JSON.stringify(events)})`));
          }, timeoutMs);
          waiters.add(waiter);
        });
      },
      close: async () => {
        this.subscriptions.delete(subscription);
        await client.unsubscribeCharacteristics().catch(() => undefined);
        await client.close();
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** The long-term pairing keys (for another client of this controller, e.g. a Data Stream). */
  pairingData(): ReturnType<HttpClient['getLongTermData']> {
    return this.client.getLongTermData();
  }

  /**
   * A timed write, as HAP requires for some characteristics (e.g. RecordingAudioActive): PUT
   * /prepare with a TTL and a process id, then the write carrying that id, on one connection.
   * Resolves with the HAP status of the write (0 when it succeeded).
   */
  async timedWrite(id: string, value: unknown, ttlMs = 5_000): Promise<number> {
    type Connection = { put(path: string, body: Buffer): Promise<{ statusCode: number; body: Buffer }> };
    const connection = await (this.client as unknown as { getDefaultVerifiedConnection(): Promise<Connection> }).getDefaultVerifiedConnection();
    const pid = Math.floor(Math.random() * 1_000_000_000);
    const prepared = await connection.put('/prepare', Buffer.from(JSON.stringify({ ttl: ttlMs, pid })));
    if (prepared.statusCode !== 200) throw new Error(`timed write: /prepare answered ${prepared.statusCode}`);
    const [aid, iid] = id.split('.').map(Number);
    const written = await connection.put('/characteristics', Buffer.from(JSON.stringify({ characteristics: [{ aid, iid, value }], pid })));
    if (written.statusCode === 204) return 0;
    const parsed = JSON.parse(written.body.toString()) as { characteristics?: { status?: number }[] };
    return parsed.characteristics?.[0]?.status ?? -1;
  }

  /** A camera snapshot, as Apple Home asks for it (POST /resource). */
  async image(aid: number, width = 640, height = 360): Promise<Buffer> {
    return this.client.getImage(width, height, aid);
  }

  async close(): Promise<void> {
    for (const subscription of [...this.subscriptions]) await subscription.close();
    await this.client.close();
  }
}

/** `aid.iid` of the characteristic `charType` in the first service of `serviceType` (optionally with Name `serviceName`). */
export function characteristicId(accessory: HapAccessoryInfo, serviceType: string, charType: string, serviceName?: string): string {
  const service = accessory.services.find(
    (s) => s.type === shortType(serviceType) && (serviceName === undefined || s.characteristics.some((c) => c.type === NAME_TYPE && c.value === serviceName)),
  );
  const characteristic = service?.characteristics.find((c) => c.type === shortType(charType));
  if (!characteristic) throw new Error(`${accessory.name} has no ${charType} in ${serviceType}${serviceName === undefined ? '' : ` named ${serviceName}`}`);
  return `${characteristic.aid}.${characteristic.iid}`;
}
