// Which devices exist, as pure rules: the config's devices, those the service lists, those cached
// from the last run, locks added or removed by membership callbacks, and hidden entries excluded.
import { mergeDevices, type DeviceSource, type DiscoveredDevices, type MergedDevices } from './discovery.js';
import type { LockAccessConfig } from '../config.js';
import { deviceKey, lockEntry, type DeviceEntry, type DeviceKind } from '../model/device-entry.js';

export type DeviceSetConfig = Pick<LockAccessConfig, 'locks' | 'doorbells' | 'discoverDevices'>;

/** Locks the user webhook added to or removed from the account while the plugin runs. */
export interface Membership {
  readonly added: ReadonlySet<string>;
  readonly removed: ReadonlySet<string>;
}

export const NO_MEMBERSHIP_CHANGES: Membership = { added: new Set(), removed: new Set() };

/** The service's view: the devices to show, where each is known from, and the service's lock names. */
export interface DiscoveredSet {
  devices: DeviceEntry[];
  sources: Map<string, DeviceSource>;
  serviceLockNames: Map<string, string>;
}

/** The merged devices' entries, without where each is known from. */
export function toWanted(merged: MergedDevices): DeviceEntry[] {
  return [...merged.locks, ...merged.doorbells].map(({ source: _source, ...entry }) => entry);
}

export function isHidden(config: DeviceSetConfig, kind: DeviceKind, id: string): boolean {
  const entries = kind === 'lock' ? config.locks : config.doorbells;
  return entries.some((e) => e.id === id && e.hidden);
}

/** Configured devices that are not hidden. */
export function configuredDevices(config: DeviceSetConfig): DeviceEntry[] {
  return toWanted(mergeDevices(config, undefined));
}

/**
 * What to serve before the service has been asked: the configured devices, plus (with discovery)
 * those remembered from the last run that the config neither lists nor hides.
 */
export function startupDevices(config: DeviceSetConfig, remembered: readonly DeviceEntry[]): DeviceEntry[] {
  const fromConfig = configuredDevices(config);
  if (!config.discoverDevices) return fromConfig;
  const known = new Set(fromConfig.map((d) => deviceKey(d.kind, d.id)));
  return [...fromConfig, ...remembered.filter((d) => !known.has(deviceKey(d.kind, d.id)) && !isHidden(config, d.kind, d.id))];
}

/** The service's lists merged with the config (config names and options win; hidden excluded). */
export function discoveredSet(config: DeviceSetConfig, discovered: DiscoveredDevices): DiscoveredSet {
  const merged = mergeDevices(config, discovered);
  return {
    devices: toWanted(merged),
    sources: new Map([...merged.locks.map((d) => [deviceKey('lock', d.id), d.source] as const), ...merged.doorbells.map((d) => [deviceKey('doorbell', d.id), d.source] as const)]),
    serviceLockNames: new Map(discovered.locks.flatMap((d) => (d.name === undefined ? [] : [[d.id, d.name] as const]))),
  };
}

/** A membership callback: the latest word about a lock wins. */
export function withMembershipChange(membership: Membership, lockId: string, change: 'added' | 'removed'): Membership {
  const added = new Set(membership.added);
  const removed = new Set(membership.removed);
  if (change === 'added') {
    removed.delete(lockId);
    added.add(lockId);
  } else {
    added.delete(lockId);
    removed.add(lockId);
  }
  return { added, removed };
}

/**
 * Removed locks leave; added locks join unless hidden or already there, named by the service when
 * it named them, else `Lock <id>`.
 */
export function applyMembership(devices: readonly DeviceEntry[], membership: Membership, config: DeviceSetConfig, serviceLockNames: ReadonlyMap<string, string>): DeviceEntry[] {
  const result = devices.filter((d) => !(d.kind === 'lock' && membership.removed.has(d.id)));
  for (const id of membership.added) {
    if (!result.some((d) => d.kind === 'lock' && d.id === id) && !isHidden(config, 'lock', id)) {
      result.push(lockEntry(id, serviceLockNames.get(id) ?? `Lock ${id}`));
    }
  }
  return result;
}
