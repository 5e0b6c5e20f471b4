// An in-memory stand-in for Homebridge 2's Matter server behind `api.matter`, with its measured
// quirks (matter-facts.md): registration happens after the call resolves, a failed endpoint only
// leaves nothing behind, state updates and switch presses are recorded in order. The real server is
// exercised end to end in test/e2e/matter.test.ts; this one lets the plugin's rules be unit-tested.
import type { API, MatterAPI, MatterAccessory } from 'homebridge';

export class FakeFailure extends Error {
  readonly code = 1;
}

export interface FakeCall {
  kind: 'register' | 'unregister' | 'update' | 'switch' | 'cache';
  uuid: string;
  label?: string;
  cluster?: string;
  attributes?: Record<string, unknown>;
  action?: string;
}

export class FakeMatter {
  readonly calls: FakeCall[] = [];
  /** Registered endpoints by UUID (what getAccessoryState can see). */
  readonly endpoints = new Map<string, MatterAccessory>();
  /** Labels whose registration fails silently, as an invalid endpoint does in Homebridge. */
  readonly failing = new Set<string>();
  /** Make registerPlatformAccessories reject (as while Homebridge's Matter server is still starting). */
  rejectRegistrations: Error | undefined;
  /** Milliseconds a registration takes to show up after the call resolved. */
  registrationDelayMs = 5;

  constructor(private readonly api: API) {}

  get matter(): MatterAPI {
    const deviceTypes = new Proxy({}, { get: (_target, name) => ({ name: String(name) }) });
    const fake: Partial<MatterAPI> = {
      uuid: this.api.hap.uuid,
      deviceTypes: deviceTypes as MatterAPI['deviceTypes'],
      status: { Failure: FakeFailure } as unknown as MatterAPI['status'],
      registerPlatformAccessories: async (_plugin, _platform, accessories) => {
        if (this.rejectRegistrations) throw this.rejectRegistrations;
        for (const accessory of accessories) {
          this.calls.push({ kind: 'register', uuid: accessory.UUID, label: accessory.displayName });
          if (this.failing.has(accessory.displayName)) continue;
          setTimeout(() => {
            this.endpoints.set(accessory.UUID, accessory);
          }, this.registrationDelayMs);
        }
        await Promise.resolve();
      },
      unregisterPlatformAccessories: async (_plugin, _platform, accessories) => {
        for (const accessory of accessories) {
          this.calls.push({ kind: 'unregister', uuid: accessory.UUID, label: accessory.displayName });
          this.endpoints.delete(accessory.UUID);
        }
        await Promise.resolve();
      },
      updatePlatformAccessories: async (accessories) => {
        for (const accessory of accessories) this.calls.push({ kind: 'cache', uuid: accessory.UUID, label: accessory.displayName });
        await Promise.resolve();
      },
      updateAccessoryState: async (uuid: string, cluster: string, attributes: Record<string, unknown>) => {
        if (!this.endpoints.has(uuid)) throw new Error(`Accessory ${uuid} not found or not registered`);
        this.calls.push({ kind: 'update', uuid, cluster, attributes });
        await Promise.resolve();
      },
      getAccessoryState: async (uuid: string, cluster: string) => {
        await Promise.resolve();
        const accessory = this.endpoints.get(uuid);
        return accessory ? (accessory.clusters?.[cluster] ?? {}) : undefined;
      },
      switch: {
        emit: async (uuid: string, action: 'press' | 'release') => {
          this.calls.push({ kind: 'switch', uuid, action });
          await Promise.resolve();
        },
        emitGesture: async () => {
          await Promise.resolve();
        },
      },
    };
    return fake as MatterAPI;
  }

  /** An API object whose bridge runs Matter: the real Homebridge API with Matter switched on. */
  apiWithMatter(enabled = true): API {
    const matter = this.matter;
    // Homebridge's `matter` is a getter on its prototype: define own properties over it.
    return Object.create(this.api, {
      matter: { value: matter },
      isMatterEnabled: { value: () => enabled },
    }) as API;
  }

  /** A cached endpoint as Homebridge hands it to configureMatterAccessory. */
  static cached(accessory: MatterAccessory): MatterAccessory {
    return JSON.parse(JSON.stringify({ ...accessory, handlers: undefined })) as MatterAccessory;
  }

  updates(uuid?: string): FakeCall[] {
    return this.calls.filter((c) => c.kind === 'update' && (uuid === undefined || c.uuid === uuid));
  }

  of(kind: FakeCall['kind']): FakeCall[] {
    return this.calls.filter((c) => c.kind === kind);
  }
}
