// A paired hap-controller against a Homebridge bridge: find characteristics by accessory name and
// type, subscribe to events, read values. hap-controller 0.10.2 spins the CPU on a second
// subscribeCharacteristics call on one connection, so every subscription gets its own HttpClient.
import { HttpClient, type PairingData } from 'hap-controller';

/** Short HAP type ids (the first block of the Apple UUID, without leading zeros). */
export const HAP_TYPE = {
  accessoryInformation: '3E',
  name: '23',
  lockCurrentState: '1D',
  lockTargetState: '1E',
  contactSensorState: '6A',
  programmableSwitchEvent: '73',
  motionDetected: '22',
} as const;

export interface CharacteristicRef {
  aid: number;
  iid: number;
  /** "aid.iid", the form hap-controller uses. */
  id: string;
}

export interface AccessoryIndex {
  /** accessory display name -> short characteristic type -> first ref of that type. */
  byName: Map<string, Map<string, CharacteristicRef>>;
  count: number;
}

function shortType(type: string): string {
  const head = type.split('-')[0] ?? type;
  return head.replace(/^0+/, '').toUpperCase();
}

export interface HapEvent {
  aid: number;
  iid: number;
  value: unknown;
  at: number;
}

export interface PairedBridge {
  index: AccessoryIndex;
  /** Long-term keys: reconnect after a Homebridge restart with connectBridge. */
  pairing: PairingData;
  /** A fresh client with its own connections. Subscribe once per client. */
  client(): HttpClient;
  /** One subscription on its own connection; the listener gets every event with arrival time. */
  subscribe(ids: string[], listener: (event: HapEvent) => void): Promise<{ close(): Promise<void> }>;
  close(): Promise<void>;
}

export async function pairBridge(username: string, port: number, pin: string): Promise<PairedBridge> {
  const setup = new HttpClient(username, '127.0.0.1', port);
  await setup.pairSetup(pin);
  const pairing = setup.getLongTermData() as PairingData;
  await setup.close();
  return connectBridge(username, port, pairing);
}

/** Opens clients with existing pairing keys (the bridge keeps pairings across restarts). */
export async function connectBridge(username: string, port: number, pairing: PairingData): Promise<PairedBridge> {
  const clients: HttpClient[] = [];
  const client = () => {
    const made = new HttpClient(username, '127.0.0.1', port, pairing, { usePersistentConnections: true });
    clients.push(made);
    return made;
  };
  const reader = client();
  const index = indexAccessories(await reader.getAccessories());
  return {
    index,
    pairing,
    client,
    subscribe: async (ids, listener) => {
      const sub = client();
      sub.on('event', (payload: { characteristics?: { aid: number; iid: number; value: unknown }[] }) => {
        const at = performance.now();
        for (const c of payload.characteristics ?? []) listener({ aid: c.aid, iid: c.iid, value: c.value, at });
      });
      await sub.subscribeCharacteristics(ids);
      return {
        close: async () => {
          await sub.close();
        },
      };
    },
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

export function indexAccessories(db: { accessories: { aid: number; services: { type: string; characteristics: { iid: number; type: string; value?: unknown }[] }[] }[] }): AccessoryIndex {
  const byName = new Map<string, Map<string, CharacteristicRef>>();
  for (const accessory of db.accessories) {
    const aid = accessory.aid;
    const info = accessory.services.find((s) => shortType(s.type) === HAP_TYPE.accessoryInformation);
    const name = info?.characteristics.find((c) => shortType(c.type) === HAP_TYPE.name)?.value;
    if (typeof name !== 'string') continue;
    const types = new Map<string, CharacteristicRef>();
    for (const service of accessory.services) {
      for (const c of service.characteristics) {
        const t = shortType(c.type);
        const iid = c.iid;
        if (!types.has(t)) types.set(t, { aid, iid, id: `${aid}.${iid}` });
      }
    }
    byName.set(name, types);
  }
  return { byName, count: db.accessories.length };
}

export function refOf(index: AccessoryIndex, accessoryName: string, type: string): CharacteristicRef {
  const ref = index.byName.get(accessoryName)?.get(type);
  if (!ref) throw new Error(`HAP: accessory "${accessoryName}" has no characteristic of type ${type}`);
  return ref;
}
