// The devices of several accounts in one registry: one account's report sweeps none of another's,
// a shared device has one owner, and when the owner stops holding it the next holder takes over and its new
// owner is asked to register.
import { describe, expect, it } from 'vitest';

import { DeviceHoldings, type HeldRegistry } from '../../src/accounts/device-holdings.js';
import { lockEntry, type DeviceEntry } from '../../src/model/device-entry.js';
import type { DeviceHolding, DeviceOwnersFile } from '../../src/storage/device-owners.js';

function fakeRegistry(): HeldRegistry & { devices: Map<string, DeviceEntry> } {
  const devices = new Map<string, DeviceEntry>();
  return {
    devices,
    remembered: () => [...devices.values()],
    sync: (wanted, sweep) => {
      const keep = new Set(wanted.map((d) => d.id));
      for (const d of wanted) devices.set(d.id, d);
      if (sweep) for (const id of [...devices.keys()]) if (!keep.has(id)) devices.delete(id);
    },
    remove: (_kind, id) => devices.delete(id),
    lockIds: () => [...devices.keys()],
    doorbellIds: () => [],
  };
}

const noFile = { get: () => undefined, set: () => undefined } as unknown as DeviceOwnersFile;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** The owners file of the last run, in memory. */
function keptFile(devices: Record<string, DeviceHolding>): DeviceOwnersFile {
  let kept = devices;
  return { get: (key: string) => kept[key], set: (next: Record<string, DeviceHolding>) => { kept = next; } } as unknown as DeviceOwnersFile;
}

function holdingsOf(linked: Set<string>, listed: Record<string, { id: string; hidden: boolean; account?: string }[]> = {}, kept?: { owners: DeviceOwnersFile; started: Set<string>; devices: DeviceEntry[] }) {
  const registry = fakeRegistry();
  for (const device of kept?.devices ?? []) registry.devices.set(device.id, device);
  const changes: [string, string | undefined, string | undefined][] = [];
  const holdings = new DeviceHoldings({
    registry,
    order: ['main', 'cabin'],
    listed: (account) => ({ locks: listed[account] ?? [], doorbells: [] }),
    linked: (account) => linked.has(account),
    started: (account) => kept === undefined || kept.started.has(account),
    owners: kept?.owners ?? noFile,
    log: quiet,
    ownerChanged: (key, from, to) => changes.push([key, from, to]),
  });
  return { registry, holdings, changes };
}

