// Device records in memory, for tests that need a registry without a file: what devices.json keeps.
import type { DeviceRecordsPort } from '../../src/model/device-registry.js';
import { memoryStore, type DeviceStore } from '../../src/model/device-store.js';
import { deviceKey, type DeviceEntry } from '../../src/model/device-entry.js';

export function memoryRecords(remembered: DeviceEntry[] = []): DeviceRecordsPort & { entries: Map<string, DeviceEntry>; stores: Map<string, DeviceStore> } {
  const entries = new Map(remembered.map((device) => [deviceKey(device.kind, device.id), device]));
  const stores = new Map<string, DeviceStore>();
  return {
    entries,
    stores,
    remembered: () => [...entries.values()],
    setEntry: (device) => {
      entries.set(deviceKey(device.kind, device.id), device);
    },
    storeFor: (key) => {
      let store = stores.get(key);
      if (!store) {
        store = memoryStore();
        stores.set(key, store);
      }
      return store;
    },
    forget: (key) => {
      entries.delete(key);
      stores.delete(key);
    },
  };
}
