// Upgrade with Matter on, in process: a config without `accounts`, then the same config with an
// extra account added (restarted on the same storage, with what Homebridge cached), keeps the main
// account's Matter endpoints (UUIDs, serial numbers, labels) and HomeKit accessories; a device the
// new account shares is still one endpoint. Homebridge's Matter server is the in-memory stand-in of
// the Matter unit tests; the endpoints' ids are made by the plugin.
import type { MatterAccessory } from 'homebridge';
import { describe, expect, it } from 'vitest';

import { startPlugin } from '../../src/runtime/start-plugin.js';
import { restart } from '../homekit/hap-env.js';
import { FakeMatter } from '../matter/fake-matter.js';
import { simAccountEntry } from '../sim/plugin-config.js';
import { pluginBed, waitFor } from './plugin-bed.js';

const endpointIds = (fake: FakeMatter) => [...fake.endpoints.values()]
  .map((endpoint: MatterAccessory) => ({ uuid: endpoint.UUID, serial: endpoint.serialNumber, label: endpoint.displayName }))
  .sort((a, b) => a.label.localeCompare(b.label));

describe('several accounts: migration with Matter on', () => {
  const bed = pluginBed('accounts-matter', {
    accounts: [{ id: 'cabin', name: 'Cabin' }],
    locks: [{ id: 'L1', name: 'Front Door' }, { id: 'SHARED', name: 'Shed', accounts: ['main', 'cabin'] }, { id: 'L2', name: 'Cabin Door', accounts: ['cabin'] }],
    doorbells: [{ id: 'B1', name: 'Front Bell' }],
  });

  it('a config without accounts, restarted with an extra account added, keeps the main account\'s Matter endpoints (UUID, serial, label) and accessories; the shared lock stays one endpoint', async () => {
    const config = { userWebhook: false, refreshStateOnStart: false };
    let fake: FakeMatter | undefined;
    const before = bed.homebridge({ config, api: (api) => (fake = new FakeMatter(api)).apiWithMatter() });
    const first = fake;
    if (first === undefined) throw new Error('the first start has its Matter server');
    if (!await startPlugin(before.context)) throw new Error('the plugin should have started');
    await waitFor(() => ['Front Door', 'Shed', 'Front Bell', 'Front Bell Motion'].every((label) => endpointIds(first).some((e) => e.label === label)));
    await waitFor(() => bed.sim.registrations().length === 3);
    const upgraded = endpointIds(first);
    const accessories = before.registered.map((a) => a.displayName).sort();
    await before.shutdown.run();

    const after = bed.homebridge({
      config: { ...config, accounts: [simAccountEntry(bed.sim, 'cabin')] },
      cachedAccessories: before.registered.map((accessory) => restart(before.api, accessory)),
      cachedMatter: [...first.endpoints.values()].map((endpoint) => FakeMatter.cached(endpoint)),
      api: (api) => (fake = new FakeMatter(api)).apiWithMatter(),
    });
    const second = fake;
    if (second === undefined || second === first) throw new Error('the second start has its own Matter server');
    if (!await startPlugin(after.context)) throw new Error('the plugin should have started again');
    await waitFor(() => endpointIds(second).some((e) => e.label === 'Cabin Door'));
    await waitFor(() => upgraded.every((endpoint) => second.endpoints.has(endpoint.uuid)));
    // The main account's endpoints as they were; the new account's own lock is the one endpoint more.
    expect(endpointIds(second).filter((e) => e.label !== 'Cabin Door')).toEqual(upgraded);
    expect(second.of('unregister')).toEqual([]);
    // The HomeKit accessories were adopted from the cache: only Cabin's own lock is new.
    expect(after.registered.map((a) => a.displayName)).toEqual(['Cabin Door']);
    expect(accessories).toEqual(['Front Bell', 'Front Door', 'Shed']);
  });
});