describe('device holdings of several accounts', () => {
  it('one account\'s complete report sweeps none of another account\'s devices', () => {
    const { registry, holdings } = holdingsOf(new Set(['main', 'cabin']));
    holdings.report('main', [lockEntry('L1', 'Front')], true);
    holdings.report('cabin', [lockEntry('L2', 'Cabin')], true);
    holdings.report('main', [lockEntry('L1', 'Front')], true);
    expect([...registry.devices.keys()].sort()).toEqual(['L1', 'L2']);
    expect(holdings.owned('main', 'lock')).toEqual(['L1']);
    expect(holdings.owned('cabin', 'lock')).toEqual(['L2']);
  });

  it('a shared lock is one device with one owner (the first holder), and hidden in any entry hides it', () => {
    const { registry, holdings } = holdingsOf(new Set(['main', 'cabin']));
    holdings.report('main', [lockEntry('S', 'Shed')], true);
    holdings.report('cabin', [lockEntry('S', 'Shed')], true);
    expect([...registry.devices.keys()]).toEqual(['S']);
    expect(holdings.ownerOf('lock', 'S')).toBe('main');
    expect(holdings.owned('cabin', 'lock')).toEqual([]);
    const hidden = holdingsOf(new Set(['main', 'cabin']), { cabin: [{ id: 'S', hidden: true }] });
    hidden.holdings.report('main', [lockEntry('S', 'Shed')], true);
    hidden.holdings.report('cabin', [], true);
    expect([...hidden.registry.devices.keys()]).toEqual([]);
  });

  it('handover: when the owner stops holding the lock, the next holder owns it and is asked to register it', () => {
    const linked = new Set(['main', 'cabin']);
    const { holdings, changes } = holdingsOf(linked);
    holdings.report('main', [lockEntry('S', 'Shed')], true);
    holdings.report('cabin', [lockEntry('S', 'Shed')], true);
    changes.length = 0;
    // The main account's own user was removed from the lock: it no longer holds it.
    holdings.remove('main', 'lock', 'S');
    expect(holdings.ownerOf('lock', 'S')).toBe('cabin');
    expect(changes).toEqual([['lock:S', 'main', 'cabin']]);
    expect(holdings.owned('cabin', 'lock')).toEqual(['S']);
    // The old owner's registration goes only once the new owner has its own, even though it holds the lock no more.
    expect(holdings.owned('main', 'lock')).toEqual(['S']);
    holdings.registered('cabin', ['lock:S']);
    expect(holdings.owned('main', 'lock')).toEqual([]);
    expect(changes.at(-1)).toEqual(['lock:S', 'main', undefined]);
  });

  it('unlink: the leaving account keeps its own devices until it has left, and a run under way then brings none of them back until it is linked again', async () => {
    const linked = new Set(['main', 'cabin']);
    const { registry, holdings, changes } = holdingsOf(linked);
    holdings.report('main', [lockEntry('L1', 'Front'), lockEntry('S', 'Shed')], true);
    holdings.report('cabin', [lockEntry('L2', 'Cabin'), lockEntry('S', 'Shed')], true);
    holdings.remove('main', 'lock', 'S');
    holdings.registered('cabin', ['lock:S']);
    changes.length = 0;
    const leaving = holdings.leave('cabin', 60_000);
    // Shed goes to the main account first; Cabin's own lock stays Cabin's, so its registration is deleted only by the unlink.
    holdings.report('main', [lockEntry('L1', 'Front'), lockEntry('S', 'Shed')], true);
    expect(holdings.ownerOf('lock', 'S')).toBe('main');
    expect(holdings.ownerOf('lock', 'L2')).toBe('cabin');
    expect(changes).toEqual([['lock:S', 'cabin', 'main']]);
    // Cabin's run under way reports while it leaves: nothing changes.
    holdings.report('cabin', [lockEntry('L2', 'Cabin'), lockEntry('S', 'Shed')], true);
    holdings.registered('main', ['lock:S']);
    await leaving;
    expect([...registry.devices.keys()].sort()).toEqual(['L1', 'S']);
    linked.delete('cabin');
    holdings.report('cabin', [lockEntry('L2', 'Cabin'), lockEntry('S', 'Shed')], true);
    expect([...registry.devices.keys()].sort()).toEqual(['L1', 'S']);
    // Linked again: its report counts.
    linked.add('cabin');
    holdings.rejoin('cabin');
    holdings.report('cabin', [lockEntry('L2', 'Cabin'), lockEntry('S', 'Shed')], true);
    expect([...registry.devices.keys()].sort()).toEqual(['L1', 'L2', 'S']);
    expect(holdings.ownerOf('lock', 'L2')).toBe('cabin');
  });

  it('after a restart the owner kept in storage stays the owner while it holds the lock, even when another holder reports first', () => {
    const started = new Set(['main']);
    const linked = new Set(['main']);
    const { holdings, changes } = holdingsOf(linked, {}, { owners: keptFile({ 'lock:S': { owner: 'cabin', holders: ['main', 'cabin'] } }), started, devices: [lockEntry('S', 'Shed')] });
    holdings.report('main', [lockEntry('S', 'Shed')], true);
    // Cabin's tokens have not started: nothing moves, and the main account registers nothing of it.
    expect(holdings.owned('main', 'lock')).toEqual([]);
    started.add('cabin');
    linked.add('cabin');
    holdings.relink();
    holdings.report('cabin', [lockEntry('S', 'Shed')], true);
    expect(holdings.ownerOf('lock', 'S')).toBe('cabin');
    expect(holdings.owned('cabin', 'lock')).toEqual(['S']);
    expect(changes.filter(([, , to]) => to === 'main')).toEqual([]);
  });

  it('handover: the owner\'s entry for the lock left the config (restarted): the next holder owns it and registers first, the old owner keeps its registration until then', () => {
    const started = new Set(['main', 'cabin']);
    const { holdings, changes } = holdingsOf(new Set(['main', 'cabin']), {}, { owners: keptFile({ 'lock:S': { owner: 'cabin', holders: ['main', 'cabin'] } }), started, devices: [lockEntry('S', 'Shed')] });
    holdings.report('main', [lockEntry('S', 'Shed')], true);
    holdings.report('cabin', [], true);
    expect(holdings.ownerOf('lock', 'S')).toBe('main');
    expect(changes).toEqual([['lock:S', 'cabin', 'main']]);
    expect(holdings.owned('main', 'lock')).toEqual(['S']);
    expect(holdings.owned('cabin', 'lock')).toEqual(['S']);
    holdings.registered('main', ['lock:S']);
    expect(holdings.owned('cabin', 'lock')).toEqual([]);
    expect(changes.at(-1)).toEqual(['lock:S', 'cabin', undefined]);
  });
});
